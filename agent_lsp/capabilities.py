"""What the server advertises in `initialize` (PROTOCOL §1), as plain data: start-up imports no models."""

from typing import Any

from agent_lsp.config import PERMISSION_MODES
from agent_lsp.core.language_methods import LANGUAGE_METHODS
from agent_lsp.tools import BUILTIN

PROTOCOL_VERSION = 1
FEATURES: list[str] = ["newSession", "acp", "revert", "persistentCheckpoints", "codeActions", "outputSchema", "hooks",
                       "memory", "models", "mcp", "tools", "languageFeatures",
                       "plan", "task", "commands", "webFetch", "images", "inlineCompletion", "skills", "memoryFile", "symbolEdits",
                       "impact", "nextEdits"]
"""The protocol 1.1-1.4 additions this server has (PROTOCOL §8-§11), so a client can hide what is missing."""


def server_agent_capabilities() -> dict:
    """`capabilities.experimental.agent` of the initialize result: the built-in tools, and the language methods
    the server may ask with `agent/languageFeature` (a client that declared `languageFeatures: true` answers
    these)."""
    return {"protocolVersion": PROTOCOL_VERSION, "tools": list(BUILTIN), "permissionModes": list(PERMISSION_MODES),
            "features": list(FEATURES), "languageMethods": list(LANGUAGE_METHODS)}


def client_agent_capabilities(experimental: object) -> tuple[dict[str, Any], bool]:
    """The client's `experimental.agent`: its flags, the language methods it answers (`languageFeatures`: standard
    names only, unknown ones are left out; `true`: all of them), and whether what it sent was well-formed. `updates`: the client
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
    if methods is True:  # every method the server lists in `languageMethods`
        caps["languageFeatures"] = list(LANGUAGE_METHODS)
    elif isinstance(methods, list) and all(isinstance(m, str) for m in methods):
        caps["languageFeatures"] = [m for m in dict.fromkeys(methods) if m in LANGUAGE_METHODS]
    else:
        caps["languageFeatures"], well_formed = [], False
    return caps, well_formed
