"""Translators between LSP shapes and agent-lsp's own (every function starts with `lsp_`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional
from urllib.parse import unquote, urlparse

from agent_lsp.core.ports import Diagnostic

SEVERITIES = {1: "error", 2: "warning", 3: "information", 4: "hint"}


def lsp_uri_to_path(uri: str) -> Optional[Path]:
    """The file path of a file: URI; None for other schemes."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))


def lsp_diagnostic(path: Path, raw: dict[str, Any]) -> Diagnostic:
    """A core diagnostic from an LSP Diagnostic dict (0-based → 1-based)."""
    start = raw.get("range", {}).get("start", {})
    return Diagnostic(
        path=path,
        line=int(start.get("line", 0)) + 1,
        column=int(start.get("character", 0)) + 1,
        severity=SEVERITIES.get(raw.get("severity") or 1, "error"),
        message=str(raw.get("message", "")).strip(),
        source=raw.get("source"),
    )
