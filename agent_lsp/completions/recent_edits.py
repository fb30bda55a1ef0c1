"""The user's recent edits across the open documents (PROTOCOL §11): what next-edit suggestions show the model as
unified diffs (the latest last, each file named, coalesced, bounded) and the latest change of each document (an
edit that takes it back is not offered). Keeps references to the documents' texts, which pygls keeps anyway: no
copy while nothing changes."""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from typing import Callable, Optional

from agent_lsp.completions.next_edit import Change

EVENTS = 6
"""Groups of edits kept (Zed keeps 6)."""
NEAR = 4
"""Characters around the end of the group's last change within which the next change still joins it (typing on,
deleting back, an editor's closing bracket typed over, a word typed over key by key); a change elsewhere (a jump,
even a line away) begins a new group, so that a rename after typing is an edit of its own."""
PAUSE = 1.0
"""Seconds without a change after which the next change of a document begins a new group."""
DIFF_LINES = 40
"""The most lines of each side of one group's diff."""
DIFF_CHARS = 4000
"""The most characters of all diffs together (the oldest are left out first)."""
CONTEXT = 2
"""Unchanged lines around a group's change in its diff."""


@dataclass
class _Group:
    """Consecutive changes of one document: its text before the first and after the last."""

    uri: str
    before: str
    after: str
    at: float
    cursor: int
    """Where its last change ended, in `after`."""


class RecentEdits:
    """The edits since the documents were opened, fed by `opened`, `changed` and `closed`."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._texts: dict[str, str] = {}
        self._groups: deque[_Group] = deque(maxlen=EVENTS)
        self._clock = clock

    def opened(self, uri: str, text: str) -> None:
        self._texts[uri] = text

    def closed(self, uri: str) -> None:
        self._texts.pop(uri, None)
        for group in [g for g in self._groups if g.uri == uri]:
            self._groups.remove(group)

    def changed(self, uri: str, text: str) -> None:
        """`uri` now holds `text` (a document never seen opened starts its history here)."""
        old = self._texts.get(uri)
        self._texts[uri] = text
        if old is None or old == text:
            return
        start, old_end, new_end = _changed_span(old, text)
        now = self._clock()
        group = self._groups[-1] if self._groups else None
        if group is not None and group.uri == uri and now - group.at < PAUSE and \
                _near(text, group.cursor, start, old_end):
            group.after, group.at, group.cursor = text, now, new_end
            return
        self._groups.append(_Group(uri, old, text, now, new_end))

    def latest(self, uri: str) -> Optional[Change]:
        """The last group of changes of `uri` as one change of its current text (None: none since it opened, or
        the document changed in another way since)."""
        for group in reversed(self._groups):
            if group.uri == uri:
                if self._texts.get(uri) is not group.after and self._texts.get(uri) != group.after:
                    return None
                start, old_end, new_end = _changed_span(group.before, group.after)
                return Change(start, group.before[start:old_end], group.after[start:new_end])
        return None

    def diffs(self, name: Callable[[str], Optional[str]]) -> tuple[str, ...]:
        """The groups as unified diffs, the latest last, within DIFF_CHARS; `name(uri)` is the path shown, None
        for a document never to be sent (excluded)."""
        out: list[str] = []
        used = 0
        for group in reversed(self._groups):
            path = name(group.uri)
            if path is None:
                continue
            diff = unified_diff(path, group.before, group.after)
            if diff is None:
                continue
            if used + len(diff) > DIFF_CHARS:
                break
            used += len(diff)
            out.append(diff)
        return tuple(reversed(out))


def unified_diff(path: str, before: str, after: str) -> Optional[str]:
    """One hunk, whole lines, CONTEXT lines around; None when nothing changed or a side has more than DIFF_LINES
    lines."""
    if before == after:
        return None
    old_lines, new_lines = before.split("\n"), after.split("\n")
    head = 0
    while head < min(len(old_lines), len(new_lines)) and old_lines[head] == new_lines[head]:
        head += 1
    tail = 0
    while tail < min(len(old_lines), len(new_lines)) - head and old_lines[-1 - tail] == new_lines[-1 - tail]:
        tail += 1
    removed, added = old_lines[head:len(old_lines) - tail], new_lines[head:len(new_lines) - tail]
    if len(removed) > DIFF_LINES or len(added) > DIFF_LINES:
        return None
    above = old_lines[max(0, head - CONTEXT):head]
    below = old_lines[len(old_lines) - tail:len(old_lines) - tail + CONTEXT]
    first = head - len(above) + 1
    old_count, new_count = len(above) + len(removed) + len(below), len(above) + len(added) + len(below)
    body = [f" {line}" for line in above] + [f"-{line}" for line in removed] + [f"+{line}" for line in added] + \
           [f" {line}" for line in below]
    return "\n".join([f"--- a/{path}", f"+++ b/{path}", f"@@ -{first},{old_count} +{first},{new_count} @@", *body])


def _near(text: str, cursor: int, start: int, old_end: int) -> bool:
    """Whether a change from `start` to `old_end` continues a group whose last change ended at `cursor`: it reaches
    back to within NEAR of it, or begins at most NEAR after it on the same line. The texts alone place a change
    ambiguously: a word selected and typed over ("count" by "t", then "ally") reads as "coun" deleted, its end
    before the "t" the next key types after."""
    if start <= cursor:
        return old_end >= cursor - NEAR
    return start - cursor <= NEAR and "\n" not in text[cursor:start]


def _changed_span(old: str, new: str) -> tuple[int, int, int]:
    """(start, end in old, end in new) of the stretch where `old` and `new` differ."""
    limit = min(len(old), len(new))
    start = _common_prefix(old, new, limit)
    tail = _common_prefix(old[start:][::-1], new[start:][::-1], limit - start)
    return start, len(old) - tail, len(new) - tail


def _common_prefix(a: str, b: str, limit: int) -> int:
    """The length of the common start of `a` and `b` (at most `limit`), by halving slices (C-speed compares)."""
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low
