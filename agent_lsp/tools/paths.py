"""Workspace confinement: every path a tool touches resolves inside a workspace folder."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Optional, Sequence
from urllib.parse import unquote, urlparse

from agent_lsp.core.events import Location
from agent_lsp.core.tool import ToolError


def resolve(roots: list[Path], raw: str | None, also: Sequence[Path] = ()) -> Path:
    """The real path of `raw` (workspace-relative, absolute, or a file:// URI), refused when it leaves every
    workspace folder (and every folder of `also`, real paths outside the workspace that may be reached too)."""
    if not roots:
        raise ToolError("There is no workspace folder open, so no file can be reached.")
    raw = (raw or ".").strip() or "."
    if "\0" in raw:
        raise ToolError(f"{raw!r} contains a NUL character, which no file path can hold; refused.")
    try:
        candidate = _file_uri_path(raw) or Path(raw).expanduser()
    except RuntimeError:  # "~someone" with no such user
        candidate = Path(raw)
    if not candidate.is_absolute():
        candidate = roots[0] / candidate
    real = Path(os.path.realpath(candidate))
    for root in [*roots, *also]:
        if is_inside(real, root):
            return real
    raise ToolError(f"{raw} is outside the workspace folders ({', '.join(str(r) for r in roots)}); refused.")


def _file_uri_path(raw: str) -> Optional[Path]:
    """The path of a file: URI (models copy them from what the editor shows); None for anything else."""
    if not raw.lower().startswith("file:"):
        return None
    parsed = urlparse(raw)
    if parsed.netloc not in ("", "localhost"):
        raise ToolError(f"{raw} is on another host; only local files can be reached.")
    return Path(unquote(parsed.path))


def is_inside(path: Path, root: Path) -> bool:
    """Whether `path` is `root` or below it, after resolving links."""
    # Strings, not Path.parents: search asks this of every open buffer.
    real_root, inside = os.path.normcase(os.path.realpath(root)), os.path.normcase(str(path))
    return inside == real_root or inside.startswith(real_root.rstrip(os.sep) + os.sep)


def display(roots: list[Path], path: Path) -> str:
    """`path` relative to the workspace folder that holds it (as the model should see it)."""
    return displayer(roots)(str(path))


def displayer(roots: list[Path]) -> Callable[[str], str]:
    """display() for many real paths (strings) at once: the folders' real paths are looked up once."""
    real_roots = [(root.name, os.path.normcase(os.path.realpath(root))) for root in roots]
    several = len(roots) > 1

    def name(path: str) -> str:
        case = os.path.normcase(path)
        for root_name, real_root in real_roots:
            if case == real_root or case.startswith(real_root.rstrip(os.sep) + os.sep):
                rel = path[len(real_root):].lstrip(os.sep) or "."
                if os.sep != "/":
                    rel = rel.replace(os.sep, "/")
                return f"{root_name}/{rel}" if several else rel
        return path

    return name


def root_of(roots: list[Path], path: Path) -> Path:
    """The real path of the workspace folder that holds `path`."""
    for root in roots:
        if is_inside(path, root):
            return Path(os.path.realpath(root))
    raise ToolError(f"{path} is outside the workspace folders; refused.")


def file_location(roots: list[Path], raw: str) -> Optional[list[Location]]:
    """The location list of a call that touches one file (None when the path is refused)."""
    try:
        return [Location(uri=resolve(roots, raw).as_uri())]
    except ToolError:
        return None
