"""DiskEditor: the core Editor port over the local file system, for a front end without an editor's buffers (a
headless run; an ACP client without fs/*). An edit is written only while the file is still the text it was computed
on, which stands in for the document versions LSP has."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from agent_lsp.core.ports import Diagnostic, DiagnosticsReport, EditOutcome, FileEdit, OpenDocument
from agent_lsp.core.syntax import python_syntax_errors


def edited(edit: FileEdit) -> str:
    """The text `edit` makes of its base text."""
    text = edit.base_text
    for e in sorted(edit.edits, key=lambda e: e.start, reverse=True):
        text = text[: e.start] + e.new_text + text[e.end:]
    return text


class DiskEditor:
    """Files as the disk has them: nothing is open, diagnostics are the Python syntax errors computed here."""

    changed = "the file changed on disk since it was read"
    """Why an edit computed on older text is refused."""
    no_diagnostics = "there is no editor here to give its diagnostics"
    """Why the diagnostics are only those computed here."""

    def __init__(self, roots: list[Path]) -> None:
        self._roots = roots
        self.applied: dict[Path, tuple[Optional[str], str]] = {}
        """The last edit written to each file: (text before, None for a new file; text after)."""

    @property
    def roots(self) -> list[Path]:
        return self._roots

    def open_documents(self) -> list[OpenDocument]:
        return []

    def open_document(self, path: Path) -> Optional[OpenDocument]:
        return None

    async def current(self, path: Path) -> Optional[str]:
        """The text an edit must still be based on now; None: no such file."""
        try:
            return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None
        except OSError:
            return None

    async def write(self, path: Path, text: str) -> Optional[str]:
        """Write `text` to `path`; why not, when it could not be written."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        except OSError as e:
            return f"it could not be written: {e.strerror or e}"
        return None

    async def diagnostics(self, paths: Optional[list[Path]]) -> DiagnosticsReport:
        """Python syntax errors of the files, computed here."""
        items: list[Diagnostic] = []
        for path in paths if paths is not None else [d.path for d in self.open_documents() if d.path]:
            if path.suffix in (".py", ".pyi"):
                text = await self.current(path)
                items += python_syntax_errors(path, text) if text is not None else []
        return DiagnosticsReport(items=items, from_editor=False, unavailable=self.no_diagnostics)

    async def apply_edit(self, edit: FileEdit) -> EditOutcome:
        """Write the edited text, unless the file changed since it was read (or a file to create exists now)."""
        now = await self.current(edit.path)
        if (now or "") != edit.base_text or (edit.create and now):
            return EditOutcome(applied=False, message=self.changed)
        text = edited(edit)
        problem = await self.write(edit.path, text)
        if problem is not None:
            return EditOutcome(applied=False, message=problem)
        self.applied[edit.path] = (now, text)
        return EditOutcome(applied=True)

    async def delete_file(self, path: Path) -> EditOutcome:
        """The file goes from disk."""
        try:
            path.unlink(missing_ok=True)
        except OSError as e:
            return EditOutcome(applied=False, message=str(e))
        return EditOutcome(applied=True)
