"""Where a request stands in its document, in bounded windows of the text: enough to post-process an answer there,
and to tell whether a later request stands at the same place with some text typed since (`typed_since`)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Optional

from agent_lsp.completions.postprocess import Surroundings, indent_unit

WINDOW = 2048
"""Characters kept on each side of the cursor (and of its line) to recognise the same place later."""
LINES_AFTER = 12
"""Lines after the cursor's line that post-processing looks at (the block's end, repeats)."""


@dataclass(frozen=True)
class Place:
    """A cursor in a document version: the offset, the document's length, and the windows around it."""

    uri: str
    version: Optional[int]
    offset: int
    length: int
    before: str
    """Up to WINDOW characters before the cursor."""
    after: str
    """Up to WINDOW characters after the cursor."""
    line_before: str
    line_after: str
    lines_after: tuple[str, ...]
    text_follows: bool
    indent_hint: Optional[str] = None
    """The indentation unit the client says the buffer uses (Copilot's `formattingOptions`)."""

    @cached_property
    def indent(self) -> str:
        """How the buffer indents (a tab, or N spaces): the client's word, else the lines around the cursor — the
        cursor's own among them, even when it holds only its indentation (never the model's way)."""
        if self.indent_hint is not None:
            return self.indent_hint
        before, after = self.before.split("\n"), self.after.split("\n")
        cursor = before[-1] + after[0]
        lines = [*before[:-1], cursor if cursor.strip() else cursor + "x", *after[1:]]
        cut = len(self.before) < self.offset  # the window's first line may start mid-line: its indentation unknown
        return indent_unit(lines[1:] if cut else lines)

    def surroundings(self, max_lines: int) -> Surroundings:
        """What post-processing needs of this place."""
        return Surroundings(line_before=self.line_before, line_after=self.line_after, lines_after=self.lines_after,
                            indent=self.indent, max_lines=max_lines, text_follows=self.text_follows)

    def typed_since(self, origin: "Place") -> Optional[str]:
        """The text typed at `origin`'s cursor to reach this place ("" for the same place); None when this place
        is not `origin`'s cursor with text inserted there (another document, a move, an edit elsewhere nearby)."""
        k = self.offset - origin.offset
        if self.uri != origin.uri or k < 0 or self.length - origin.length != k or k > len(self.before):
            return None
        if self.after != origin.after:
            return None
        kept = len(self.before) - k  # what this window holds of the text before origin's cursor
        common = min(kept, len(origin.before))
        if self.before[kept - common:kept] != origin.before[len(origin.before) - common:]:
            return None
        return self.before[kept:]


def place_at(uri: str, version: Optional[int], text: str, offset: int, indent: Optional[str] = None) -> Place:
    """The place at character `offset` of `text`; `indent` is the unit the client says the buffer uses, if it does."""
    line_start = text.rfind("\n", 0, offset) + 1
    line_end = text.find("\n", offset)
    line_end = len(text) if line_end < 0 else line_end
    line_before = text[max(line_start, offset - WINDOW):offset]
    line_after = text[offset:min(line_end, offset + WINDOW)].rstrip("\r")
    after = text[offset: offset + WINDOW]
    following = after[line_end - offset + 1:].split("\n", LINES_AFTER)[:LINES_AFTER] if line_end < len(text) else []
    return Place(uri=uri, version=version, offset=offset, length=len(text), before=text[max(0, offset - WINDOW):offset],
                 after=after, line_before=line_before, line_after=line_after,
                 lines_after=tuple(line.rstrip("\r") for line in following),
                 text_follows=bool(after.strip()) or (len(text) > offset + WINDOW and bool(text[offset:].strip())),
                 indent_hint=indent)
