"""FakeEditor: the core Editor port in memory; records every edit it is asked to apply."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from agent_lsp.core.ports import Diagnostic, DiagnosticsReport, EditOutcome, FileEdit, OpenDocument


@dataclass
class FakeEditor:
    root: Path
    buffers: dict[Path, str] = field(default_factory=dict)
    """Open documents and their (unsaved) text."""
    versions: dict[Path, int] = field(default_factory=dict)
    editor_diagnostics: Optional[list[Diagnostic]] = None
    """None: the editor has no diagnostics to give (like a client without the capability)."""
    applied: list[FileEdit] = field(default_factory=list)
    refuse_edits: bool = False
    deleted: list[Path] = field(default_factory=list)

    @property
    def roots(self) -> list[Path]:
        return [self.root]

    def open(self, name: str, text: str, version: int = 1) -> Path:
        path = (self.root / name).resolve()
        self.buffers[path] = text
        self.versions[path] = version
        return path

    def open_documents(self) -> list[OpenDocument]:
        return [self._doc(p) for p in self.buffers]

    def open_document(self, path: Path) -> Optional[OpenDocument]:
        return self._doc(path.resolve()) if path.resolve() in self.buffers else None

    def _doc(self, path: Path) -> OpenDocument:
        text = self.buffers[path]
        on_disk = path.read_text() if path.exists() else None
        return OpenDocument(uri=path.as_uri(), path=path, language_id="python", version=self.versions[path],
                            text=text, unsaved=on_disk != text)

    async def diagnostics(self, paths: Optional[list[Path]]) -> DiagnosticsReport:
        if self.editor_diagnostics is None:
            return DiagnosticsReport(items=[], from_editor=False)
        wanted = None if paths is None else {p.resolve() for p in paths}
        return DiagnosticsReport(items=[d for d in self.editor_diagnostics if wanted is None or d.path in wanted],
                                 from_editor=True)

    async def apply_edit(self, edit: FileEdit) -> EditOutcome:
        self.applied.append(edit)
        if self.refuse_edits:
            return EditOutcome(applied=False, message="the document changed")
        text = edit.base_text
        for e in sorted(edit.edits, key=lambda e: e.start, reverse=True):
            text = text[: e.start] + e.new_text + text[e.end :]
        path = edit.path.resolve()
        if path in self.buffers:
            self.buffers[path] = text
            self.versions[path] += 1
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        return EditOutcome(applied=True)

    async def delete_file(self, path: Path) -> EditOutcome:
        self.deleted.append(path.resolve())
        self.buffers.pop(path.resolve(), None)
        path.unlink(missing_ok=True)
        return EditOutcome(applied=True)
