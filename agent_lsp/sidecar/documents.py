"""What one language server was shown of each document, kept equal to what the user sees: the editor's buffers
(unsaved text included), else the files on disk; didOpen / didChange (full text) / didClose as they change."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

DISK_DOCUMENTS = 64
"""Files opened from disk (asked about, not open in the editor) a server keeps open at most."""

Stamp = Optional[tuple[int, int]]
"""(mtime_ns, size) of a file when it was read."""
Buffers = dict[Path, tuple[str, str, Optional[int]]]
"""The editor's open buffers a server must see: {path: (languageId, text, the editor's version)}."""


@dataclass
class Document:
    """What the server was sent of one document."""

    text: str
    version: int
    from_editor: bool
    editor_version: Optional[int] = None
    """The editor's version of the buffer this text is (None: the file on disk)."""
    stamp: Stamp = None


def _read_changed(files: dict[Path, Stamp]) -> dict[Path, tuple[Stamp, Optional[str]]]:
    """For each file whose stamp differs from the one given: its new stamp and text (None, None when gone)."""
    out: dict[Path, tuple[Stamp, Optional[str]]] = {}
    for path, old in files.items():
        try:
            st = path.stat()
            stamp = (st.st_mtime_ns, st.st_size)
            if stamp != old:
                out[path] = (stamp, path.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            out[path] = (None, None)
    return out


class Documents:
    """The documents of one server; `notify(method, params)` sends to it."""

    def __init__(self, notify: Callable[[str, Any], None]) -> None:
        self._notify = notify
        self.by_path: dict[Path, Document] = {}
        self._lock = asyncio.Lock()

    def texts(self) -> dict[Path, str]:
        """The text the server has of each document it was sent."""
        return {p: d.text for p, d in self.by_path.items()}

    async def sync(self, editor: Buffers, asked: Optional[Path], language: str) -> None:
        """Make the server see the editor's buffers as they are, the files it was shown from disk as they are now,
        and `asked` (from disk, as `language`, unless the editor has it open)."""
        async with self._lock:
            for path, (language_id, text, version) in editor.items():
                doc = self.by_path.get(path)
                if doc is None:
                    doc = self._open(path, language_id, text)
                elif doc.text != text:
                    self._change(path, text)
                doc.from_editor, doc.editor_version, doc.stamp = True, version, None
            for path in [p for p, d in self.by_path.items() if d.from_editor and p not in editor]:
                self._close(path)  # closed in the editor: the server goes back to the file on disk
            on_disk = {p: d.stamp for p, d in self.by_path.items() if not d.from_editor}
            if asked is not None and asked not in self.by_path:
                on_disk[asked] = None
            if not on_disk:
                return
            for path, (stamp, text) in (await asyncio.to_thread(_read_changed, on_disk)).items():
                if text is None:
                    if path in self.by_path:
                        self._close(path)
                    continue
                if path not in self.by_path:
                    self._open(path, language, text).from_editor = False
                elif self.by_path[path].text != text:
                    self._change(path, text)
                self.by_path[path].stamp = stamp
            read = [p for p, d in self.by_path.items() if not d.from_editor and p != asked]
            for path in read[: max(0, len(read) - DISK_DOCUMENTS)]:  # the oldest first
                self._close(path)

    def editor_version(self, path: Path) -> Optional[int]:
        """The editor's version of the text the server has of `path` (None when it has the file on disk)."""
        doc = self.by_path.get(path)
        return doc.editor_version if doc is not None and doc.from_editor else None

    def _open(self, path: Path, language_id: str, text: str) -> Document:
        doc = self.by_path[path] = Document(text=text, version=1, from_editor=True)
        self._notify("textDocument/didOpen", {"textDocument": {
            "uri": path.as_uri(), "languageId": language_id, "version": 1, "text": text}})
        return doc

    def _change(self, path: Path, text: str) -> None:
        doc = self.by_path[path]
        doc.text, doc.version = text, doc.version + 1
        self._notify("textDocument/didChange", {
            "textDocument": {"uri": path.as_uri(), "version": doc.version}, "contentChanges": [{"text": text}]})

    def _close(self, path: Path) -> None:
        del self.by_path[path]
        self._notify("textDocument/didClose", {"textDocument": {"uri": path.as_uri()}})
