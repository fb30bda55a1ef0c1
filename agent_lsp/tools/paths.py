"""Workspace confinement: every path a tool touches resolves inside a workspace folder."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional
from urllib.parse import unquote, urlparse

from agent_lsp.core.events import Location
from agent_lsp.core.tool import ToolError


def resolve(roots: list[Path], raw: str | None) -> Path:
    """The real path of `raw` (workspace-relative, absolute, or a file:// URI), refused when it leaves every
    workspace folder."""
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
    for root in roots:
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
    real_root = Path(os.path.realpath(root))
    return path == real_root or real_root in path.parents


def display(roots: list[Path], path: Path) -> str:
    """`path` relative to the workspace folder that holds it (as the model should see it)."""
    for root in roots:
        real_root = Path(os.path.realpath(root))
        if is_inside(path, real_root):
            rel = path.relative_to(real_root).as_posix()
            return rel if len(roots) == 1 else f"{root.name}/{rel}"
    return str(path)


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
