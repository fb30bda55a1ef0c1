"""Suggestions as you type at the LSP edge (PROTOCOL §10): `textDocument/inlineCompletion`, the acceptance
notifications and command, `agent/completionStats`. Each handler parses, hands plain inputs to
agent_lsp/completions/ (imported on the first request: start-up registers only these handlers) and converts.
Positions stay in the negotiated encoding on the wire; completions/ counts characters."""

from __future__ import annotations

import logging
import re
import weakref
from collections import OrderedDict
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, Callable, Optional

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

log = logging.getLogger(__name__)

INLINE_COMPLETION = types.TEXT_DOCUMENT_INLINE_COMPLETION
SHOWN = "textDocument/didShowCompletion"
PARTIALLY_ACCEPTED = "textDocument/didPartiallyAcceptCompletion"
STATS = "agent/completionStats"
ACCEPTED = "agent.completionAccepted"
RAW_PARAMS = frozenset({INLINE_COMPLETION})
"""LSP methods whose params reach their handler as sent (pygls would structure them, and a bad field would be
answered without its name)."""
RECENT = 64
"""Open buffers whose last change is remembered (the context of suggestions in other files)."""
_LINE_END = re.compile(r"\r\n|\r|\n")
DOCUMENT_LISTENERS: list[Callable[[Any, str, str], None]] = []
"""Called with (server, "changed" or "closed", uri) after a document changed or closed (next edits, lsp/next_edit.py)."""
EXTRA_STATS: dict[str, Callable[[Any], dict]] = {}
"""More members of `agent/completionStats` by field, each from the server (next edits, lsp/next_edit.py)."""


def register_inline_completion(server: Any) -> None:
    """Register the handlers of PROTOCOL §10 on `server` (the capability itself is set in `initialize`)."""
    recent: OrderedDict[str, int] = OrderedDict()
    _RECENT[server] = recent

    @server.feature(INLINE_COMPLETION)
    async def inline_completion(ls: Any, params: Any) -> dict:
        uri, line, character, trigger_version, indent = parse(params)
        doc = _open_text_document(ls, uri)
        if doc is None:  # never opened (or closed): nothing to complete from
            return {"items": []}
        offset = offset_of(doc.source, line, character, _encoding(ls))
        if offset is None:  # past the end of its line or of the document
            return {"items": []}
        engine = await _engine(ls)
        from agent_lsp.completions.suggestions import Ask

        suggestion = await engine.suggest(Ask(_open_document(doc), offset, indent, trigger_version))
        if suggestion is None:
            return {"items": []}
        here = {"line": line, "character": character}
        return Offered(ls, uri, doc.version, [{"insertText": suggestion.text, "range": {"start": here, "end": here},
                                               "command": {"title": "Suggestion accepted", "command": ACCEPTED,
                                                           "arguments": [{"id": suggestion.id}]}}])

    @server.feature(SHOWN)
    def did_show_completion(ls: Any, params: Any) -> None:
        _count(ls, "shown")

    @server.feature(PARTIALLY_ACCEPTED)
    def did_partially_accept_completion(ls: Any, params: Any) -> None:
        _count(ls, "partially_accepted")

    @server.command(ACCEPTED)
    def completion_accepted(ls: Any, *args: Any) -> None:
        _count(ls, "accepted")

    @server.feature(STATS)
    async def completion_stats(ls: Any, params: Any) -> dict:
        from agent_lsp.protocol import CompletionStatsResult

        if params is not None and not isinstance(params, dict):
            raise _invalid("params", "must be an object")
        return CompletionStatsResult(**asdict((await _engine(ls)).stats),
                                     **{name: part(ls) for name, part in EXTRA_STATS.items()}).wire()

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: Any, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        for listener in DOCUMENT_LISTENERS:
            listener(ls, "changed", uri)
        ranges = [c.range for c in params.content_changes if isinstance(c, types.TextDocumentContentChangePartial)]
        recent[uri] = ranges[-1].start.line if ranges else recent.get(uri, 0)
        recent.move_to_end(uri)
        if len(recent) > RECENT:
            recent.popitem(last=False)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: Any, params: types.DidCloseTextDocumentParams) -> None:
        recent.pop(params.text_document.uri, None)
        for listener in DOCUMENT_LISTENERS:
            listener(ls, "closed", params.text_document.uri)
        engine = _ENGINES.get(ls)
        if engine is not None:
            engine.forget(params.text_document.uri)


class Offered(dict):
    """An inlineCompletion answer with an item, and the buffer version it was made for. pygls writes an answer a
    loop turn after its handler returns, and a didChange read in that turn makes it stale: the server's writer asks
    `at_write` (lsp/server.py) and sends no item then."""

    def __init__(self, ls: Any, uri: str, version: Optional[int], items: list[dict]) -> None:
        super().__init__(items=items)
        self._made_for = (ls, uri, version)

    def at_write(self) -> dict:
        """This answer while its buffer is still at the version it was made for, else one with no item."""
        ls, uri, version = self._made_for
        doc = _open_text_document(ls, uri)
        if doc is not None and doc.version == version:
            return self
        _count(ls, "stale")
        return {"items": []}


# ---- parsing ------------------------------------------------------------------------------------------------


def _invalid(field: str, why: str) -> JsonRpcInvalidParams:
    return JsonRpcInvalidParams(f"Invalid params: {field}: {why}", data={"fields": [field]})


def _natural(value: Any, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _invalid(field, "must be a non-negative integer")
    return value


def parse(params: Any) -> tuple[str, int, int, Optional[int], Optional[str]]:
    """(uri, line, character, the version the client says, the indentation its formattingOptions say) of an
    inlineCompletion request; -32602 naming the field that does not fit."""
    uri, line, character, version = document_position(params)
    context = params.get("context", {})
    if context is not None and not isinstance(context, dict):
        raise _invalid("context", "must be an object")
    trigger = (context or {}).get("triggerKind", 2)
    if trigger not in (1, 2) or isinstance(trigger, bool):
        raise _invalid("context.triggerKind", "must be 1 (Invoked) or 2 (Automatic)")
    return uri, line, character, version, _indentation(params.get("formattingOptions"))


def document_position(params: Any, version_required: bool = False) -> tuple[str, int, int, Optional[int]]:
    """(uri, line, character, version) of params `{textDocument: {uri, version?}, position}`; -32602 naming the
    field that does not fit."""
    if not isinstance(params, dict):
        raise _invalid("params", "must be an object")
    document = params.get("textDocument")
    if not isinstance(document, dict):
        raise _invalid("textDocument", "must be an object with a uri" + (" and a version" if version_required else ""))
    uri = document.get("uri")
    if not isinstance(uri, str) or not uri:
        raise _invalid("textDocument.uri", "must be a non-empty string")
    version = document.get("version")
    if (version is not None or version_required) and (isinstance(version, bool) or not isinstance(version, int)):
        raise _invalid("textDocument.version", "must be an integer")
    position = params.get("position")
    if not isinstance(position, dict):
        raise _invalid("position", "must be an object with line and character")
    return uri, _natural(position.get("line"), "position.line"), \
        _natural(position.get("character"), "position.character"), version


def _indentation(options: Any) -> Optional[str]:
    """The indentation unit of Copilot-style `formattingOptions` (ignored when it does not say)."""
    if not isinstance(options, dict):
        return None
    size, spaces = options.get("tabSize"), options.get("insertSpaces")
    if not isinstance(spaces, bool):
        return None
    if not spaces:
        return "\t"
    return " " * size if isinstance(size, int) and not isinstance(size, bool) and 1 <= size <= 16 else None


# ---- positions ----------------------------------------------------------------------------------------------


def offset_of(text: str, line: int, character: int, encoding: str) -> Optional[int]:
    """The character offset into `text` of an LSP position (`character` in `encoding` units); None when the
    position is past the end of its line or of the document."""
    span = _line_span(text, line)
    if span is None:
        return None
    start, end = span
    column = _column(text[start:end], character, encoding)
    return None if column is None else start + column


def _line_span(text: str, line: int) -> Optional[tuple[int, int]]:
    """(start, end) of line `line` without its line break; None past the last line."""
    start = 0
    if "\r" not in text:  # the usual case: one C-speed find per line
        for _ in range(line):
            newline = text.find("\n", start)
            if newline < 0:
                return None
            start = newline + 1
        end = text.find("\n", start)
        return start, len(text) if end < 0 else end
    breaks = _LINE_END.finditer(text)
    for _ in range(line):
        found = next(breaks, None)
        if found is None:
            return None
        start = found.end()
    found = next(breaks, None)
    return start, found.start() if found is not None else len(text)


def _column(line: str, character: int, encoding: str) -> Optional[int]:
    """The column in characters of `character` units of `encoding` (a unit inside a character counts as before
    it); None past the end of `line`."""
    if encoding == "utf-32" or line.isascii():
        return character if character <= len(line) else None
    if encoding == "utf-8":
        data, unit, codec = line.encode("utf-8", "surrogatepass"), 1, "utf-8"
    else:
        data, unit, codec = line.encode("utf-16-le", "surrogatepass"), 2, "utf-16-le"
    if character * unit > len(data):
        return None
    return len(data[: character * unit].decode(codec, "ignore"))


def _encoding(ls: Any) -> str:
    negotiated = ls.workspace.position_encoding
    return str(getattr(negotiated, "value", negotiated) or "utf-16")


# ---- the connection's suggestions --------------------------------------------------------------------------

_ENGINES: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()
_RECENT: "weakref.WeakKeyDictionary[Any, OrderedDict[str, int]]" = weakref.WeakKeyDictionary()


async def _engine(ls: Any) -> Any:
    """The connection's Suggestions, made on first use (completions/ imported off the event loop)."""
    def make() -> Any:
        from agent_lsp.completions.suggestions import Suggestions

        return Suggestions(_Buffers(ls, _RECENT[ls]), _SettingsInForce(ls), lambda m: ls.warn([m]),
                           language=lambda: _language(ls))

    return await made_once(ls, _ENGINES, "agent_lsp.completions.suggestions", make)


async def made_once(ls: Any, engines: "weakref.WeakKeyDictionary[Any, Any]", module: str,
                    make: Callable[[], Any]) -> Any:
    """The connection's engine in `engines`, made by `make` on first use once `module` is imported off the event
    loop (another request may have made it meanwhile)."""
    engine = engines.get(ls)
    if engine is not None:
        return engine
    from agent_lsp.models import preload

    await preload.imported(module)
    engine = engines.get(ls)
    if engine is None:
        engine = engines[ls] = make()
    return engine


def _count(ls: Any, what: str) -> None:
    """One more `what` in the stats (before the first suggestion there is nothing to count)."""
    engine = _ENGINES.get(ls)
    if engine is not None:
        setattr(engine.stats, what, getattr(engine.stats, what) + 1)


def _open_text_document(ls: Any, uri: str) -> Any:
    from agent_lsp.lsp.convert import lsp_open_document  # (with the core: not at start-up)

    return lsp_open_document(ls, uri)


def _open_document(doc: Any) -> Any:
    from agent_lsp.core.ports import OpenDocument
    from agent_lsp.lsp.convert import lsp_uri_to_path  # (with the core: not at start-up)

    return OpenDocument(uri=doc.uri, path=lsp_uri_to_path(doc.uri), language_id=doc.language_id or "",
                        version=doc.version, text=doc.source, unsaved=True)


class _Buffers:
    """completions' Documents port over pygls's workspace: the open buffers as they are now."""

    def __init__(self, server: Any, recent: OrderedDict[str, int]) -> None:
        self._server = server
        self._recent = recent

    @property
    def roots(self) -> list[Path]:
        return _roots(self._server)

    def get(self, uri: str) -> Any:
        doc = _open_text_document(self._server, uri)
        return _open_document(doc) if doc is not None else None

    def recent(self) -> list[tuple[str, int]]:
        return list(reversed(self._recent.items()))

    def all(self) -> list[Any]:
        return [_open_document(doc) for doc in list(self._server.workspace.text_documents.values())]


def _roots(server: Any) -> list[Path]:
    """The workspace folders, as the editor port sees them."""
    from agent_lsp.lsp.editor import LspEditor

    return LspEditor(server, client_diagnostics=False).roots


def _language(ls: Any) -> Any:
    """The editor's language features when the client answers textDocument/definition (None otherwise)."""
    if "textDocument/definition" not in ls.agent_caps.get("languageFeatures", []):
        return None
    from agent_lsp.lsp.editor import LspEditor
    from agent_lsp.lsp.language_features import EditorLanguageFeatures

    return EditorLanguageFeatures(ls, LspEditor(ls, client_diagnostics=False))


SUGGESTION_KEYS = {"completions": "completions", "next_edits": "nextEdits"}
"""The settings of suggestions (field: key) that a workspace's settings file gives without its `baseUrl`."""


class _SettingsInForce:
    """The chat's settings and the `completions` object in force, from every source (the user's file read again
    when it changes; the workspace's `.agent-lsp/settings.json` too, whose `completions.baseUrl` is never taken:
    sending code elsewhere is what a workspace may only ask for once trusted; `nextEdits` likewise). Resolved again
    only when a layer changed."""

    def __init__(self, server: Any) -> None:
        self._server = server
        self._key: tuple = ()
        self._value: Any = None
        self._file: tuple[Optional[Path], Any, dict] = (None, None, {})

    def __call__(self) -> tuple[Any, Any]:
        server = self._server
        server.warn(server.user_file.refresh())
        layers = server.layers
        layers.user_file = server.user_file.layer
        workspace_file = self._workspace_file()
        key = (layers.user_file, layers.environment, layers.initialization_options, layers.workspace_file,
               layers.workspace, workspace_file)
        if len(key) != len(self._key) or any(a is not b for a, b in zip(key, self._key)):
            own = {k: v for k, v in layers.workspace_file.items() if k not in SUGGESTION_KEYS}  # a chat's reading
            settings = replace(layers, workspace_file={**own, **workspace_file}).resolve()
            self._key, self._value = key, (settings, settings.completions)
        return self._value

    def _workspace_file(self) -> dict:
        """`{"completions": …, "next_edits": …}` of the first workspace folder's settings file, without `baseUrl` ({}
        when it has none); read again when the file changes."""
        from agent_lsp.config import WORKSPACE_FILE, clean, read_workspace_file

        roots = _roots(self._server)
        root = roots[0] if roots else None
        try:
            stat = (root / WORKSPACE_FILE).stat() if root is not None else None
            seen = (stat.st_mtime_ns, stat.st_size) if stat is not None else None
        except OSError:
            seen = None
        if (root, seen) == self._file[:2]:
            return self._file[2]
        layer: dict = {}
        if root is not None and seen is not None:
            raw, warnings = read_workspace_file(root)
            for name, key in SUGGESTION_KEYS.items():
                if key in raw:
                    cleaned, problems = clean({key: raw[key]}, str(root / WORKSPACE_FILE))
                    if name in cleaned:
                        layer[name] = replace(cleaned[name], base_url=None)
                    warnings += problems
            self._server.warn(warnings)
        self._file = (root, seen, layer)
        return layer
