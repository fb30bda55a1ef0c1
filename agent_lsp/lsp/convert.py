"""Translators between LSP shapes and agent-lsp's own (every function starts with `lsp_`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from agent_lsp.core.ports import Diagnostic, TextEdit
from agent_lsp.core.positions import encoding_name, position_at, to_chars

SEVERITIES = {1: "error", 2: "warning", 3: "information", 4: "hint"}


def lsp_encoding(server: Any) -> str:
    """The position encoding negotiated with the client (UTF-16 unless it chose another)."""
    return encoding_name(server.workspace.position_encoding)


def lsp_diagnostic(path: Path, raw: dict[str, Any], lines: Optional[list[str]] = None,
                   encoding: str = "utf-16") -> Diagnostic:
    """A core diagnostic from an LSP Diagnostic dict (0-based → 1-based, column in characters). `lines` are the
    document's, to count the column in characters whatever position encoding was negotiated."""
    start = raw.get("range", {}).get("start", {})
    line, character = int(start.get("line", 0)), int(start.get("character", 0))
    if lines is not None and 0 <= line < len(lines):
        character = to_chars(lines[line], character, encoding)
    return Diagnostic(
        path=path,
        line=line + 1,
        column=character + 1,
        severity=SEVERITIES.get(raw.get("severity") or 1, "error"),
        message=str(raw.get("message", "")).strip(),
        source=raw.get("source"),
    )


def lsp_text_edits(text: str, edits: list[TextEdit], encoding: str) -> list[dict[str, Any]]:
    """LSP TextEdits for character-offset edits computed on `text`."""
    return [{"range": {"start": position_at(text, e.start, encoding), "end": position_at(text, e.end, encoding)},
             "newText": e.new_text} for e in edits]
