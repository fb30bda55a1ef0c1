"""Paths, decided once for every edge: file: URI ↔ path, inside a workspace folder or not, the name the model
reads. One rule for links: a file is named by its real path, links resolved once (`real`) where a path or a URI
comes in, so a chat, a suggestion and a language tool give a symlinked file one name.

URIs are parsed as RFC 8089 and VS Code write them, for POSIX and Windows alike: `file:///C:/x` and
`file:///c%3A/x` are `C:\\x` on Windows, `file://server/share/x` is `\\\\server\\share\\x` there, and a file: URI of
another host names no local file on POSIX.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path, PurePath, PureWindowsPath
from typing import Callable, Optional
from urllib.parse import unquote, urlparse

_DRIVE = re.compile(r"^/[A-Za-z]:(/|$)")


def uri_to_pure_path(uri: str, flavour: type[PurePath] = PurePath) -> Optional[PurePath]:
    """The path a file: URI names, in `flavour` (this machine's by default); None for another scheme, another
    host (outside Windows), or a name no file can have. Links are not resolved: `uri_to_path` does that."""
    parsed = urlparse(uri)
    if parsed.scheme.lower() != "file":
        return None
    text = unquote(parsed.path)
    if "\0" in text:
        return None
    windows = issubclass(flavour, PureWindowsPath)
    if parsed.netloc not in ("", "localhost"):
        if not windows:
            return None
        return flavour(f"//{parsed.netloc}{text}")  # a UNC share
    if windows and _DRIVE.match(text):
        text = text[1:] if len(text) > 3 else text[1:] + "/"  # `/C:/x` is `C:/x`; `/C:` is the drive's root
    return flavour(text)


@lru_cache(maxsize=8192)
def uri_to_path(uri: str) -> Optional[Path]:
    """The real path of a local file: URI (links resolved); None for other URIs. Remembered: every open buffer's
    URI is asked again on each look at the open documents, and an answer of many places names few files."""
    path = uri_to_pure_path(uri)
    if path is None:
        return None
    try:
        return real(Path(path))
    except (UnicodeError, ValueError):  # a lone surrogate from a server: no file can have that name
        return None


def real(path: Path | str) -> Path:
    """`path` with its links resolved (absolute): the one name of a file."""
    return Path(os.path.realpath(path))


def folder_uri(uri: str) -> str:
    """One spelling of a folder's URI: a file: URI is rebuilt from its real path, so percent-encoding, a trailing
    slash and links do not matter; other schemes are kept as they are."""
    path = uri_to_path(uri)
    return path.as_uri() if path is not None and path.is_absolute() else uri


def is_inside(path: Path, root: Path) -> bool:
    """Whether the real path `path` is `root` or below it, `root`'s links resolved."""
    return under(str(path), str(real(root)))


def under(path: str, folder: str) -> bool:
    """Whether the real path `path` is the real path `folder` or below it: strings, not Path.parents, and no look
    at the file system (search asks this of every open buffer)."""
    path, folder = os.path.normcase(path), os.path.normcase(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def display(roots: list[Path], path: Path) -> str:
    """`path` relative to the workspace folder that holds it (as the model should see it)."""
    return displayer(roots)(str(path))


def displayer(roots: list[Path]) -> Callable[[str], str]:
    """display() for many real paths (strings) at once: the folders' real paths are looked up once."""
    real_roots = [(root.name, str(real(root))) for root in roots]
    several = len(roots) > 1

    def name(path: str) -> str:
        for root_name, real_root in real_roots:
            if under(path, real_root):
                rel = path[len(real_root):].lstrip(os.sep) or "."
                if os.sep != "/":
                    rel = rel.replace(os.sep, "/")
                return f"{root_name}/{rel}" if several else rel
        return path

    return name
