"""What the server advertises in `initialize` (PROTOCOL §1), as plain data: start-up imports no models."""

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
FEATURES: list[str] = ["newSession", "acp", "revert", "codeActions", "outputSchema", "hooks", "memory", "models", "mcp", "tools", "plan", "task", "commands"]
"""The protocol 1.1 and 1.2 additions this server has (PROTOCOL §8, §9), so a client can hide what is missing."""


def server_agent_capabilities() -> dict:
    """`capabilities.experimental.agent` of the initialize result."""
    return {"protocolVersion": PROTOCOL_VERSION, "tools": list(TOOL_NAMES), "permissionModes": list(PERMISSION_MODES),
            "features": list(FEATURES)}


def client_agent_capabilities(experimental: object) -> tuple[dict[str, bool], bool]:
    """The client's `experimental.agent` flags, and whether what it sent was well-formed."""
    agent = experimental.get("agent") if isinstance(experimental, dict) else None
    if agent is None:
        return {"confirmTool": False, "diagnostics": False}, True
    if not isinstance(agent, dict):
        return {"confirmTool": False, "diagnostics": False}, False
    flags = {name: agent.get(name, False) for name in ("confirmTool", "diagnostics")}
    well_formed = all(isinstance(v, bool) for v in flags.values())
    return {name: value is True for name, value in flags.items()}, well_formed
