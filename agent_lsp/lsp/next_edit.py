"""Next-edit suggestions at the LSP edge (PROTOCOL §11): `textDocument/copilotInlineEdit` in GitHub Copilot's own
shapes (so copilot-lsp, copilot.el and sidekick.nvim can point at agent-lsp), never null; the notifications
Copilot's clients send besides (`textDocument/didShowInlineEdit`, `textDocument/didFocus`), the accept command,
and the recent edits fed from didOpen / didChange / didClose. Each handler parses, hands plain inputs to
agent_lsp/completions/next_edits.py (imported on the first request) and converts."""

from __future__ import annotations

import weakref
from typing import Any

from lsprotocol import types

from agent_lsp.core.positions import offset_of, position_at
from agent_lsp.lsp import documents
from agent_lsp.lsp.inline_completion import EXTRA_STATS, document_position, made_once

INLINE_EDIT = "textDocument/copilotInlineEdit"
SHOWN = "textDocument/didShowInlineEdit"
FOCUS = "textDocument/didFocus"
ACCEPTED = "agent.nextEditAccepted"
NOTHING = {"edits": []}

_ENGINES: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()
_HISTORIES: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()
_SWITCHES: "weakref.WeakKeyDictionary[Any, bool]" = weakref.WeakKeyDictionary()
"""`nextEditSuggestions.enabled` as Copilot's clients last sent it."""


def register_next_edit(server: Any) -> None:
    """Register the handlers of PROTOCOL §11 on `server`."""

    @server.feature(INLINE_EDIT)
    async def copilot_inline_edit(ls: Any, params: Any) -> dict:
        uri, line, character, version = document_position(params, version_required=True)
        found = documents.as_of_request(ls, params, uri)
        if found is None:  # never opened (or closed) when the request was read: nothing to suggest in
            return dict(NOTHING)
        doc = documents.open_document(found)  # this version's text, whatever comes after
        from agent_lsp.lsp.convert import lsp_encoding  # (with the core: not at start-up)

        encoding = lsp_encoding(ls)
        offset = offset_of(doc.text, line, character, encoding)
        if offset is None:  # past the end of its line or of the document
            return dict(NOTHING)
        engine = await _engine(ls)
        edit = await engine.suggest(doc, offset, version)
        if edit is None:
            return dict(NOTHING)
        return OfferedEdit(ls, uri, version, edit.id, {
            "range": {"start": position_at(doc.text, edit.start, encoding),
                      "end": position_at(doc.text, edit.end, encoding)},
            "text": edit.text,
            "textDocument": {"uri": uri, "version": version},
            "command": {"title": "Next edit accepted", "command": ACCEPTED, "arguments": [{"id": edit.id}]}})

    @server.feature(SHOWN)
    def did_show_inline_edit(ls: Any, params: Any) -> None:
        engine = _ENGINES.get(ls)
        if engine is not None:
            engine.stats.shown += 1

    @server.feature(FOCUS)
    def did_focus(ls: Any, params: Any) -> None:
        """Copilot's clients say which document has the focus (an unnamed buffer's too); nothing depends on it."""

    @server.command(ACCEPTED)
    def next_edit_accepted(ls: Any, *args: Any) -> None:
        engine = _ENGINES.get(ls)
        argument = args[0] if args else None
        if engine is not None and isinstance(argument, dict):
            engine.accepted(argument.get("id"))

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: Any, params: types.DidOpenTextDocumentParams) -> None:
        found = documents.current(ls, params.text_document.uri)
        if found is not None:
            _history(ls).opened(params.text_document.uri, found.source)

    documents.LISTENERS.append(_document_event)
    EXTRA_STATS["next_edits"] = _stats


def note_client_settings(ls: Any, settings: Any) -> None:
    """`workspace/didChangeConfiguration {settings: {nextEditSuggestions: {enabled}}}` (copilot-lsp sends it):
    false turns next edits off until it says true, which leaves `nextEdits.enabled` in force (copilot-lsp sends
    true at start: it must not override a user's false)."""
    copilot = settings.get("nextEditSuggestions") if isinstance(settings, dict) else None
    if isinstance(copilot, dict) and isinstance(copilot.get("enabled"), bool):
        _SWITCHES[ls] = copilot["enabled"]


class OfferedEdit(dict):
    """A copilotInlineEdit answer with its edit, and the document version it was made for: the server's writer
    asks `at_write` (lsp/server.py) and sends `{edits: []}` when a didChange read meanwhile made it stale."""

    def __init__(self, ls: Any, uri: str, version: int, id: int, edit: dict) -> None:
        super().__init__(edits=[edit])
        self._made_for = (ls, uri, version, id)

    def at_write(self) -> dict:
        ls, uri, version, id = self._made_for
        doc = documents.current(ls, uri)
        if doc is not None and doc.version == version:
            return self
        engine = _ENGINES.get(ls)
        if engine is not None:
            engine.stats.stale += 1
            engine.withdraw(uri, id)
        return dict(NOTHING)


def _history(ls: Any) -> Any:
    history = _HISTORIES.get(ls)
    if history is None:
        from agent_lsp.completions.recent_edits import RecentEdits

        history = _HISTORIES[ls] = RecentEdits()
    return history


def _document_event(ls: Any, event: str, uri: str) -> None:
    engine = _ENGINES.get(ls)
    if event == "closed":
        if engine is not None:
            engine.forget(uri)
        else:
            _history(ls).closed(uri)
        return
    found = documents.current(ls, uri)
    if found is None:
        return
    if engine is not None:
        engine.changed(uri, found.source)
    else:
        _history(ls).changed(uri, found.source)


def _stats(ls: Any) -> dict:
    from dataclasses import asdict

    engine = _ENGINES.get(ls)
    if engine is not None:
        return asdict(engine.stats)
    from agent_lsp.completions.next_edits import NextEditStats

    return asdict(NextEditStats())


async def _engine(ls: Any) -> Any:
    """The connection's NextEdits, made on first use (completions/ imported off the event loop)."""
    def make() -> Any:
        from agent_lsp.completions.next_edits import NextEdits

        def settings() -> tuple[Any, Any, Any]:
            chat = ls.in_force.current(documents.roots(ls))  # config/in_force.py: the same rule per key as a chat's
            return chat, chat.completions, chat.next_edits

        return NextEdits(documents.Buffers(ls), settings, lambda m: ls.warn([m]), _history(ls),
                         switched_off=lambda: _SWITCHES.get(ls) is False)

    return await made_once(ls, _ENGINES, "agent_lsp.completions.next_edits", make)
