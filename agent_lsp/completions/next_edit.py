"""One next-edit suggestion (PROTOCOL §11), as plain text work: the editable window around the cursor, the prompt
with Zeta's markers (the user's recent edits as diffs, the text around the window), the model's answer read back
as the rewritten window, the one minimal edit it makes, the filters that drop an edit nobody wants, and a kept
rewrite (`Prediction`): followed as the user makes its changes, and the window as it leaves it."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional

START = "<|editable_region_start|>"
END = "<|editable_region_end|>"
CURSOR = "<|user_cursor_is_here|>"
CONTEXT_LINES = 20
"""Lines shown above and below the editable window (outside it: the model may read them, never change them)."""
CONTEXT_CHARS = 3000
"""The most characters of context on each side of the window."""
WINDOW_CHARS = 12_000
"""A window longer than this (minified text, a huge line) gets no suggestion."""
INSTRUCTIONS = (
    "You are a code completion assistant and your task is to analyze user edits and then rewrite an excerpt that "
    "the user provides, suggesting the appropriate edits within the excerpt, taking into account the cursor "
    "location.")
SYSTEM = (
    INSTRUCTIONS + " The excerpt's editable region lies between the lines " + START + " and " + END + ", and " +
    CURSOR + " marks the cursor. Answer with the editable region rewritten with the edit the user will most likely "
    "make next (carry their recent edit on: the other uses of a renamed name, the matching change elsewhere), between "
    "the same two marker lines, and nothing else. Keep every line you do not change exactly as it is. Do not undo "
    "the user's recent edits: never re-add code they deleted nor delete code they just typed. When nothing should "
    "change, answer the region unchanged.")
STOP = END
"""Where the model's answer ends (a stop sequence: the APIs leave it out of the text)."""
SETTING = "nextEdits"
"""The setting whose `timeout` bounds the wait (a provider's timeout message names it)."""


@dataclass(frozen=True)
class Window:
    """The editable window of a document version: whole lines, as offsets into the text, and the cursor."""

    text: str
    """The whole document (the version the request is about)."""
    start: int
    end: int
    """The end of the window's last line (before its line break)."""
    cursor: int

    @property
    def old(self) -> str:
        return self.text[self.start:self.end]


def window_at(text: str, offset: int, above: int, below: int) -> Optional[Window]:
    """The window of `above` lines above the cursor's line and `below` below it; None when it is too long."""
    start = text.rfind("\n", 0, offset) + 1
    for _ in range(above):
        if start == 0:
            break
        start = text.rfind("\n", 0, start - 1) + 1
    end = text.find("\n", offset)
    end = len(text) if end < 0 else end
    for _ in range(below):
        following = text.find("\n", end + 1) if end < len(text) else -1
        if end >= len(text):
            break
        end = len(text) if following < 0 else following
    if end - start > WINDOW_CHARS:
        return None
    return Window(text, start, end, offset)


@dataclass(frozen=True)
class NextEditPrompt:
    """What the model is asked: the recent edits (unified diffs, the latest last), and the excerpt of the cursor's
    file with the editable window between the markers."""

    path: str
    language_id: str
    events: tuple[str, ...]
    excerpt: str
    window_lines: int
    """How many lines the editable window has (the answer's size)."""
    excerpt_window: str = ""
    """The editable window's text as sent."""
    window: Optional[Window] = None
    """The window asked about (the demo model reads it; never sent as such)."""


# ---- the prompt as the suggestion providers send it (models/*_completer.py's `shape`) ----------------------------


def context_text(prompt: NextEditPrompt) -> str:
    """The user's edits (the part of the prompt that changes least)."""
    events = "\n\n".join(prompt.events) if prompt.events else "(none)"
    return f"### User Edits:\n\n{events}\n\n"


def hole_text(prompt: NextEditPrompt) -> str:
    """The excerpt with the editable window, and the place of the answer."""
    return f"### User Excerpt:\n\n{prompt.excerpt}\n\n### Response:\n"


def max_tokens(prompt: NextEditPrompt) -> int:
    """Room for the window rewritten, a few lines longer."""
    return min(4096, 64 + len(prompt.excerpt_window) // 2 + 16 * prompt.window_lines)


def chat_messages(prompt: NextEditPrompt) -> list[dict[str, str]]:
    """The prompt as OpenAI-compatible chat messages."""
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": context_text(prompt) + hole_text(prompt)}]


def fim_arguments(prompt: NextEditPrompt) -> dict:
    """The raw prompt for {baseUrl}/completions, as Zeta is trained on it: the instruction, the edits, the excerpt;
    no `suffix` (vLLM refuses one)."""
    return {"prompt": f"### Instruction:\n{INSTRUCTIONS}\n\n{context_text(prompt)}{hole_text(prompt)}",
            "stop": [STOP]}


def build_prompt(path: str, language_id: str, window: Window, events: tuple[str, ...]) -> NextEditPrompt:
    """The prompt for `window`, with up to CONTEXT_LINES lines (CONTEXT_CHARS characters) around it."""
    text = window.text
    before_start = window.start
    for _ in range(CONTEXT_LINES):
        if before_start == 0:
            break
        before_start = text.rfind("\n", 0, before_start - 1) + 1
    before = text[max(before_start, window.start - CONTEXT_CHARS):window.start]
    after_end = window.end
    for _ in range(CONTEXT_LINES):
        if after_end >= len(text):
            break
        following = text.find("\n", after_end + 1)
        after_end = len(text) if following < 0 else following
    after = text[window.end:min(after_end, window.end + CONTEXT_CHARS)]
    editable = text[window.start:window.cursor] + CURSOR + text[window.cursor:window.end]
    head = "<|start_of_file|>\n" if window.start == 0 and not before else ""
    excerpt = f"```{path}\n{head}{before}{START}\n{editable}\n{END}{after}\n```"
    return NextEditPrompt(path, language_id, events, excerpt, window.old.count("\n") + 1, editable, window)


def rewritten(answer: str) -> Optional[str]:
    """The window as the model rewrote it: between the markers when it has them (the end marker may have been a
    stop sequence), else the first fenced code block, else the whole answer; the cursor marker removed. None when
    the answer opens the region twice or closes it before opening it."""
    if START in answer:
        body = answer.split(START, 1)[1]
        if START in body:
            return None
        body = body.split(END, 1)[0]
        body = body[1:] if body.startswith("\n") else body
        body = body[:-1] if body.endswith("\n") else body
    elif END in answer:
        return None
    else:
        fenced = re.search(r"```[^\n]*\n(.*?)\n?```", answer, re.S)
        body = fenced.group(1) if fenced else answer.strip("\n")
    return body.replace(CURSOR, "")


@dataclass(frozen=True)
class Edit:
    """A replacement of text[start:end] by `text`, offsets into the document version asked about."""

    start: int
    end: int
    text: str


def minimal_edit(window: Window, new: str) -> Optional[Edit]:
    """The one edit that turns the window into `new`: the common prefix and suffix left out. None: no change."""
    return _trimmed(window.old, new, window.start)


def _changes(window: Window, new: str) -> list[Edit]:
    """The changes that turn the window into `new`, in order, each a minimal edit: lines changed one for one give
    a change per run of changed words (the uses of a renamed name, each its own); lines added or removed, one
    change per run of them. (What is offered is always the one edit covering them all: they only tell the user's
    own making of them apart from a departure.)"""
    return _diff(_lines(window.old), _lines(new), window.start, lambda old, new, at: _diff(
        _WORDS.findall(old), _WORDS.findall(new), at, None))


_WORDS = re.compile(r"\w+|\s+|[^\w\s]")


def _diff(old: list[str], new: list[str], at: int, within: Optional[Callable[[str, str, int], list[Edit]]]) \
        -> list[Edit]:
    """The changes from the pieces `old` (beginning at offset `at`) to the pieces `new`, a run of changed pieces
    each; a run that changes as many pieces as it has goes `within` each piece when given."""
    at_old = _starts(old)
    head = 0  # the pieces alike at both ends are no change (of two alike lines, the one that differs changed)
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    middle = difflib.SequenceMatcher(None, old[head:len(old) - tail], new[head:len(new) - tail], autojunk=False)
    out: list[Edit] = []
    for tag, i1, i2, j1, j2 in middle.get_opcodes():
        if tag == "equal":
            continue
        i1, i2, j1, j2 = i1 + head, i2 + head, j1 + head, j2 + head
        if within is not None and i2 - i1 == j2 - j1:
            for i, j in zip(range(i1, i2), range(j1, j2)):
                out += within(old[i], new[j], at + at_old[i])
            continue
        edit = _trimmed("".join(old[i1:i2]), "".join(new[j1:j2]), at + at_old[i1])
        if edit is not None:
            out.append(edit)
    return out


def _starts(lines: list[str]) -> list[int]:
    """Where each piece begins, and where the last ends."""
    out = [0]
    for line in lines:
        out.append(out[-1] + len(line))
    return out


def _lines(text: str) -> list[str]:
    """`text`'s lines, each with its line break."""
    lines = text.split("\n")
    return [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])


def _trimmed(old: str, new: str, at: int) -> Optional[Edit]:
    """`old` (at offset `at`) replaced by `new` as a minimal edit: the common prefix and suffix left out."""
    if old == new:
        return None
    limit = min(len(old), len(new))
    prefix = 0
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]:
        suffix += 1
    return Edit(at + prefix, at + len(old) - suffix, new[prefix:len(new) - suffix])


@dataclass(frozen=True)
class Prediction:
    """A rewritten window kept after it was asked for: `text` (the document's text it was made for) with its window
    [start, end) rewritten by `changes` (in order, offsets into `text`, each widened to whole words so that a word
    typed over key by key is known as the change being made)."""

    text: str
    start: int
    end: int
    changes: tuple[Edit, ...]


def predict(window: Window, new: str) -> Optional[Prediction]:
    """The rewrite of `window` into `new`, kept to follow; None when it changes nothing."""
    text, wide = window.text, []
    for edit in _changes(window, new):
        start, end = edit.start, edit.end
        while start > window.start and _word(text[start - 1]):
            start -= 1
        while end < window.end and _word(text[end]):
            end += 1
        wide.append(Edit(start, end, text[start:edit.start] + edit.text + text[edit.end:end]))
    return Prediction(text, window.start, window.end, tuple(wide)) if wide else None


def _word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def ahead(prediction: Prediction, text: str) -> Optional[list[Edit]]:
    """The prediction's changes the user has not made yet in `text`, as minimal edits of `text` in order; None when
    `text` departs from it: changed outside its window, or inside otherwise than by making some of its changes —
    each one whole, begun (its old text replaced by the start of its new one, or deleted back from its end), or
    not at all."""
    old = prediction.text
    delta = len(text) - len(old)
    start, end = prediction.start, prediction.end
    if end + delta < start or text[:start] != old[:start] or text[end + delta:] != old[end:]:
        return None
    return next(_walk(prediction, text, 0, start, start, end + delta), None)


def left_of(prediction: Prediction, window: Window) -> Optional[str]:
    """`window` (of a text that follows `prediction`) rewritten as the prediction leaves it: what the user has not
    made of it yet, made. None when the text departs from it, all of it is made, or some of what is left lies
    outside the window (the rewrite does not say how this window ends)."""
    left = ahead(prediction, window.text)
    if not left or any(e.start < window.start or e.end > window.end for e in left):
        return None
    old, out, at = window.text, [], window.start
    for edit in left:
        out += [old[at:edit.start], edit.text]
        at = edit.end
    return "".join(out) + old[at:window.end]


def _walk(p: Prediction, text: str, k: int, at_old: int, at: int, end: int) -> Iterator[list[Edit]]:
    """The ways text[at:end] is p.text[at_old:p.end] with p.changes[k:] each made, begun or not: the edits left."""
    if k == len(p.changes):
        if text[at:end] == p.text[at_old:p.end]:
            yield []
        return
    change = p.changes[k]
    same = p.text[at_old:change.start]
    if text[at:at + len(same)] != same:
        return
    at += len(same)
    old, new = p.text[change.start:change.end], change.text
    follows = p.text[change.end:p.changes[k + 1].start if k + 1 < len(p.changes) else p.end][:64]
    regions = [text[at:at + n] for n in range(min(max(len(old), len(new)), end - at) + 1)
               if text.startswith(follows, at + n)]
    for region in sorted((r for r in regions if _on_the_way(r, old, new)), key=lambda r: (r != new, r != old)):
        left = _trimmed(region, new, at)
        for rest in _walk(p, text, k + 1, change.end, at + len(region), end):
            yield ([left] if left is not None else []) + rest


def _on_the_way(region: str, old: str, new: str) -> bool:
    """Whether `region` is a change from `old` to `new` not made, made, or being made: `new` with a stretch still
    to type (typed over `old`, or into it), or `old` deleted back from its end."""
    if region in (old, new) or old.startswith(region) and region:
        return True
    if len(region) > len(new):
        return False
    prefix = len(_common(region, new))
    suffix = len(_common(region[::-1], new[::-1]))
    return prefix + suffix >= len(region)


def _common(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


@dataclass(frozen=True)
class Change:
    """The user's latest change of a document: text[start:start + len(inserted)] was `removed` before it."""

    start: int
    removed: str
    inserted: str


def refused(window: Window, new: str, edit: Optional[Edit], max_lines: int, latest: Optional[Change],
            dismissed: Any = ()) -> Optional[str]:
    """Why the edit is not offered ("unchanged", "whitespace", "insertion at the cursor", "outside the window",
    "too large", "rewrites the whole window", "undoes the latest change", "dismissed"), or None when it is."""
    if edit is None:
        return "unchanged"
    text = window.text
    old_span = text[edit.start:edit.end]
    if _squeezed(old_span) == _squeezed(edit.text):
        return "whitespace"
    cut = window.cursor - window.start
    old = window.old
    if len(new) > len(old) and new.startswith(old[:cut]) and new.endswith(old[cut:]):
        return "insertion at the cursor"  # ghost text: textDocument/inlineCompletion offers it
    if edit.start < window.start or edit.end > window.end:
        return "outside the window"
    if old_span.count("\n") + 1 > max_lines or edit.text.count("\n") + 1 > max_lines:
        return "too large"
    if (edit.start, edit.end) == (window.start, window.end) and "\n" in old:
        return "rewrites the whole window"  # nothing of it kept: an answer that is not the window
    if latest is not None and _undoes(text, edit, latest):
        return "undoes the latest change"
    if key_of(text, edit) in dismissed:
        return "dismissed"
    return None


def key_of(text: str, edit: Edit) -> tuple[str, str, str]:
    """What makes two suggestions the same at the same place: the line the edit begins on, what it replaces, and
    by what (line numbers shift as the user edits elsewhere; the text of the place does not)."""
    line_start = text.rfind("\n", 0, edit.start) + 1
    line_end = text.find("\n", edit.start)
    line = text[line_start:len(text) if line_end < 0 else line_end]
    return line, text[edit.start:edit.end], edit.text


def apply(text: str, edit: Edit) -> str:
    return text[:edit.start] + edit.text + text[edit.end:]


def _squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _undoes(text: str, edit: Edit, latest: Change) -> bool:
    """Whether `edit` takes back the user's latest change: restores the text before it, deletes some of what was
    just typed, or puts back what was just deleted where it was."""
    typed_end = latest.start + len(latest.inserted)
    low, high = min(edit.start, latest.start), max(edit.end, typed_end)
    if low >= 0 and high <= len(text):  # compare only the stretch both touch
        after = text[low:edit.start] + edit.text + text[edit.end:high]
        before = text[low:latest.start] + latest.removed + text[typed_end:high]
        if after == before:
            return True
    if latest.inserted.strip() and not edit.text and latest.start <= edit.start < edit.end <= typed_end:
        return True
    removed = latest.removed.strip()
    # put back: the edit adds it, as a whole (an edit covering several changes carries the unchanged text between
    # them, which may hold it as the text replaced does; a renamed name may hold the old one, `read` in `new_read`)
    if not removed or not latest.start <= edit.start <= typed_end:
        return False
    low, high = max(0, edit.start - len(removed) - 1), edit.end + len(removed) + 1
    return _wholes(text[low:edit.start] + edit.text + text[edit.end:high], removed) > _wholes(text[low:high], removed)


def _wholes(text: str, piece: str) -> int:
    """How often `piece` stands in `text` not as part of a longer word."""
    before = r"(?<!\w)" if re.match(r"\w", piece) else ""
    after = r"(?!\w)" if re.search(r"\w$", piece) else ""
    return len(re.findall(before + re.escape(piece) + after, text))
