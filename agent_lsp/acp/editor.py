"""AcpEditor: the core Editor port over an ACP client — its fs/* when offered, else the session's cwd on disk."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Awaitable, Callable, Optional

from agent_lsp.core.ports import Diagnostic, DiagnosticsReport, EditOutcome, FileEdit, OpenDocument
from agent_lsp.core.syntax import python_syntax_errors
from agent_lsp.core.tool import Preview, ToolAround, ToolContext, ToolError, ToolInput, ToolOutput
from agent_lsp.tools.paths import resolve

log = logging.getLogger(__name__)
CHANGED = "the file changed in the editor since it was read"


class AcpEditor:
    """Files as the ACP client has them. ACP does not tell an agent which buffers are open, so a file becomes an
    "open document" only while a tool call that names it runs (ThroughClient fetches it with fs/read_text_file:
    the editor's unsaved text wins). Edits are checked against the client's current text before they are written,
    which stands in for the document versions LSP has."""

    def __init__(self, conn: Any, session_id: str, root: Path, read: bool, write: bool,
                 flush: Callable[[], Awaitable[None]]) -> None:
        self._conn = conn
        self._flush = flush
        """Sends the updates still queued: what the client is asked follows what it was told."""
        self._session_id = session_id
        self._roots = [root]
        self._read = read
        self._write = write
        self._buffers: dict[Path, OpenDocument] = {}
        self.applied: dict[Path, tuple[Optional[str], str]] = {}
        """The last edit written to each file: (text before, text after), for the client's diff view."""

    @property
    def roots(self) -> list[Path]:
        return self._roots

    def open_documents(self) -> list[OpenDocument]:
        return list(self._buffers.values())

    def open_document(self, path: Path) -> Optional[OpenDocument]:
        return self._buffers.get(path)

    async def fetch(self, raw: Any) -> Optional[Path]:
        """Make the client's text of `raw` (a tool's path input) the open document for it; None when it has none."""
        if not self._read or not isinstance(raw, str):
            return None
        try:
            path = resolve(self._roots, raw)
        except ToolError:
            return None  # the tool itself refuses it, with the message the model should read
        text = await self._client_text(path)
        if text is None:
            return None
        try:
            unsaved = path.read_text(encoding="utf-8", errors="replace") != text
        except OSError:
            unsaved = True
        self._buffers[path] = OpenDocument(uri=path.as_uri(), path=path, language_id="", version=None, text=text,
                                           unsaved=unsaved)
        return path

    def forget(self, path: Optional[Path]) -> None:
        """The call that fetched `path` is over: the next one reads it afresh."""
        if path is not None:
            self._buffers.pop(path, None)

    async def _client_text(self, path: Path) -> Optional[str]:
        await self._flush()
        try:
            return (await self._conn.read_text_file(session_id=self._session_id, path=str(path))).content
        except Exception as e:  # no such file in the editor: the disk decides
            log.info("fs/read_text_file %s: %r", path, e)
            return None

    async def _current(self, path: Path) -> Optional[str]:
        """The text an edit must still be based on now: the client's, else the disk's; None: no such file."""
        if self._read:
            text = await self._client_text(path)
            if text is not None:
                return text
        try:
            return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None
        except OSError:
            return None

    async def diagnostics(self, paths: Optional[list[Path]]) -> DiagnosticsReport:
        """ACP carries no diagnostics: Python syntax errors of the files, computed here."""
        items: list[Diagnostic] = []
        for path in paths if paths is not None else [d.path for d in self.open_documents() if d.path]:
            if path.suffix in (".py", ".pyi"):
                text = await self._current(path)
                items += python_syntax_errors(path, text) if text is not None else []
        return DiagnosticsReport(items=items, from_editor=False,
                                 unavailable="the Agent Client Protocol does not carry the editor's diagnostics")

    async def apply_edit(self, edit: FileEdit) -> EditOutcome:
        """Write the edited text through fs/write_text_file (or to disk), unless the file changed since it was read."""
        now = await self._current(edit.path)
        if (now or "") != edit.base_text or (edit.create and now):
            return EditOutcome(applied=False, message=CHANGED)
        text = edit.base_text
        for e in sorted(edit.edits, key=lambda e: e.start, reverse=True):
            text = text[: e.start] + e.new_text + text[e.end:]
        if self._write:
            await self._flush()
            try:
                await self._conn.write_text_file(session_id=self._session_id, path=str(edit.path), content=text)
            except Exception as e:  # the client refused: the model is told to re-read
                return EditOutcome(applied=False, message=f"the editor refused it: {e}")
        else:
            edit.path.parent.mkdir(parents=True, exist_ok=True)
            edit.path.write_text(text, encoding="utf-8")
        self.applied[edit.path] = (None if now is None else now, text)
        return EditOutcome(applied=True)

    async def delete_file(self, path: Path) -> EditOutcome:
        """ACP has no way to ask the client to delete a file: it goes from disk, and the client sees it go."""
        try:
            path.unlink(missing_ok=True)
        except OSError as e:
            return EditOutcome(applied=False, message=str(e))
        self._buffers.pop(path, None)
        return EditOutcome(applied=True)


class ThroughClient(ToolAround):
    """A file tool whose file is fetched from the client (fs/read_text_file) for the length of each call."""

    async def preview(self, ctx: ToolContext, input: ToolInput) -> Preview:
        if self.kind != "edit":  # only an edit's preview (its diff) reads the file
            return await self.inner.preview(ctx, input)
        path = await ctx.editor.fetch(getattr(input, "path", None))
        try:
            return await self.inner.preview(ctx, input)
        finally:
            ctx.editor.forget(path)

    async def run(self, ctx: ToolContext, input: ToolInput) -> ToolOutput:
        path = await ctx.editor.fetch(getattr(input, "path", None))
        try:
            return await self.inner.run(ctx, input)
        finally:
            ctx.editor.forget(path)
