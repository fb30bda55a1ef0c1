"""agent-lsp: a coding agent served over the Language Server Protocol."""

__version__ = "0.2.0"
DISTRIBUTION = "agent-lsp-server"
"""The name agent-lsp is installed by (`pipx install agent-lsp-server`); `serverInfo.name` and `--version` say it."""
