"""A workspace's `.mcp.json`: its `mcpServers`, read as they are (the `mcpServers` setting's checks apply after)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MCP_JSON = ".mcp.json"


def read_mcp_json(root: Path) -> tuple[Any, list[str]]:
    """The raw `mcpServers` of `root`/.mcp.json (None when there is none), and a warning when it is unreadable."""
    path = root / MCP_JSON
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None, []
    except (OSError, ValueError) as e:
        return None, [f"agent-lsp: {path} cannot be read as JSON ({e}); its field `mcpServers` is ignored."]
    if not isinstance(raw, dict) or not isinstance(raw.get("mcpServers"), dict):
        return None, [f"agent-lsp: {path} must hold an object with the field `mcpServers`; it is ignored."]
    return raw["mcpServers"], []
