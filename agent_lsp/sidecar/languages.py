"""Which configured language server serves a file: by languageId or extension; whether a workspace folder has files
of a server's languages (a bounded look, once)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator, Optional

from agent_lsp.config.language_servers import LanguageServerConfig

EXTENSIONS = {
    ".py": "python", ".pyi": "python", ".pyw": "python",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "typescriptreact",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascriptreact",
    ".go": "go", ".rs": "rust", ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp",
    ".hh": "cpp", ".java": "java", ".kt": "kotlin", ".rb": "ruby", ".lua": "lua", ".php": "php", ".cs": "csharp",
    ".swift": "swift", ".scala": "scala", ".zig": "zig", ".ex": "elixir", ".exs": "elixir", ".hs": "haskell",
    ".ml": "ocaml", ".el": "emacs-lisp", ".sh": "shellscript", ".bash": "shellscript", ".json": "json",
    ".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".md": "markdown", ".html": "html", ".css": "css",
    ".vue": "vue", ".svelte": "svelte", ".dart": "dart",
}
"""File extensions and the languageId LSP gives them (the specification's table, plus a few common ones)."""

CHANGES_LIMIT = 50_000
"""Directory entries looked at, at most, for the files changed on disk after a command."""
SCAN_LIMIT = 5000
"""Directory entries looked at, at most, to tell whether a workspace folder has files of a language."""
_SKIP = {"node_modules", "__pycache__", "target", "dist", "build", "venv"}


def language_id(path: Path, editor_language: str = "") -> str:
    """The languageId of `path`: the editor's, else from its extension (the extension itself when unknown)."""
    return editor_language or EXTENSIONS.get(path.suffix.lower(), path.suffix.lower().lstrip("."))


def serves(config: LanguageServerConfig, path: Path, editor_language: str = "") -> bool:
    """Whether `config` is for the language of `path`."""
    suffix = path.suffix.lower()
    ids = {language_id(path, editor_language), EXTENSIONS.get(suffix, "")} - {""}
    return any(lang.lower() == suffix if lang.startswith(".") else lang in ids for lang in config.languages)


def extensions(config: LanguageServerConfig) -> Optional[set[str]]:
    """The file extensions of `config`'s languages; None when one of its languageIds has none we know."""
    found: set[str] = set()
    for lang in config.languages:
        if lang.startswith("."):
            found.add(lang.lower())
            continue
        known = {ext for ext, lid in EXTENSIONS.items() if lid == lang}
        if not known:
            return None
        found |= known
    return found


def _files(root: Path, limit: int) -> Iterator[os.DirEntry]:
    """The files under `root`, breadth first, skipping hidden and generated folders, looking at `limit` directory
    entries at most."""
    queue, seen = [root], 0
    while queue and seen < limit:
        folder = queue.pop(0)
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            try:
                if entry.is_dir(follow_symlinks=False):
                    if not entry.name.startswith(".") and entry.name not in _SKIP:
                        queue.append(Path(entry.path))
                else:
                    yield entry
            except OSError:
                continue


def folder_has(root: Path, suffixes: set[str], limit: int = SCAN_LIMIT) -> bool:
    """Whether `root` has a file ending in one of `suffixes`, looking at `limit` entries at most (a big tree that
    shows none soon answers False)."""
    return any(os.path.splitext(entry.name)[1].lower() in suffixes for entry in _files(root, limit))


def modified_since(root: Path, suffixes: Optional[set[str]], since_ns: int, limit: int = CHANGES_LIMIT) -> list[Path]:
    """The files under `root` (of `suffixes`, or any when None) modified at or after `since_ns`, looking at `limit`
    entries at most."""
    found = []
    for entry in _files(root, limit):
        try:
            if (suffixes is None or os.path.splitext(entry.name)[1].lower() in suffixes) \
                    and entry.stat(follow_symlinks=False).st_mtime_ns >= since_ns:
                found.append(Path(entry.path))
        except OSError:
            continue
    return found
