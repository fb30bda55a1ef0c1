"""Real typing to replay: the lines that commits of this project's own history added to its Python files, typed
character by character at a human pace, with the editor's auto-indent on Enter.

Each `Edit` is one file as a commit left it, less one hunk of added lines; replaying it types those lines back in
at their place, so after the last keystroke the buffer is the file as the commit made it. Outside a git checkout
(an sdist), the same is done with blocks of agent-lsp's own modules as they stand.
"""

from __future__ import annotations

import random
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).parents[1]
HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass(frozen=True)
class Keystroke:
    """Text inserted at one moment: one character, or Enter with the indentation the editor adds."""

    text: str
    pause: float
    """Seconds after the previous keystroke."""


@dataclass(frozen=True)
class Edit:
    path: str
    final: str
    """The file once every keystroke is typed: what the author really wrote."""
    start: int
    """Offset in `final` where the typing begins; `final[start:end]` is typed (whole lines, less the last one's
    newline: the typing happens on a line opened for it), the rest is there from the start."""
    end: int

    @property
    def initial(self) -> str:
        return self.final[:self.start] + self.final[self.end:]


def edits(count: int, seed: int = 7) -> list[Edit]:
    """`count` edits of 2 to 12 added lines each, newest commits first; from the sources when there is no history."""
    found = _from_history(count) if (ROOT / ".git").exists() else []
    if len(found) < count:
        found += _from_sources(count - len(found), seed)
    return found


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True).stdout


def _from_history(count: int) -> list[Edit]:
    try:
        commits = _git("log", "--no-merges", "--format=%H", "-n", "400", "--", "agent_lsp/*.py").split()
    except (subprocess.CalledProcessError, OSError):
        return []
    found: list[Edit] = []
    for commit in commits:
        try:
            diff = _git("show", "--unified=0", "--format=", commit, "--", "agent_lsp/*.py")
        except subprocess.CalledProcessError:
            continue
        path = None
        for line in diff.splitlines():
            if line.startswith("+++ "):
                path = line[6:] if line.startswith("+++ b/") else None
            match = HUNK.match(line)
            if not (match and path):
                continue
            removed = int(match.group(1) if match.group(1) is not None else 1)
            first, added = int(match.group(2)), int(match.group(3) if match.group(3) is not None else 1)
            if removed or not 2 <= added <= 12:
                continue  # pure additions only: the rest of the file is then exactly the commit's
            try:
                final = _git("show", f"{commit}:{path}")
            except subprocess.CalledProcessError:
                continue
            edit = _edit(path, final, first - 1, added)
            if edit:
                found.append(edit)
                if len(found) == count:
                    return found
                break  # one hunk per commit: more commits, more variety
    return found


def _from_sources(count: int, seed: int) -> list[Edit]:
    rng = random.Random(seed)
    files = sorted((ROOT / "agent_lsp").rglob("*.py"))
    found: list[Edit] = []
    while len(found) < count and files:
        path = rng.choice(files)
        final = path.read_text()
        lines = final.count("\n")
        if lines < 20:
            continue
        edit = _edit(str(path.relative_to(ROOT)), final, rng.randrange(5, lines - 12), rng.randrange(3, 9))
        if edit:
            found.append(edit)
    return found


def _edit(path: str, final: str, first_line: int, lines: int) -> Edit | None:
    """Lines `first_line` (0-based) to `first_line + lines` of `final` as the typed part; None for blank ones."""
    starts = [0] + [m.end() for m in re.finditer("\n", final)]
    if first_line + lines >= len(starts):
        return None
    start, end = starts[first_line], starts[first_line + lines] - 1  # the last line's newline stays: typed on it
    if not final[start:end].strip() or "\t" in final[start:end]:
        return None
    return Edit(path, final, start, end)


def keystrokes(edit: Edit, rng: random.Random) -> list[Keystroke]:
    """How a person types `final[start:end]` on a line opened for it: a character at a time (a lognormal interval,
    median 150 ms), Enter bringing the next line's indentation as an editor's auto-indent does (and opening the
    first line brings its own), and a pause to think before each new line."""
    keys: list[Keystroke] = []
    for n, line in enumerate(edit.final[edit.start:edit.end].split("\n")):
        indent = line[:len(line) - len(line.lstrip(" "))]
        if n or indent:
            keys.append(Keystroke(("\n" if n else "") + indent, _interval(rng) + (rng.uniform(0.3, 0.9) if n else 0)))
        keys += [Keystroke(ch, _interval(rng)) for ch in line[len(indent):]]
    return keys


def _interval(rng: random.Random) -> float:
    return min(1.5, max(0.04, rng.lognormvariate(-1.9, 0.45)))  # e^-1.9 = 0.150 s
