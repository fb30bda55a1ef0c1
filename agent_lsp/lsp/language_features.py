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
from typing import Any, Optional

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from agent_lsp.core.paths import uri_to_path
from agent_lsp.core.ports import LANGUAGE_METHODS, IndexStatus, LanguageFeatureError
from agent_lsp.core.positions import convert, document_uri, split_lines, walk
from agent_lsp.core.server_limits import reference_files_limit
from agent_lsp.lsp.convert import lsp_encoding
from agent_lsp.lsp.editor import LspEditor

log = logging.getLogger(__name__)
ORIGIN = "editor"


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
        return IndexStatus(state, f"{who} {'finished' if state == 'ready' else 'still'} indexing, as the editor says",
                           reference_files_limit(server))

    async def request(self, method: str, params: dict[str, Any], path: Optional[Path] = None) -> Any:
        if method not in self._methods:
            raise LanguageFeatureError(f"The editor's language servers do not answer {method}.")
        encoding = lsp_encoding(self._server)
        home = document_uri(params)
        if encoding != "utf-32":
            params = await self._convert(params, home, encoding, outward=True)
        answer = await self._send(method, params)
        if encoding != "utf-32" and answer is not None:
            answer = await self._convert(answer, home, encoding, outward=False)
        return answer

    async def _send(self, method: str, params: dict[str, Any]) -> Any:
        """agent/languageFeature, bounded in time; a timeout or an abort also cancels it on the client's side."""
        protocol = self._server.protocol
        timeout = self._server.in_force.current(self._editor.roots).language_timeout  # the setting in force
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

    async def _convert(self, value: Any, home: Optional[str], encoding: str, outward: bool) -> Any:
        """`value` with every position converted (core/positions.py) on its document's text: the open buffer's,
        else the file's."""
        uris: set[str] = set()
        walk(value, home, lambda uri, position: uris.add(uri) or position)
        texts: dict[str, Optional[str]] = {}
        for uri in uris:  # open buffers now, on the loop that owns them; files below, off it
            path = uri_to_path(uri)
            doc = self._editor.open_document(path) if path is not None else None
            texts[uri] = doc.text if doc is not None else None

        def run() -> Any:
            lines: dict[str, Optional[list[str]]] = {}

            def line_of(uri: str, number: int) -> Optional[str]:
                if uri not in lines:
                    text, path = texts.get(uri), uri_to_path(uri)
                    if text is None and path is not None:
                        try:
                            text = path.read_text(encoding="utf-8", errors="replace")
                        except OSError:
                            text = None
                    lines[uri] = split_lines(text) if text is not None else None
                doc = lines[uri]
                return doc[number] if doc is not None and 0 <= number < len(doc) else None

            return convert(value, home, encoding, line_of, outward)

        return await asyncio.to_thread(run)
