"""A workspace folder's own settings files (.agent-lsp/settings.json, .mcp.json): what runs commands, sends code
elsewhere or lets the agent act without asking is their trusted part, in force only once the user trusted the folder
(config/in_force.py asks); their `sandbox` only ever turns the sandbox on or tightens it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from agent_lsp.config import GATED, WORKSPACE_FILE, clean, read_workspace_file
from agent_lsp.config.mcp_json import MCP_JSON, read_mcp_json

HANDS_OFF_MODES = {"acceptEdits": "edit files without asking", "bypassPermissions": "run every tool without asking"}
"""The permission modes a workspace's settings file sets only once trusted, and what the trust question says of them."""
SUGGESTIONS = {"completions": "suggestions", "nextEdits": "next edits"}
"""The suggestion settings whose `baseUrl` is where they send the code around the cursor (gated as the chat's
`baseUrl` is, under the key `<section>.baseUrl`), and what the trust question calls them."""


@dataclass
class SettingsFiles:
    """A folder's settings files as read: the settings file's raw object, the .mcp.json servers (None: no file),
    what of them needs trust (`gated`: the gated keys, and the servers under ".mcp.json") and the reading's warnings."""

    root: Path
    raw: dict[str, Any]
    servers: Optional[dict[str, Any]]
    gated: dict[str, Any]
    warnings: list[str]

    def layer(self, trusted: bool) -> tuple[dict[str, Any], list[str]]:
        """The cleaned settings of both files, the gated ones only when `trusted`; and the problems found."""
        root = self.root
        raw = self.raw if trusted else {key: value for key, value in self.raw.items() if key not in self.gated}
        for section in SUGGESTIONS:
            if not trusted and f"{section}.baseUrl" in self.gated:
                raw[section] = {key: value for key, value in raw[section].items() if key != "baseUrl"}
        servers = self.servers if trusted else None
        layer, problems = clean(raw, str(root / WORKSPACE_FILE))
        if layer.get("sandbox") is not None:  # it may turn the sandbox on, never off (PROTOCOL §10)
            from agent_lsp.config.sandbox import only_tightening

            layer["sandbox"], loosening = only_tightening(layer["sandbox"], str(root / WORKSPACE_FILE))
            problems += loosening
        if servers is not None:
            more, mcp_problems = clean({"mcpServers": servers}, str(root / MCP_JSON))
            layer["mcp_servers"] = {**layer.get("mcp_servers", {}), **more.get("mcp_servers", {})}
            problems += mcp_problems
        return layer, problems

    def asks(self) -> str:
        """What the trust question says of them: which files, and the commands, servers and URL they would run or
        reach ("" when nothing needs trust)."""
        gated = self.gated
        if not gated:
            return ""
        parts = []
        for what, commands in (("run hooks", _hooks(gated)),
                               ("start MCP servers", _servers(gated, ("mcpServers", MCP_JSON))),
                               ("start language servers", _servers(gated, ("languageServers",)))):
            if commands:
                parts.append(f"{what}: {', '.join(f'`{c}`' for c in commands)}")
        if "baseUrl" in gated:
            parts.append(f"send your code to {gated['baseUrl']}")
        for section, name in SUGGESTIONS.items():
            if f"{section}.baseUrl" in gated:
                parts.append(f"send the code around your cursor to {gated[section + '.baseUrl']} for {name}")
        if "webFetch" in gated:
            parts.append(f"set where web_fetch may go (`webFetch`: {json.dumps(gated['webFetch'])})")
        if "permissionMode" in gated:
            parts.append(f"{HANDS_OFF_MODES[gated['permissionMode']]} (`permissionMode`: {gated['permissionMode']})")
        files = [str(self.root / WORKSPACE_FILE)] if set(gated) - {MCP_JSON} else []
        files += [str(self.root / MCP_JSON)] if MCP_JSON in gated else []
        return f"{' and '.join(files)} {'asks' if len(files) == 1 else 'ask'} to {' and '.join(parts)}"


def read_settings_files(root: Path) -> SettingsFiles:
    """`root`'s .agent-lsp/settings.json and .mcp.json, and what of them needs trust."""
    raw, warnings = read_workspace_file(root)
    servers, mcp_warnings = read_mcp_json(root)
    gated = {key: raw[key] for key in GATED if key in raw}
    mode = raw.get("permissionMode")
    if isinstance(mode, str) and mode in HANDS_OFF_MODES:  # a mode that acts without asking is the user's to allow
        gated["permissionMode"] = raw["permissionMode"]
    for section in SUGGESTIONS:
        if isinstance(raw.get(section), dict) and "baseUrl" in raw[section]:
            gated[f"{section}.baseUrl"] = raw[section]["baseUrl"]
    if servers is not None:
        gated[MCP_JSON] = servers
    return SettingsFiles(root, raw, servers, gated, warnings + mcp_warnings)


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
