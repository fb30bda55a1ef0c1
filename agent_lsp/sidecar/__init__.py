"""Language servers agent-lsp runs itself (the `languageServers` setting): the LanguageFeatures port for clients
that cannot answer `agent/languageFeature`. An adapter at the edge, like lsp/: it speaks LSP through pygls's
client."""

from agent_lsp.sidecar.features import SidecarLanguageFeatures
from agent_lsp.sidecar.pool import SidecarPool

__all__ = ["SidecarLanguageFeatures", "SidecarPool"]
