"""The text a language server sees of each document, the lines its positions are converted against (the
conversion itself: core/positions.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Optional

from agent_lsp.core.paths import uri_to_path
from agent_lsp.core.positions import split_lines


class Texts:
    """The text of each document as the language server sees it: what it was sent, else the file on disk (read on
    first need, once)."""

    def __init__(self, sent: Mapping[Path, str]) -> None:
        self._sent = dict(sent)
        self._lines: dict[Path, list[str]] = {}

    def line(self, uri: Optional[str], number: int) -> str:
        """Line `number` of the document `uri` ("" when there is no such line or file)."""
        path = uri_to_path(uri) if uri else None
        if path is None:
            return ""
        lines = self._lines.get(path)
        if lines is None:
            text = self._sent.get(path)
            if text is None:
                try:
                    text = path.read_text(encoding="utf-8", errors="replace")
                except (OSError, UnicodeError, ValueError):  # a name no file can have (a lone surrogate, a NUL)
                    text = ""
            lines = self._lines[path] = split_lines(text)
        return lines[number] if 0 <= number < len(lines) else ""
