"""Walking a workspace the way git sees it: .gitignore honoured, .git skipped, links out never followed."""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Optional

from agent_lsp.tools.paths import is_inside

if TYPE_CHECKING:
    import pathspec

ALWAYS_SKIPPED = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", ".mypy_cache", ".pytest_cache"}


def _ignore_spec(directory: Path) -> Optional["pathspec.PathSpec"]:
    import pathspec  # on first use: start-up stays light

    gitignore = directory / ".gitignore"
    try:
        lines = gitignore.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines)


def iter_files(root: Path, start: Path, pattern: Optional[str] = None) -> Iterator[Path]:
    """Files under `start` (inside `root`), sorted per directory, that git would not ignore and match `pattern`."""
    specs: list = []  # (directory, its .gitignore spec), outermost first
    above = [p for p in reversed(start.parents) if is_inside(p, root)]  # root .. start's parent
    for directory in above:
        spec = _ignore_spec(directory)
        if spec:
            specs.append((directory, spec))

    def ignored(path: Path, is_dir: bool) -> bool:
        for base, spec in specs:
            if is_inside(path, base) and path != base:
                rel = path.relative_to(base).as_posix() + ("/" if is_dir else "")
                if spec.match_file(rel):
                    return True
        return False

    if start.is_file():
        if not pattern or _matches(start, start.parent, pattern):
            yield start
        return
    for dirpath, dirnames, filenames in os.walk(start, followlinks=False):
        here = Path(dirpath)
        spec = _ignore_spec(here)
        if spec:
            specs.append((here, spec))
        dirnames[:] = sorted(
            d for d in dirnames if d not in ALWAYS_SKIPPED and not ignored(here / d, True)
        )
        for name in sorted(filenames):
            path = here / name
            if path.is_symlink() and not is_inside(Path(os.path.realpath(path)), root):
                continue
            if ignored(path, False):
                continue
            if pattern and not _matches(path, start, pattern):
                continue
            yield path


def _matches(path: Path, start: Path, pattern: str) -> bool:
    rel = path.relative_to(start).as_posix() if path != start else path.name
    if "/" in pattern:
        return fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(rel, pattern.removeprefix("**/"))
    return fnmatch.fnmatch(path.name, pattern)
