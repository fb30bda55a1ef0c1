"""Workspace confinement: every path a tool touches resolves inside a workspace folder (the path rules
themselves: core/paths.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence

from agent_lsp.core.events import Location
from agent_lsp.core.paths import is_inside, real, uri_to_path
from agent_lsp.core.tool import ToolError


def resolve(roots: list[Path], raw: str | None, also: Sequence[Path] = ()) -> Path:
    """The real path of `raw` (workspace-relative, absolute, or a file:// URI), refused when it leaves every
    workspace folder (and every folder of `also`, real paths outside the workspace that may be reached too)."""
    if not roots:
        raise ToolError("There is no workspace folder open, so no file can be reached.")
    raw = (raw or ".").strip() or "."
    if "\0" in raw:
        raise ToolError(f"{raw!r} contains a NUL character, which no file path can hold; refused.")
    if raw.lower().startswith("file:"):  # models copy URIs from what the editor shows
        candidate = uri_to_path(raw)
        if candidate is None:
            raise ToolError(f"{raw} is on another host; only local files can be reached.")
    else:
        try:
            candidate = Path(raw).expanduser()
        except RuntimeError:  # "~someone" with no such user
            candidate = Path(raw)
    if not candidate.is_absolute():
        candidate = roots[0] / candidate
    found = real(candidate)
    for root in [*roots, *also]:
        if is_inside(found, root):
            return found
    raise ToolError(f"{raw} is outside the workspace folders ({', '.join(str(r) for r in roots)}); refused.")


def file_location(roots: list[Path], raw: str) -> Optional[list[Location]]:
    """The location list of a call that touches one file (None when the path is refused)."""
    try:
        return [Location(uri=resolve(roots, raw).as_uri())]
    except ToolError:
        return None
