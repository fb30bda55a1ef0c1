"""Editing that changes lines, as an author does it one change after another: a parameter renamed at each of its
uses through a function, and a parameter added to a function and then at every call site. Made from agent-lsp's
own modules as they stand (this project's history holds few such commits in one piece: its renames land with other
changes), so each sequence is real code changed the way an author changes it.

A `Sequence` is a file's text and the steps the author makes in order; step k's offsets are into the text as the
steps before it left it (`texts()[k]`). `keystrokes` says how each step is typed: the old text replaced by the
first character (a word selected and typed over), then a character at a time.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path

from bench.typing_replay import Keystroke, _interval

ROOT = Path(__file__).parents[1]
RENAMES = {"text": "source", "uri": "address", "doc": "document", "path": "file_path", "ls": "server",
           "settings": "config", "name": "label", "value": "raw", "client": "peer", "offset": "position",
           "params": "request", "args": "arguments", "line": "row", "prompt": "question", "root": "base",
           "options": "choices", "state": "status", "message": "note", "result": "outcome", "edit": "change"}
"""Names renamed as an author would (others get a `new_` prefix)."""
DEF = re.compile(r"^( *)(?:async )?def (\w+)\(([^()]*)\)[^\n]*:$", re.M)


@dataclass(frozen=True)
class Step:
    start: int
    end: int
    text: str
    """`text` replaces [start, end) of the text before this step."""


@dataclass(frozen=True)
class Sequence:
    path: str
    kind: str
    """"rename" or "parameter"."""
    initial: str
    steps: tuple[Step, ...]

    def texts(self) -> list[str]:
        """The text before each step, and after the last."""
        out = [self.initial]
        for step in self.steps:
            text = out[-1]
            out.append(text[:step.start] + step.text + text[step.end:])
        return out


def sequences(count: int, most_steps: int, seed: int = 3) -> list[Sequence]:
    """`count` sequences of 3 to `most_steps` steps, renames and added parameters taking turns, from files chosen
    by `seed`."""
    files = sorted((ROOT / "agent_lsp").rglob("*.py"))
    random.Random(seed).shuffle(files)
    found: dict[str, list[Sequence]] = {"rename": [], "parameter": []}
    for path in files:
        text = path.read_text()
        relative = str(path.relative_to(ROOT))
        for kind, make in (("rename", _renames), ("parameter", _parameters)):
            if len(found[kind]) < count:
                found[kind] += make(relative, text, most_steps)[:1]  # one per file: more files, more variety
        if all(len(v) >= count for v in found.values()):
            break
    mixed = [s for pair in zip(found["rename"], found["parameter"]) for s in pair]
    return mixed[:count]


def _steps(places: list[tuple[int, int, str]]) -> tuple[Step, ...]:
    """Replacements given as offsets into the original text, in the order the author makes them, as steps (each
    step's offsets moved by what the steps made before it changed above it)."""
    steps = []
    for n, (start, end, new) in enumerate(places):
        shift = sum(len(t) - (e - s) for s, e, t in places[:n] if s < start)
        steps.append(Step(start + shift, end + shift, new))
    return tuple(steps)


def _close(lines: list[int]) -> bool:
    """No two places more than 10 lines apart (the next one mostly inside the editable window)."""
    lines = sorted(lines)
    return max(b - a for a, b in zip(lines, lines[1:])) <= 10


def _body_end(text: str, indent: str, after: int) -> int:
    """Where the block whose header ends at `after` ends: the first non-blank line indented no deeper."""
    for match in re.finditer(r"\n( *)(\S)", text[after:]):
        if len(match.group(1)) <= len(indent):
            return after + match.start()
    return len(text)


def _names(params: str) -> list[str]:
    """The parameter names of a signature's text (commas inside brackets split nothing)."""
    names, depth, part = [], 0, ""
    for ch in params + ",":
        depth += {"[": 1, "(": 1, "]": -1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            name = re.match(r"\s*(\w+)", part)
            if name:
                names.append(name.group(1))
            part = ""
        else:
            part += ch
    return names


def _unquoted(line: str, column: int) -> bool:
    before = line[:column]
    return before.count('"') % 2 == 0 and before.count("'") % 2 == 0 and "#" not in before


def _renames(path: str, text: str, most: int) -> list[Sequence]:
    """A parameter renamed at its every use in its function (3 uses at least, no two more than 10 lines apart)."""
    out = []
    for match in DEF.finditer(text):
        indent, params = match.group(1), match.group(3)
        end = _body_end(text, indent, match.end())
        for name in _names(params):
            if name in ("self", "cls") or len(name) < 2:
                continue
            uses = []
            for use in re.finditer(rf"(?<![.\w]){name}\b(?!\s*=[^=])", text[match.start():end]):
                at = match.start() + use.start()
                line_start = text.rfind("\n", 0, at) + 1
                if _unquoted(text[line_start:text.find("\n", at)], at - line_start):
                    uses.append(at)
            if not 3 <= len(uses) <= most:
                continue
            if not _close([text.count("\n", 0, at) for at in uses]):
                continue
            new = RENAMES.get(name, f"new_{name}")
            out.append(Sequence(path, "rename", text, _steps([(at, at + len(name), new) for at in uses])))
            break
    return out


def _parameters(path: str, text: str, most: int) -> list[Sequence]:
    """A keyword parameter added to a function, then passed at each of its calls on one line (2 calls at least)."""
    out = []
    for match in DEF.finditer(text):
        name, params = match.group(2), match.group(3)
        if name.startswith("__") or "*" in params:
            continue
        close = match.start(3) + len(params)
        calls = []
        for call in re.finditer(rf"(?<![\w]){name}\(", text):
            if call.start() <= match.end() and call.start() >= match.start():
                continue
            depth, at = 1, call.end()
            while at < len(text) and depth and text[at] != "\n":
                depth += {"(": 1, ")": -1}.get(text[at], 0)
                at += 1
            if depth == 0:
                inside = text[call.end():at - 1]
                calls.append((at - 1, at - 1, ", strict=True" if inside.strip() else "strict=True"))
        if not 2 <= len(calls) <= most - 1:
            continue
        head = (close, close, ", strict: bool = False" if params.strip() else "strict: bool = False")
        if not _close([text.count("\n", 0, at) for at, _, _ in (head, *calls)]):
            continue
        out.append(Sequence(path, "parameter", text, _steps([head, *calls])))  # the signature first, as authors do
        break
    return out


def keystrokes(step: Step, rng: random.Random) -> list[Keystroke]:
    """The characters of `step`'s new text, each after a human interval (the replay types the first over the old
    text, as a word selected and typed over)."""
    return [Keystroke(ch, _interval(rng)) for ch in step.text]
