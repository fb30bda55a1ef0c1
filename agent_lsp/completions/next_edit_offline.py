"""Next edits with no network (PROTOCOL §11 "Offline"): the demo model carries a rename on. After the user replaced
a word A by B on a line (the latest of the recent edits), the next line of the editable window that still has A
as a word gets A replaced by B there."""

from __future__ import annotations

import re
from typing import AsyncIterator, Optional

from agent_lsp.completions.next_edit import END, START, NextEditPrompt

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class DemoNextEditor:
    """Answers the window rewritten with the rename carried on one line further (nothing when there is none)."""

    name = "demo"

    async def complete(self, prompt: NextEditPrompt) -> AsyncIterator[str]:
        window = prompt.window
        renamed = _renamed(prompt.events[-1]) if prompt.events else None
        if window is None or renamed is None:
            return
        old, new = renamed
        lines = window.old.split("\n")
        cursor_line = window.text.count("\n", window.start, window.cursor)
        order = list(range(cursor_line + 1, len(lines))) + list(range(cursor_line - 1, -1, -1))
        word = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(old)}(?![A-Za-z0-9_])")
        for n in order:
            if word.search(lines[n]):
                lines[n] = word.sub(new, lines[n])
                yield START + "\n" + "\n".join(lines) + "\n" + END
                return


def _renamed(diff: str) -> Optional[tuple[str, str]]:
    """(A, B) when the diff's change replaced one word A by B on a line, and nothing else there."""
    removed = [line[1:] for line in diff.split("\n")[3:] if line.startswith("-")]
    added = [line[1:] for line in diff.split("\n")[3:] if line.startswith("+")]
    for before, after in zip(removed, added):
        a, b = re.split(r"([A-Za-z0-9_]+)", before), re.split(r"([A-Za-z0-9_]+)", after)
        if len(a) != len(b):
            continue
        changed = [(x, y) for x, y in zip(a, b) if x != y]
        if len(changed) == 1 and _WORD.fullmatch(changed[0][0]) and _WORD.fullmatch(changed[0][1]):
            return changed[0]
    return None
