"""The workspace's own settings files (.agent-lsp/settings.json, .mcp.json) at the LSP edge: what runs commands
or sends code elsewhere applies only once the user trusted it, asked once with window/showMessageRequest."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Optional

from lsprotocol import types

from agent_lsp.config import GATED, WORKSPACE_FILE, clean, read_workspace_file
from agent_lsp.lsp.server import AgentServer
from agent_lsp.sessions.mcp import MCP_JSON, read_mcp_json
from agent_lsp.sessions.trust import digest

if TYPE_CHECKING:
    from agent_lsp.lsp.handlers import Agent

log = logging.getLogger(__name__)


async def workspace_file_layer(ls: AgentServer, agent: "Agent", roots: list) -> dict[str, Any]:
    """The cleaned settings of the workspace's .agent-lsp/settings.json and the servers of its .mcp.json; the
    hooks, baseUrl and MCP servers only once the user trusted them (asked once through
    window/showMessageRequest, the answer kept per folder and content)."""
    if not roots:
        return {}
    root = roots[0]
    raw, warnings = read_workspace_file(root)
    servers, mcp_warnings = read_mcp_json(root)
    gated = {key: raw[key] for key in GATED if key in raw}
    if servers is not None:
        gated[MCP_JSON] = servers
    if gated:
        content = digest(gated)
        trusted = agent.trust.answer(root, content)
        if trusted is None:
            trusted = await ask_trust(ls, root, gated)
            if trusted is not None:
                agent.trust.record(root, content, trusted)
        if not trusted:
            raw = {key: value for key, value in raw.items() if key not in GATED}
            servers = None
    layer, problems = clean(raw, str(root / WORKSPACE_FILE))
    if servers is not None:
        more, mcp_problems = clean({"mcpServers": servers}, str(root / MCP_JSON))
        layer["mcp_servers"] = {**layer.get("mcp_servers", {}), **more.get("mcp_servers", {})}
        problems += mcp_problems
    ls.warn(warnings + mcp_warnings + problems)
    return layer


def _commands(gated: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The hook commands and the MCP servers (command line or URL) a workspace's files would run."""
    hooks = sorted({str(hook.get("command")) for groups in (gated.get("hooks") or {}).values()
                    if isinstance(groups, list) for group in groups if isinstance(group, dict)
                    for hook in (group.get("hooks") if "hooks" in group else [group]) if isinstance(hook, dict)})
    servers = [entry for key in ("mcpServers", MCP_JSON) if isinstance(gated.get(key), dict)
               for entry in gated[key].values() if isinstance(entry, dict)]
    return hooks, sorted({" ".join(map(str, [s.get("command", ""), *(s.get("args") or [])])).strip()
                          or str(s.get("url")) for s in servers})


async def ask_trust(ls: AgentServer, root, gated: dict[str, Any]) -> Optional[bool]:
    """Ask the user whether the workspace's files may run their commands; None when dismissed."""
    hooks, servers = _commands(gated)
    parts = [f"run hooks: {', '.join(f'`{c}`' for c in hooks)}"] if hooks else []
    if servers:
        parts.append(f"start MCP servers: {', '.join(f'`{c}`' for c in servers)}")
    if "baseUrl" in gated:
        parts.append(f"send your code to {gated['baseUrl']}")
    files = [str(root / WORKSPACE_FILE)] if set(gated) - {MCP_JSON} else []
    files += [str(root / MCP_JSON)] if MCP_JSON in gated else []
    message = (f"agent-lsp: {' and '.join(files)} {'asks' if len(files) == 1 else 'ask'} to {' and '.join(parts)}. "
               "Trust this workspace's settings? Until you do, they are ignored.")
    try:
        answer = await ls.window_show_message_request_async(types.ShowMessageRequestParams(
            type=types.MessageType.Warning, message=message,
            actions=[types.MessageActionItem(title="Trust"), types.MessageActionItem(title="Don't trust")]))
    except Exception as e:  # a client that cannot ask: nothing runs
        log.info("window/showMessageRequest for trust failed: %r", e)
        return None
    title = answer.get("title") if isinstance(answer, dict) else getattr(answer, "title", None)
    return {"Trust": True, "Don't trust": False}.get(title)
