"""The workspace's own settings files (.agent-lsp/settings.json, .mcp.json): what runs commands, sends code elsewhere
or lets the agent act without asking applies only once the user trusted it (the question is asked once per folder
and content, by whichever front end the chat came through: LSP window/showMessageRequest, ACP
session/request_permission); its `sandbox` only ever turns the sandbox on or tightens it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Awaitable, Callable, Optional

from agent_lsp.config import GATED, WORKSPACE_FILE, clean, read_workspace_file
from agent_lsp.mcp.mcp_json import MCP_JSON, read_mcp_json
from agent_lsp.sessions.trust import Trust, digest

HANDS_OFF_MODES = {"acceptEdits": "edit files without asking", "bypassPermissions": "run every tool without asking"}
"""The permission modes a workspace's settings file sets only once trusted, and what the trust question says of them."""
AskTrust = Callable[[str], Awaitable[Optional[bool]]]
"""Ask the user the question given: True to trust, False not to, None when it was dismissed or cannot be asked."""


async def workspace_file_layer(root: Optional[Path], trust: Trust, ask: AskTrust) -> tuple[dict[str, Any], list[str]]:
    """The cleaned settings of the workspace's .agent-lsp/settings.json and the servers of its .mcp.json, with the
    gated keys (hooks, baseUrl, MCP and language servers, webFetch, a permissionMode that acts without asking) only
    once the user trusted them; and the warnings."""
    if root is None:
        return {}, []
    raw, warnings = read_workspace_file(root)
    servers, mcp_warnings = read_mcp_json(root)
    gated = {key: raw[key] for key in GATED if key in raw}
    mode = raw.get("permissionMode")
    if isinstance(mode, str) and mode in HANDS_OFF_MODES:  # a mode that acts without asking is the user's to allow
        gated["permissionMode"] = raw["permissionMode"]
    if servers is not None:
        gated[MCP_JSON] = servers
    if gated:
        if not await trust.decide(root, digest(gated), ask, trust_question(root, gated)):
            raw = {key: value for key, value in raw.items() if key not in gated}
            servers = None
    layer, problems = clean(raw, str(root / WORKSPACE_FILE))
    if layer.get("sandbox") is not None:  # it may turn the sandbox on, never off (PROTOCOL §10)
        from agent_lsp.config.sandbox import only_tightening

        layer["sandbox"], loosening = only_tightening(layer["sandbox"], str(root / WORKSPACE_FILE))
        problems += loosening
    if servers is not None:
        more, mcp_problems = clean({"mcpServers": servers}, str(root / MCP_JSON))
        layer["mcp_servers"] = {**layer.get("mcp_servers", {}), **more.get("mcp_servers", {})}
        problems += mcp_problems
    return layer, warnings + mcp_warnings + problems


def _hooks(gated: dict[str, Any]) -> list[str]:
    """The hook commands a workspace's settings file would run."""
    return sorted({str(hook.get("command")) for groups in (gated.get("hooks") or {}).values()
                   if isinstance(groups, list) for group in groups if isinstance(group, dict)
                   for hook in (group.get("hooks") if "hooks" in group else [group]) if isinstance(hook, dict)})


def _servers(gated: dict[str, Any], keys: tuple[str, ...]) -> list[str]:
    """The servers (command line or URL) the entries under `keys` would start."""
    return sorted({_command_line(entry) for key in keys if isinstance(gated.get(key), dict)
                   for entry in gated[key].values() if isinstance(entry, dict)})


def _command_line(server: dict[str, Any]) -> str:
    command = server.get("command", "")
    words = command if isinstance(command, list) else [command, *(server.get("args") or [])]
    return " ".join(map(str, words)).strip() or str(server.get("url"))


def trust_question(root: Path, gated: dict[str, Any]) -> str:
    """What the user is asked: which files, and the commands, servers and URL they would run or reach."""
    parts = []
    for what, commands in (("run hooks", _hooks(gated)), ("start MCP servers", _servers(gated, ("mcpServers", MCP_JSON))),
                           ("start language servers", _servers(gated, ("languageServers",)))):
        if commands:
            parts.append(f"{what}: {', '.join(f'`{c}`' for c in commands)}")
    if "baseUrl" in gated:
        parts.append(f"send your code to {gated['baseUrl']}")
    if "webFetch" in gated:
        parts.append(f"set where web_fetch may go (`webFetch`: {json.dumps(gated['webFetch'])})")
    if "permissionMode" in gated:
        parts.append(f"{HANDS_OFF_MODES[gated['permissionMode']]} (`permissionMode`: {gated['permissionMode']})")
    files = [str(root / WORKSPACE_FILE)] if set(gated) - {MCP_JSON} else []
    files += [str(root / MCP_JSON)] if MCP_JSON in gated else []
    return (f"agent-lsp: {' and '.join(files)} {'asks' if len(files) == 1 else 'ask'} to {' and '.join(parts)}. "
            "Trust this workspace's settings? Until you do, they are ignored.")
