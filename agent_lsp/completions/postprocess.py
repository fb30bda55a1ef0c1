"""What a model's answer becomes before it is offered (PROTOCOL §10): small pure functions, each with golden cases
in tests/unit/test_completion_postprocess.py.

A suggestion is inserted at the cursor (an empty range); `finish` returns its text, or None when nothing is left
to offer. The steps, in order: the chat model's wrappers removed (a Markdown fence, `<completion>…</completion>`),
the indentation the line so far already has not typed twice, the buffer's indentation (tabs or spaces, its width),
one line only when the cursor's line goes on after it, the rest of the line not repeated, the block's end, the
lines that follow the cursor not repeated, `maxLines`, trailing whitespace."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Optional, Sequence

OPENERS, CLOSERS = "([{", ")]}"
_FENCE = re.compile(r"^[ \t]*```")
_OPEN_TAG, _CLOSE_TAG = "<completion>", "</completion>"


@dataclass(frozen=True)
class Surroundings:
    """What post-processing needs to know of the buffer around the cursor."""

    line_before: str
    """The cursor's line up to the cursor."""
    line_after: str
    """The rest of the cursor's line."""
    lines_after: tuple[str, ...] = ()
    """A few of the lines that follow the cursor's line."""
    indent: str = "    "
    """The buffer's indentation unit: a tab, or a number of spaces (`indent_unit`)."""
    max_lines: int = 8
    text_follows: Optional[bool] = None
    """Whether anything but whitespace comes after the cursor (None: as far as `line_after` and `lines_after` say)."""

    def follows(self) -> bool:
        """Whether anything but whitespace comes after the cursor."""
        if self.text_follows is not None:
            return self.text_follows
        return bool(self.line_after.strip()) or any(line.strip() for line in self.lines_after)


def finish(raw: str, where: Surroundings) -> Optional[str]:
    """The text to insert at the cursor for a model's answer `raw`; None when nothing is left to offer."""
    text = unwrap(raw).replace("\r\n", "\n").replace("\r", "\n")
    text = not_retyped_indentation(text, where.line_before)
    if where.line_after.strip():  # the line goes on after the cursor: complete this line only
        text = without_rest_of_line(text.split("\n", 1)[0], where.line_after)
    else:
        lines = text.split("\n")
        # the suggestion's first line is where its block starts: at the start of a line, the indentation it brings
        # (`        finally:`) is the column its later lines are counted from
        own = leading(where.line_before + lines[0] + where.line_after)
        lines = reindented(lines, own, where.indent)
        if where.follows():
            lines = within_block(lines, own, where.indent)
            lines = before_repeat(lines, where.lines_after)
        text = "\n".join(lines[: where.max_lines])
    text = text.rstrip()
    return text if text.strip() else None


# ---- wrappers ------------------------------------------------------------------------------------------------


def unwrap(raw: str) -> str:
    """`raw` without a Markdown code fence or a `<completion>…</completion>` wrapper around it."""
    text = raw
    lower = text.lower()
    start = lower.find(_OPEN_TAG)
    if start >= 0 and not text[:start].strip():
        text = text[start + len(_OPEN_TAG):]
        end = text.lower().find(_CLOSE_TAG)
        text = text[:end] if end >= 0 else text
    elif text.lower().rstrip().endswith(_CLOSE_TAG):
        text = text.rstrip()[: -len(_CLOSE_TAG)]
    stripped = text.lstrip("\n")
    if _FENCE.match(stripped):
        newline = stripped.find("\n")
        body = stripped[newline + 1:] if newline >= 0 else ""
        lines = body.split("\n")
        closing = next((i for i, line in enumerate(lines) if _FENCE.match(line)), len(lines))
        text = "\n".join(lines[:closing])
    return text


def opening(raw: str) -> Optional[str]:
    """What a still-streaming answer offers so far, its opening wrapper removed; None while its start could still
    be a wrapper (nothing can be compared with it yet)."""
    head = raw.lstrip("\n")
    lower = head.lower()
    if lower.startswith(_OPEN_TAG):
        body = head[len(_OPEN_TAG):]
        end = body.lower().find(_CLOSE_TAG)
        return body[:end] if end >= 0 else body
    if not head or _OPEN_TAG.startswith(lower):
        return None
    stripped = head.lstrip(" \t")
    if stripped.startswith("```"):
        newline = head.find("\n")
        return None if newline < 0 else head[newline + 1:].split("```")[0]
    if "```".startswith(stripped):
        return None
    return raw


# ---- the first line ------------------------------------------------------------------------------------------


def not_retyped_indentation(text: str, line_before: str) -> str:
    """`text` without the whitespace the line already has: a model that starts its answer with the indentation
    (or the space) the cursor stands after would type it twice."""
    if not line_before or not line_before[-1].isspace():
        return text
    if not line_before.strip():  # only indentation so far: the answer may repeat it, or part of it
        if text.startswith(line_before):
            return text[len(line_before):]
        ws = leading(text.split("\n", 1)[0])
        if ws and ("\t" in ws) != ("\t" in line_before):  # retyped in the model's own style (spaces for tabs)
            return text[len(ws):]
        return text
    return text.lstrip(" \t") if text[:1] in (" ", "\t") else text


def without_rest_of_line(line: str, rest: str) -> str:
    """`line` (to be inserted before `rest`, the rest of the cursor's line) without its end when that end types
    `rest`, or its beginning, again: `foo(x` + `)` stays, `x)` before `)` loses its `)` — unless `line` itself
    opened that bracket (`f(x)` before `)` is whole)."""
    rest = rest.rstrip()
    for k in range(min(len(line), len(rest)), 0, -1):
        if line.endswith(rest[:k]) and _closes_nothing_of_its_own(line[:-k], rest[:k]):
            return line[:-k]
    return line


def _closes_nothing_of_its_own(kept: str, dropped: str) -> bool:
    """Whether the brackets `dropped` closes are not opened in `kept` (so the ones after the cursor close them)."""
    closing = [c for c in dropped if c in CLOSERS]
    if not closing:
        return True
    depth = 0
    for c in kept:
        if c in OPENERS:
            depth += 1
        elif c in CLOSERS and depth:
            depth -= 1
    return depth == 0


# ---- indentation ---------------------------------------------------------------------------------------------


def leading(line: str) -> str:
    """The leading whitespace of `line`."""
    return line[: len(line) - len(line.lstrip(" \t"))]


def indent_unit(lines: Sequence[str], default: str = "    ", base: int = 0) -> str:
    """How `lines` indent: a tab when most indented lines start with one, else as many spaces as the most common
    step from one line to a deeper next one, the first from `base` columns (`default` when no line says)."""
    tabs = spaces = 0
    steps: Counter[int] = Counter()
    previous = base
    for line in lines:
        if not line.strip():
            continue
        ws = leading(line)
        if ws.startswith("\t"):
            tabs += 1
            continue
        spaces += bool(ws)
        if len(ws) > previous:
            steps[len(ws) - previous] += 1
        previous = len(ws)
    if tabs > spaces:
        return "\t"
    if not steps:
        return default
    return " " * max(steps.items(), key=lambda item: (item[1], -item[0]))[0]


def unit_width(unit: str) -> int:
    """Columns of one indentation level (a tab counts as 4)."""
    return 4 if unit == "\t" else len(unit)


def indent_width(ws: str, unit: str) -> int:
    """The width of leading whitespace `ws` in columns, a tab counting as one level of `unit`."""
    return sum(unit_width(unit) if c == "\t" else 1 for c in ws)


def reindented(lines: list[str], first_ws: str, unit: str) -> list[str]:
    """`lines` (the first continues the cursor's line) with every other line indented as the buffer indents (`unit`:
    tabs or spaces, and its width of a level), counted from the first line's indentation `first_ws`."""
    rest = lines[1:]
    if not any(leading(line) for line in rest if line.strip()):
        return lines
    anchor = indent_width(first_ws, unit)
    if any(leading(line).startswith("\t") for line in rest):
        theirs = "\t"
    else:  # their step, counted from the cursor's line (a tab taken as 4 spaces)
        theirs = indent_unit(rest, default=unit if unit != "\t" else "    ", base=anchor)
    if theirs == unit:
        return lines
    return [lines[0]] + [_reindent(line, theirs, anchor, unit) for line in rest]


def _reindent(line: str, theirs: str, anchor: int, unit: str) -> str:
    """One line of the suggestion, indented with `unit` instead of `theirs`; `anchor` columns (the cursor's line)
    are the same in both."""
    ws = leading(line)
    if not line.strip():
        return ""
    if theirs == "\t":
        tabs = len(ws) - len(ws.lstrip("\t"))
        levels, extra = tabs, len(ws) - tabs
    else:
        width, step = len(ws.expandtabs(len(theirs))), len(theirs)
        if width >= anchor:
            levels, extra = anchor // unit_width(unit) + (width - anchor) // step, (width - anchor) % step
        else:
            levels, extra = width // step, width % step
    return unit * levels + " " * extra + line[len(ws):]


# ---- where the suggestion stops ------------------------------------------------------------------------------


def within_block(lines: list[str], cursor_ws: str, unit: str) -> list[str]:
    """`lines` up to (not including) the first one after the first that is not blank and indented less than the
    cursor's line (whose indentation is `cursor_ws`): the suggestion ends with the block the cursor is in."""
    width = indent_width(cursor_ws, unit)
    for i, line in enumerate(lines[1:], start=1):
        if line.strip() and indent_width(leading(line), unit) < width:
            return lines[:i]
    return lines


def before_repeat(lines: list[str], lines_after: Sequence[str]) -> list[str]:
    """`lines` up to the first one (after the first) that types the next non-blank line after the cursor again."""
    following = next((line.strip() for line in lines_after if line.strip()), None)
    if following is None:
        return lines
    for i, line in enumerate(lines[1:], start=1):
        if line.strip() == following:
            return lines[:i]
    return lines
