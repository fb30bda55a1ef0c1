"""What the server advertises in `initialize` (PROTOCOL §1), as plain data: start-up imports no models."""

from typing import Any

from agent_lsp.config import PERMISSION_MODES

PROTOCOL_VERSION = 1
TOOL_NAMES = [
    "list_open_buffers",
    "read_file",
    "list_files",
    "search",
    "get_diagnostics",
    "edit_file",
    "write_file",
    "run_command",
    "todo_write",
    "task",
]
"""The names of `agent_lsp.tools.ALL`, in order (a test keeps the two equal)."""
FEATURES: list[str] = ["newSession", "acp", "revert", "persistentCheckpoints", "codeActions", "outputSchema", "hooks",
                       "memory", "models", "mcp", "tools", "languageFeatures",
                       "plan", "task", "commands", "webFetch", "images", "inlineCompletion", "skills",
                       "nextEdits"]
"""The protocol 1.1-1.4 additions this server has (PROTOCOL §8-§11), so a client can hide what is missing."""
LANGUAGE_METHODS = (
    "textDocument/definition", "textDocument/typeDefinition", "textDocument/implementation", "textDocument/references",
    "textDocument/hover", "textDocument/documentSymbol", "workspace/symbol", "textDocument/prepareCallHierarchy",
    "callHierarchy/incomingCalls", "callHierarchy/outgoingCalls", "textDocument/prepareRename", "textDocument/rename",
)
"""core.ports.LANGUAGE_METHODS, without importing the core at start-up (a test keeps the two equal)."""


def server_agent_capabilities() -> dict:
    """`capabilities.experimental.agent` of the initialize result."""
    return {"protocolVersion": PROTOCOL_VERSION, "tools": list(TOOL_NAMES), "permissionModes": list(PERMISSION_MODES),
            "features": list(FEATURES)}


def client_agent_capabilities(experimental: object) -> tuple[dict[str, Any], bool]:
    """The client's `experimental.agent`: its flags, the language methods it answers (`languageFeatures`, standard
    names only: unknown ones are left out), and whether what it sent was well-formed. `updates`: the client
    declared an `experimental.agent` object at all, so it shows `agent/update`; a client that declares none is a
    plain LSP client, shown each chat's answer with window/showMessage (and showDocument) instead."""
    agent = experimental.get("agent") if isinstance(experimental, dict) else None
    nothing = {"confirmTool": False, "diagnostics": False, "languageFeatures": [], "updates": False}
    if agent is None:
        return nothing, True
    if not isinstance(agent, dict):
        return nothing, False
    flags = {name: agent.get(name, False) for name in ("confirmTool", "diagnostics")}
    well_formed = all(isinstance(v, bool) for v in flags.values())
    caps: dict[str, Any] = {**{name: value is True for name, value in flags.items()}, "updates": True}
    methods = agent.get("languageFeatures", [])
    if isinstance(methods, list) and all(isinstance(m, str) for m in methods):
        caps["languageFeatures"] = [m for m in dict.fromkeys(methods) if m in LANGUAGE_METHODS]
    else:
        caps["languageFeatures"], well_formed = [], False
    return caps, well_formed
