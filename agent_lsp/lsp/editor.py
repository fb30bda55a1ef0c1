"""LspEditor: the core Editor port over pygls's workspace and requests to the client."""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
import weakref
from pathlib import Path
from typing import Any, Optional

import attrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from agent_lsp.config import env_seconds
from agent_lsp.core.paths import real, uri_to_path
from agent_lsp.core.ports import DiagnosticsReport, EditOutcome, FileEdit, OpenDocument
from agent_lsp.core.positions import split_lines
from agent_lsp.core.syntax import python_syntax_errors
from agent_lsp.core.tool import ToolError
from agent_lsp.lsp.convert import lsp_diagnostic, lsp_encoding, lsp_text_edits

log = logging.getLogger(__name__)
# How long to wait for the client (the environment overrides them: the e2e tests make them generous ceilings).
CLIENT_REQUEST_TIMEOUT = env_seconds("AGENT_LSP_CLIENT_TIMEOUT", 10.0)
DID_CHANGE_WAIT = env_seconds("AGENT_LSP_DID_CHANGE_WAIT", 1.0)


class LspEditor:
    """What the tools see of the editor: its documents, its diagnostics, its edits."""

    def __init__(self, server: LanguageServer, client_diagnostics: bool) -> None:
        self._server = server
        self._client_diagnostics = client_diagnostics

    @property
    def roots(self) -> list[Path]:
        workspace = self._server.workspace
        uris = [f.uri for f in workspace.folders.values()] or ([workspace.root_uri] if workspace.root_uri else [])
        return [p for p in (uri_to_path(u) for u in uris) if p is not None]

    def open_documents(self) -> list[OpenDocument]:
        return [self._document(doc) for doc in list(self._server.workspace.text_documents.values())]

    def open_document(self, path: Path) -> Optional[OpenDocument]:
        docs = self._server.workspace.text_documents
        uri = buffers_of(self._server.workspace).uri_of(docs, path)
        return self._document(docs[uri]) if uri is not None else None

    def _document(self, doc: Any) -> OpenDocument:
        path = uri_to_path(doc.uri)
        uri, text, version = doc.uri, doc.source, doc.version  # as of now: didChange replaces them on `doc`
        index = buffers_of(self._server.workspace)
        return OpenDocument(uri=uri, path=path, language_id=doc.language_id or "", version=version,
                            text=text, unsaved=lambda: index.unsaved(uri, path, version, text))

    async def diagnostics(self, paths: Optional[list[Path]]) -> DiagnosticsReport:
        if self._client_diagnostics:
            try:
                return await self._editor_diagnostics(paths)
            except Exception as e:  # a client that fails here still leaves the model something to go on
                log.warning("agent/diagnostics failed: %r", e)
        targets = paths if paths is not None else [d.path for d in self.open_documents() if d.path]
        texts = {}
        for path in targets:
            if path.suffix in (".py", ".pyi"):
                doc = self.open_document(path)
                texts[path] = doc.text if doc else None

        def check() -> list:  # compiling every open buffer is CPU work: not on the event loop
            items = []
            for path, text in texts.items():
                try:
                    items += python_syntax_errors(path, text if text is not None else
                                                  path.read_text(encoding="utf-8", errors="replace"))
                except OSError:
                    continue
            return items

        why = ("the editor's answer to agent/diagnostics failed" if self._client_diagnostics else
               "the editor does not share them with agent-lsp")
        return DiagnosticsReport(items=await asyncio.to_thread(check), from_editor=False, unavailable=why)

    async def _editor_diagnostics(self, paths: Optional[list[Path]]) -> DiagnosticsReport:
        params = {"uris": [p.as_uri() for p in paths]} if paths is not None else {}
        answer = await self.request("agent/diagnostics", params)
        encoding = lsp_encoding(self._server)
        items = []
        for entry in (answer or {}).get("items", []):
            path = uri_to_path(entry.get("uri", ""))
            diagnostics = entry.get("diagnostics", [])
            if path is not None and diagnostics:
                lines = self._lines(path) if encoding != "utf-32" else None
                items += [lsp_diagnostic(path, d, lines, encoding) for d in diagnostics]
        return DiagnosticsReport(items=items, from_editor=True)

    def _lines(self, path: Path) -> Optional[list[str]]:
        """The lines of `path` as the editor has it (to count columns in characters); None when unreadable."""
        doc = self.open_document(path)
        try:
            return split_lines(doc.text if doc else path.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            return None

    async def apply_edit(self, edit: FileEdit) -> EditOutcome:
        """workspace/applyEdit shaped by what the client declared (PROTOCOL §4 "Edits")."""
        uri = edit.path.as_uri()
        caps = self._server.client_capabilities.workspace
        workspace_edit = caps.workspace_edit if caps else None
        versioned = bool(workspace_edit and workspace_edit.document_changes)
        can_create = bool(versioned and types.ResourceOperationKind.Create in (workspace_edit.resource_operations or []))
        text_edits = lsp_text_edits(edit.base_text, edit.edits, lsp_encoding(self._server))
        if edit.create and not can_create:
            edit.path.parent.mkdir(parents=True, exist_ok=True)
            edit.path.write_text(edit.edits[0].new_text, encoding="utf-8")
            return EditOutcome(applied=True, message="The editor cannot create files, so agent-lsp wrote it to disk")
        if versioned:
            changes = [{"textDocument": {"uri": uri, "version": edit.version}, "edits": text_edits}]
            if edit.create:
                changes.insert(0, {"kind": "create", "uri": uri, "options": {"ignoreIfExists": True}})
            payload = {"documentChanges": changes}
        else:
            doc = self.open_document(edit.path)
            if (doc.version if doc else None) != edit.version:
                return EditOutcome(applied=False, message="the document changed since it was read")
            payload = {"changes": {uri: text_edits}}
        answer = await self.request("workspace/applyEdit", {"label": edit.label, "edit": payload})
        if not (answer or {}).get("applied"):
            return EditOutcome(applied=False, message=(answer or {}).get("failureReason") or "")
        if edit.version is not None:
            await self._changed(edit.path, edit.version)
        return EditOutcome(applied=True)

    async def delete_file(self, path: Path) -> EditOutcome:
        """A DeleteFile resource operation when the client declared it (its buffer closes with it); otherwise the
        file is removed from disk."""
        caps = self._server.client_capabilities.workspace
        workspace_edit = caps.workspace_edit if caps else None
        if workspace_edit and workspace_edit.document_changes and \
                types.ResourceOperationKind.Delete in (workspace_edit.resource_operations or []):
            change = {"kind": "delete", "uri": path.as_uri(), "options": {"ignoreIfNotExists": True}}
            answer = await self.request("workspace/applyEdit", {"label": f"agent-lsp: delete {path.name}",
                                                                "edit": {"documentChanges": [change]}})
            if not (answer or {}).get("applied"):
                return EditOutcome(applied=False, message=(answer or {}).get("failureReason") or "")
            return EditOutcome(applied=True)
        try:
            path.unlink(missing_ok=True)
        except OSError as e:
            return EditOutcome(applied=False, message=str(e))
        return EditOutcome(applied=True, message="The editor cannot delete files, so agent-lsp removed it from disk")

    async def _changed(self, path: Path, version: int) -> None:
        """Wait (briefly) for the client's didChange of an applied edit, so diagnostics see the new text."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + DID_CHANGE_WAIT
        while loop.time() < deadline:
            doc = self.open_document(path)
            if doc is None or doc.version != version:
                return
            await asyncio.sleep(0.01)

    async def request(self, method: str, params: Any) -> Any:
        """A request to the client, bounded in time; an abort also cancels it on the client's side."""
        msg_id = str(uuid.uuid4())
        protocol = self._server.protocol
        typed = protocol.get_message_type(method)
        if typed is not None:  # an LSP method: pygls serialises only its lsprotocol params type
            params = protocol.fm.converter.structure(params, attrs.fields(typed).params.type)
        future = protocol.send_request_async(method, params, msg_id=msg_id)
        try:
            async with asyncio.timeout(CLIENT_REQUEST_TIMEOUT):  # not wait_for (models/retry.py says why)
                answer = await future
        except TimeoutError:
            protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
            raise ToolError(f"The editor did not answer {method} within {CLIENT_REQUEST_TIMEOUT:.0f} s.") from None
        except asyncio.CancelledError:
            protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
            raise
        except JsonRpcException as e:
            raise ToolError(f"The editor answered {method} with an error: {e.message}") from None
        return answer if not hasattr(answer, "applied") else {"applied": answer.applied,
                                                              "failureReason": answer.failure_reason}


class Buffers:
    """Per workspace: open buffers by real path (lookups without a scan), and whether each differs from its file,
    remembered until the buffer or the file changes."""

    def __init__(self) -> None:
        self._real_of: dict[str, Optional[str]] = {}
        """uri → the real path of its file"""
        self._by_real: dict[str, str] = {}
        self._unsaved: dict[str, tuple[tuple, bool]] = {}

    def uri_of(self, docs: dict[str, Any], path: Path) -> Optional[str]:
        """The uri under which `docs` (uri → document) holds the buffer of `path`, if open."""
        uri = path.as_uri()
        if uri in docs:
            return uri
        if docs.keys() != self._real_of.keys():
            self._sync(docs)
        uri = self._by_real.get(str(real(path)))
        return uri if uri in docs else None

    def _sync(self, docs: dict[str, Any]) -> None:
        for uri in self._real_of.keys() - docs.keys():
            name = self._real_of.pop(uri)
            self._unsaved.pop(uri, None)
            if name is not None and self._by_real.get(name) == uri:
                del self._by_real[name]
        for uri in docs.keys() - self._real_of.keys():
            path = uri_to_path(uri)  # a real path already
            self._real_of[uri] = str(path) if path is not None else None
            if path is not None:
                self._by_real[str(path)] = uri

    def unsaved(self, uri: str, path: Optional[Path], version: Any, text: str) -> bool:
        """Whether `text` differs from the file's bytes; the file is read only when its size says nothing."""
        if path is None:
            return True
        try:
            stat = os.stat(path)
        except OSError:
            return True
        key = (version, len(text), stat.st_mtime_ns, stat.st_size)
        cached = self._unsaved.get(uri)
        if cached is not None and cached[0] == key:
            return cached[1]
        data = text.encode("utf-8", errors="surrogatepass")
        if len(data) != stat.st_size:
            answer = True
        else:
            try:
                answer = path.read_bytes() != data
            except OSError:
                answer = True
        self._unsaved[uri] = (key, answer)
        return answer


_BUFFERS: "weakref.WeakKeyDictionary[Any, Buffers]" = weakref.WeakKeyDictionary()


def buffers_of(workspace: Any) -> Buffers:
    """The Buffers of a pygls workspace (one per workspace, kept as long as it lives)."""
    buffers = _BUFFERS.get(workspace)
    if buffers is None:
        buffers = _BUFFERS[workspace] = Buffers()
    return buffers
