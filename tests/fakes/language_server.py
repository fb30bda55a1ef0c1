"""A small language server (pygls) for the sidecar's fault cases: `textDocument/definition` of a word answered in
the negotiated position encoding (pygls's codec), a `textDocument/hover` that never answers (it records its start
and its cancellation), and `workspace/symbol` reporting those records as symbol names ("hover:1",
"cancelled:1"); the query "config:<section>" answers what `workspace/configuration` gives for that section, and
"init" the `initializationOptions` it was started with (JSON, as one symbol's name); "progress:begin" and
"progress:end" send work-done progress of that kind (token "index") before answering, "status:busy" and
"status:quiescent" rust-analyzer's `experimental/serverStatus`, "watched" answers each
`workspace/didChangeWatchedFiles` received (JSON). No call hierarchy, no rename.

Run: python tests/fakes/language_server.py [--stubborn]   (stdio; --stubborn: it outlives the end of its stdin and
ignores SIGTERM and SIGHUP, as a server that only a parent-death signal takes down)
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer

server = LanguageServer("fake-language-server", "1")
records: list[str] = []
started: dict = {}
watched: list = []


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched_files(ls: LanguageServer, params: types.DidChangeWatchedFilesParams):
    watched.append([(Path(c.uri[len("file://"):]).name, int(c.type)) for c in params.changes])


@server.feature(types.INITIALIZE)
def initialize(ls: LanguageServer, params: types.InitializeParams):
    started["initializationOptions"] = params.initialization_options


def _word(text: str, offset: int) -> tuple[int, int]:
    start = end = offset
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
        start -= 1
    while end < len(text) and (text[end].isalnum() or text[end] == "_"):
        end += 1
    return start, end


@server.feature(types.TEXT_DOCUMENT_DEFINITION)
def definition(ls: LanguageServer, params: types.DefinitionParams):
    doc = ls.workspace.get_text_document(params.text_document.uri)
    start, end = _word(doc.source, doc.offset_at_position(params.position))
    word = doc.source[start:end]
    at = doc.source.find(f"def {word}(") if word else -1
    if at < 0:
        return None
    at += 4
    return types.Location(uri=doc.uri, range=types.Range(start=doc.client_position_at_offset(at),
                                                          end=doc.client_position_at_offset(at + len(word))))


@server.feature(types.TEXT_DOCUMENT_HOVER)
async def hover(ls: LanguageServer, params: types.HoverParams):
    n = sum(1 for r in records if r.startswith("hover:")) + 1
    records.append(f"hover:{n}")
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        records.append(f"cancelled:{n}")
        raise


@server.feature(types.WORKSPACE_SYMBOL)
async def symbols(ls: LanguageServer, params: types.WorkspaceSymbolParams):
    names = records
    if params.query.startswith("config:"):
        answer = await ls.workspace_configuration_async(types.ConfigurationParams(
            items=[types.ConfigurationItem(section=params.query[len("config:"):] or None)]))
        names = [json.dumps(answer)]
    elif params.query == "init":
        names = [json.dumps(started["initializationOptions"])]
    elif params.query.startswith("progress:"):
        kind = params.query[len("progress:"):]
        value = types.WorkDoneProgressBegin(title="Indexing") if kind == "begin" else types.WorkDoneProgressEnd()
        ls.progress(types.ProgressParams(token="index", value=value))
        names = [kind]
    elif params.query.startswith("status:"):  # rust-analyzer's experimental/serverStatus
        quiescent = params.query == "status:quiescent"
        ls.protocol.notify("experimental/serverStatus", {"health": "ok", "quiescent": quiescent,
                                                         "message": None if quiescent else "Fetching metadata"})
        names = [params.query]
    elif params.query == "watched":
        names = [json.dumps(watched)]
    here = types.Location(uri="file:///records", range=types.Range(start=types.Position(0, 0),
                                                                    end=types.Position(0, 0)))
    return [types.SymbolInformation(name=n, kind=types.SymbolKind.Event, location=here) for n in names]


if __name__ == "__main__":
    if "--stubborn" in sys.argv:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
    server.start_io()
    if "--stubborn" in sys.argv:
        time.sleep(3600)
