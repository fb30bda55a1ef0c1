"""The editor's open buffers as suggestions see them (PROTOCOL §10): document sync (the buffers changed lately,
from didChange and didClose), completions' Documents port over pygls's workspace, and each request's document
pinned as the request was read — "the document as of this request", for every kind of suggestion: a didChange
read after the request never changes what it is answered from."""

from __future__ import annotations

import weakref
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional
from urllib.parse import unquote

from lsprotocol import types

RECENT = 64
"""Open buffers whose last change is remembered (the context of suggestions in other files)."""
PINS_KEPT = 64
"""Pins of requests whose handler has not run yet kept per connection (a request cancelled before its handler ran
leaves one behind)."""
FORGOTTEN_KEPT = 4096
"""Pins beyond PINS_KEPT, their text dropped and their version kept: the handler of such a request (read while 64
newer ones waited, as in a burst of requests) answers from the document when it is still at that version, and nothing
rather than from a later version."""
PINNED = {"textDocument/inlineCompletion", "textDocument/copilotInlineEdit"}
"""Requests whose document is pinned as they are read (lsp/wire.py calls `pin`); a new kind of suggestion adds
its method here and reads `as_of_request`."""


@dataclass(frozen=True)
class Pinned:
    """An open document as a request found it when it was read."""

    uri: str
    version: Optional[int]
    source: str
    language_id: str


_PINS: "weakref.WeakKeyDictionary[Any, dict[int, tuple[Any, Optional[Pinned]]]]" = weakref.WeakKeyDictionary()
_FORGOTTEN: "weakref.WeakKeyDictionary[Any, dict[int, tuple[Any, Optional[int]]]]" = weakref.WeakKeyDictionary()
"""Dropped pins by id(params): (params, the version it pinned; None: not open, or no version)."""
_RECENT: "weakref.WeakKeyDictionary[Any, OrderedDict[str, int]]" = weakref.WeakKeyDictionary()


def pin(protocol: Any, params: Any) -> None:
    """Keep the document `params` names as it is now, for the handler that runs later (called as the request is
    read, before any later message is handled)."""
    if not isinstance(params, dict) or not isinstance(params.get("textDocument"), dict):
        return  # bad params: the handler answers -32602
    uri = params["textDocument"].get("uri")
    doc = current(protocol, uri) if isinstance(uri, str) else None
    pinned = None if doc is None else Pinned(doc.uri, doc.version, doc.source, doc.language_id or "")
    pins = _PINS.setdefault(protocol, {})
    pins[id(params)] = (params, pinned)  # params kept: its id is not reused meanwhile
    if len(pins) > PINS_KEPT:
        oldest = next(iter(pins))
        forgotten = _FORGOTTEN.setdefault(protocol, {})
        dropped, was = pins.pop(oldest)
        forgotten[oldest] = (dropped, None if was is None else was.version)
        if len(forgotten) > FORGOTTEN_KEPT:
            del forgotten[next(iter(forgotten))]


def as_of_request(ls: Any, params: Any, uri: str) -> Optional[Pinned]:
    """The document `uri` as the request with `params` found it when it was read (as it is now when it was not
    pinned); None when it was not open, or when its pin was dropped and the document has changed since (no longer
    known as it was read)."""
    pins = _PINS.get(ls.protocol, {})
    kept = pins.pop(id(params), None)
    if kept is not None and kept[0] is params:
        return kept[1]
    doc = current(ls, uri)
    dropped = _FORGOTTEN.get(ls.protocol, {}).pop(id(params), None)
    if dropped is not None and dropped[0] is params and (doc is None or dropped[1] is None
                                                          or dropped[1] != doc.version):
        return None
    return None if doc is None else Pinned(doc.uri, doc.version, doc.source, doc.language_id or "")


def current(ls: Any, uri: str) -> Any:
    """pygls's document for `uri` when the editor has it open, else None. (pygls keeps documents under the URI
    unescaped: `file:///c%3A/a%20b.py` is there as `file:///c:/a b.py`.)"""
    return ls.workspace.text_documents.get(unquote(uri))


def open_document(doc: Any) -> Any:
    """A pygls document (or a Pinned one) as the core's OpenDocument."""
    from agent_lsp.core.paths import uri_to_path
    from agent_lsp.core.ports import OpenDocument

    return OpenDocument(uri=doc.uri, path=uri_to_path(doc.uri), language_id=doc.language_id or "",
                        version=doc.version, text=doc.source, unsaved=True)


LISTENERS: list[Callable[[Any, str, str], None]] = []
"""Told (server, "changed" or "closed", uri) after a document changed or closed: next edits (lsp/next_edit.py)."""


def register_document_sync(server: Any, on_close: Callable[[Any, str], None],
                           on_change: Callable[[Any, str], None]) -> None:
    """Keep the buffers changed lately from `server`'s didChange and didClose (pygls keeps the text itself);
    `on_close(ls, uri)` and the `LISTENERS` are told when a document closes, `on_change(ls, uri)` and the
    `LISTENERS` when one changes (its new text in place)."""
    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: Any, params: types.DidChangeTextDocumentParams) -> None:
        on_change(ls, params.text_document.uri)
        for listener in LISTENERS:
            listener(ls, "changed", params.text_document.uri)
        ranges = [c.range for c in params.content_changes if isinstance(c, types.TextDocumentContentChangePartial)]
        recent = _RECENT.setdefault(ls, OrderedDict())
        uri = params.text_document.uri
        recent[uri] = ranges[-1].start.line if ranges else recent.get(uri, 0)
        recent.move_to_end(uri)
        if len(recent) > RECENT:
            recent.popitem(last=False)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: Any, params: types.DidCloseTextDocumentParams) -> None:
        _RECENT.get(ls, {}).pop(params.text_document.uri, None)
        on_close(ls, params.text_document.uri)
        for listener in LISTENERS:
            listener(ls, "closed", params.text_document.uri)


class Buffers:
    """completions' Documents port over pygls's workspace: the open buffers as they are now."""

    def __init__(self, server: Any) -> None:
        self._server = server

    @property
    def roots(self) -> list[Path]:
        return roots(self._server)

    def get(self, uri: str) -> Any:
        doc = current(self._server, uri)
        return open_document(doc) if doc is not None else None

    def recent(self) -> list[tuple[str, int]]:
        return list(reversed(_RECENT.get(self._server, {}).items()))

    def all(self) -> list[Any]:
        return [open_document(doc) for doc in list(self._server.workspace.text_documents.values())]


def roots(server: Any) -> list[Path]:
    """The workspace folders, as the editor port sees them."""
    from agent_lsp.lsp.editor import LspEditor

    return LspEditor(server, client_diagnostics=False).roots
