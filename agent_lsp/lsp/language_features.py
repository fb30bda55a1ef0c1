"""EditorLanguageFeatures: the LanguageFeatures port answered by the editor's own language servers, through the
request `agent/languageFeature {method, params}` to a client that declared `experimental.agent.languageFeatures`
(PROTOCOL §9).

The port speaks positions in characters; the wire speaks the negotiated encoding (UTF-16 unless the client chose
another). Every Position in the params and in the answer is converted here, against the text of the document it
belongs to: the open buffer's, else the file's.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from pathlib import Path
from typing import Any, Callable, Optional

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from agent_lsp.core.ports import LANGUAGE_METHODS, IndexStatus, LanguageFeatureError
from agent_lsp.lsp.convert import lsp_character, lsp_column, lsp_lines, lsp_uri_to_path
from agent_lsp.lsp.editor import LspEditor

log = logging.getLogger(__name__)
ORIGIN = "editor"

Fix = Callable[[str, dict], dict]
"""(uri, position) → the position converted for that document."""


class EditorLanguageFeatures:
    """Language intelligence from the editor: the methods the client declared, each answered by its own servers."""

    def __init__(self, server: LanguageServer, editor: LspEditor) -> None:
        self._server = server
        self._editor = editor
        declared = getattr(server, "agent_caps", {}).get("languageFeatures") or []
        self._methods = [m for m in declared if m in LANGUAGE_METHODS]

    def methods(self, path: Optional[Path] = None) -> dict[str, str]:
        return {method: ORIGIN for method in self._methods}

    def disk_changed(self, paths: Optional[list[Path]] = None) -> None:
        """Nothing to do: the editor's language servers watch the disk themselves."""

    def index(self, path: Optional[Path] = None) -> IndexStatus:
        """What the client last said of its language servers (agent/languageStatus); unknown until it does."""
        said = getattr(self._server, "language_status", None)
        if said is None:
            return IndexStatus("unknown", "the editor does not say whether its language servers finished indexing")
        state, server = said
        who = f"the editor's {server}" if server else "the editor's language servers"
        return IndexStatus(state, f"{who} {'finished' if state == 'ready' else 'still'} indexing, as the editor says")

    async def request(self, method: str, params: dict[str, Any], path: Optional[Path] = None) -> Any:
        if method not in self._methods:
            raise LanguageFeatureError(f"The editor's language servers do not answer {method}.")
        encoding = self._encoding()
        home = _document_uri(params)
        if encoding != "utf-32":
            params = await self._convert(params, home, lsp_character, encoding)
        answer = await self._send(method, params)
        if encoding != "utf-32" and answer is not None:
            answer = await self._convert(answer, home, lsp_column, encoding)
        return answer

    def _encoding(self) -> str:
        negotiated = self._server.workspace.position_encoding
        return str(getattr(negotiated, "value", negotiated) or "utf-16")

    async def _send(self, method: str, params: dict[str, Any]) -> Any:
        """agent/languageFeature, bounded in time; a timeout or an abort also cancels it on the client's side."""
        protocol = self._server.protocol
        timeout = self._server.layers.resolve().language_timeout  # the languageTimeout setting in force
        msg_id = str(uuid.uuid4())
        future = protocol.send_request_async("agent/languageFeature", {"method": method, "params": params},
                                             msg_id=msg_id)
        try:
            async with asyncio.timeout(timeout):  # not wait_for (models/retry.py says why)
                return await future
        except TimeoutError:
            protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
            log.info("agent/languageFeature %s: no answer within %g s", method, timeout)
            raise LanguageFeatureError(f"The editor's language servers did not answer {method} within "
                                       f"{timeout:g} s.") from None
        except asyncio.CancelledError:
            protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
            raise
        except JsonRpcException as e:
            raise LanguageFeatureError(f"The editor answered {method} with an error: {e.message}") from None

    async def _convert(self, value: Any, home: Optional[str], convert: Callable[[str, int, str], int],
                       encoding: str) -> Any:
        """`value` with every position converted by `convert(line, character, encoding)` on its document's text."""
        uris: set[str] = set()
        _walk(value, home, lambda uri, position: uris.add(uri) or position)
        texts: dict[str, Optional[str]] = {}
        for uri in uris:  # open buffers now, on the loop that owns them; files below, off it
            path = lsp_uri_to_path(uri)
            doc = self._editor.open_document(path) if path is not None else None
            texts[uri] = doc.text if doc is not None else None

        def run() -> Any:
            lines: dict[str, Optional[list[str]]] = {}

            def lines_of(uri: str) -> Optional[list[str]]:
                if uri not in lines:
                    text, path = texts.get(uri), lsp_uri_to_path(uri)
                    if text is None and path is not None:
                        try:
                            text = path.read_text(encoding="utf-8", errors="replace")
                        except OSError:
                            text = None
                    lines[uri] = lsp_lines(text) if text is not None else None
                return lines[uri]

            def fix(uri: str, position: dict) -> dict:
                doc, line = lines_of(uri), position["line"]
                if doc is None or not 0 <= line < len(doc):
                    return position
                return {"line": line, "character": convert(doc[line], position["character"], encoding)}

            return _walk(value, home, fix)

        return await asyncio.to_thread(run)


def _document_uri(params: Any) -> Optional[str]:
    """The document a request is about: its textDocument, or the call hierarchy item it starts from."""
    if not isinstance(params, dict):
        return None
    for key in ("textDocument", "item"):
        inner = params.get(key)
        if isinstance(inner, dict) and isinstance(inner.get("uri"), str):
            return inner["uri"]
    return None


def _is_position(value: dict) -> bool:
    return value.keys() == {"line", "character"} and all(
        isinstance(value[k], int) and not isinstance(value[k], bool) for k in ("line", "character"))


def _own_uri(value: dict) -> Optional[str]:
    """The document a shape's own ranges belong to: a Location's uri, a LocationLink's target, a TextDocumentEdit's
    document."""
    for key in ("uri", "targetUri"):
        if isinstance(value.get(key), str):
            return value[key]
    doc = value.get("textDocument")
    return doc["uri"] if isinstance(doc, dict) and isinstance(doc.get("uri"), str) else None


def _walk(value: Any, uri: Optional[str], fix: Fix) -> Any:
    """A copy of an LSP value with `fix(uri, position)` applied to every Position, `uri` being the document the
    position is in: the nearest enclosing shape's own document, else the request's."""
    if isinstance(value, list):
        return [_walk(v, uri, fix) for v in value]
    if not isinstance(value, dict):
        return value
    if _is_position(value):
        return fix(uri, value) if uri is not None else value
    here = _own_uri(value) or uri
    out = {}
    for key, v in value.items():
        if key == "data":  # opaque to us: kept as the server sent it
            out[key] = v
        elif key == "originSelectionRange":  # a LocationLink's origin is in the request's document
            out[key] = _walk(v, uri, fix)
        elif key == "fromRanges" and isinstance(value.get("from"), dict):  # an incoming call: in the caller
            out[key] = _walk(v, _own_uri(value["from"]) or uri, fix)
        elif key == "changes" and isinstance(v, dict):  # a WorkspaceEdit's {uri: TextEdit[]}
            out[key] = {u: _walk(edits, u, fix) for u, edits in v.items()}
        else:
            out[key] = _walk(v, here, fix)
    return out

