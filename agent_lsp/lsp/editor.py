"""LspEditor: the core Editor port over pygls's workspace and requests to the client."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import Any, Optional

from pygls.lsp.server import LanguageServer

from agent_lsp.core.ports import DiagnosticsReport, EditOutcome, FileEdit, OpenDocument
from agent_lsp.core.syntax import python_syntax_errors
from agent_lsp.lsp.convert import lsp_diagnostic, lsp_uri_to_path

log = logging.getLogger(__name__)
CLIENT_REQUEST_TIMEOUT = 10.0


class LspEditor:
    """What the tools see of the editor: its documents, its diagnostics, its edits."""

    def __init__(self, server: LanguageServer, client_diagnostics: bool) -> None:
        self._server = server
        self._client_diagnostics = client_diagnostics

    @property
    def roots(self) -> list[Path]:
        workspace = self._server.workspace
        uris = [f.uri for f in workspace.folders.values()] or ([workspace.root_uri] if workspace.root_uri else [])
        return [p for p in (lsp_uri_to_path(u) for u in uris) if p is not None]

    def open_documents(self) -> list[OpenDocument]:
        return [self._document(doc) for doc in list(self._server.workspace.text_documents.values())]

    def open_document(self, path: Path) -> Optional[OpenDocument]:
        real = os.path.realpath(path)
        for doc in list(self._server.workspace.text_documents.values()):
            doc_path = lsp_uri_to_path(doc.uri)
            if doc_path is not None and os.path.realpath(doc_path) == real:
                return self._document(doc)
        return None

    def _document(self, doc: Any) -> OpenDocument:
        path = lsp_uri_to_path(doc.uri)
        text = doc.source
        try:
            unsaved = path is None or path.read_text(encoding="utf-8", errors="replace") != text
        except OSError:
            unsaved = True
        return OpenDocument(uri=doc.uri, path=path, language_id=doc.language_id or "", version=doc.version,
                            text=text, unsaved=unsaved)

    async def diagnostics(self, paths: Optional[list[Path]]) -> DiagnosticsReport:
        if self._client_diagnostics:
            try:
                return await self._editor_diagnostics(paths)
            except Exception as e:  # a client that fails here still leaves the model something to go on
                log.warning("agent/diagnostics failed: %r", e)
        targets = paths if paths is not None else [d.path for d in self.open_documents() if d.path]
        items = []
        for path in targets:
            if path.suffix not in (".py", ".pyi"):
                continue
            doc = self.open_document(path)
            try:
                text = doc.text if doc else path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            items += python_syntax_errors(path, text)
        return DiagnosticsReport(items=items, from_editor=False)

    async def _editor_diagnostics(self, paths: Optional[list[Path]]) -> DiagnosticsReport:
        params = {"uris": [p.as_uri() for p in paths]} if paths is not None else {}
        answer = await asyncio.wait_for(
            self._server.protocol.send_request_async("agent/diagnostics", params), CLIENT_REQUEST_TIMEOUT
        )
        items = []
        for entry in (answer or {}).get("items", []):
            path = lsp_uri_to_path(entry.get("uri", ""))
            if path is not None:
                items += [lsp_diagnostic(path, d) for d in entry.get("diagnostics", [])]
        return DiagnosticsReport(items=items, from_editor=True)

    async def apply_edit(self, edit: FileEdit) -> EditOutcome:
        raise NotImplementedError("edits arrive with the edit tools")
