"""Suggestions as you type at the LSP edge (PROTOCOL §10): `textDocument/inlineCompletion`, the acceptance
notifications and command, `agent/completionStats`. Each handler parses, hands plain inputs to
agent_lsp/completions/ (imported on the first request: start-up registers only these handlers) and converts.
Positions stay in the negotiated encoding on the wire; completions/ counts characters."""

from __future__ import annotations

import logging
import weakref
from dataclasses import asdict
from typing import Any, Callable, Optional

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from agent_lsp.core.positions import offset_of
from agent_lsp.lsp import documents

log = logging.getLogger(__name__)

INLINE_COMPLETION = types.TEXT_DOCUMENT_INLINE_COMPLETION
SHOWN = "textDocument/didShowCompletion"
PARTIALLY_ACCEPTED = "textDocument/didPartiallyAcceptCompletion"
STATS = "agent/completionStats"
ACCEPTED = "agent.completionAccepted"
RAW_PARAMS = frozenset({INLINE_COMPLETION})
"""LSP methods whose params reach their handler as sent (pygls would structure them, and a bad field would be
answered without its name)."""
EXTRA_STATS: dict[str, Callable[[Any], dict]] = {}
"""More members of `agent/completionStats` by field, each from the server (next edits, lsp/next_edit.py)."""


def register_inline_completion(server: Any) -> None:
    """Register the handlers of PROTOCOL §10 on `server` (the capability itself is set in `initialize`)."""
    @server.feature(INLINE_COMPLETION)
    async def inline_completion(ls: Any, params: Any) -> dict:
        uri, line, character, trigger_version, indent = parse(params)
        doc = documents.as_of_request(ls, params, uri)
        if doc is None:  # never opened (or closed) when the request was read: nothing to complete from
            return {"items": []}
        from agent_lsp.lsp.convert import lsp_encoding  # (with the core: not at start-up)

        offset = offset_of(doc.source, line, character, lsp_encoding(ls))
        if offset is None:  # past the end of its line or of the document
            return {"items": []}
        engine = await _engine(ls)
        from agent_lsp.completions.suggestions import Ask

        suggestion = await engine.suggest(Ask(documents.open_document(doc), offset, indent, trigger_version))
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
        engine = _ENGINES.get(ls)
        if engine is not None:
            engine.accepted(args[0].get("id") if args and isinstance(args[0], dict) else None)

    @server.feature(STATS)
    async def completion_stats(ls: Any, params: Any) -> dict:
        from agent_lsp.protocol import CompletionStatsResult

        if params is not None and not isinstance(params, dict):
            raise _invalid("params", "must be an object")
        return CompletionStatsResult(**asdict((await _engine(ls)).stats),
                                     **{name: part(ls) for name, part in EXTRA_STATS.items()}).wire()

    def forget(ls: Any, uri: str) -> None:
        engine = _ENGINES.get(ls)
        if engine is not None:
            engine.forget(uri)

    def changed(ls: Any, uri: str) -> None:
        engine = _ENGINES.get(ls)
        if engine is not None:
            engine.changed(uri)

    documents.register_document_sync(server, on_close=forget, on_change=changed)


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
        doc = documents.current(ls, uri)
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


# ---- the connection's suggestions --------------------------------------------------------------------------

_ENGINES: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()


async def _engine(ls: Any) -> Any:
    """The connection's Suggestions, made on first use (completions/ imported off the event loop)."""
    def make() -> Any:
        from agent_lsp.completions.suggestions import Suggestions

        return Suggestions(documents.Buffers(ls), lambda: _settings_in_force(ls), lambda m: ls.warn([m]),
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


def _language(ls: Any) -> Any:
    """The editor's language features when the client answers textDocument/definition (None otherwise)."""
    if "textDocument/definition" not in ls.agent_caps.get("languageFeatures", []):
        return None
    from agent_lsp.lsp.editor import LspEditor
    from agent_lsp.lsp.language_features import EditorLanguageFeatures

    return EditorLanguageFeatures(ls, LspEditor(ls, client_diagnostics=False))


def _settings_in_force(server: Any) -> tuple[Any, Any]:
    """The settings and the `completions` object in force for the first workspace folder (config/in_force.py: the
    same rule per key as a chat's, the workspace's gated keys once its folder is trusted)."""
    settings = server.in_force.current(documents.roots(server))
    return settings, settings.completions
