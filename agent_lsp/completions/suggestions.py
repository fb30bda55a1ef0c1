"""Suggestions as you type (PROTOCOL §10), per document: the request in flight, the model request in flight, the
last suggestion. Typing through a suggestion (even one still streaming) costs no model call; a newer request
answers the older one at once and closes its model request unless it can use it; a cancelled request's model
request is closed within CANCEL_GRACE unless a newer request took it over; an answer is never given for an older
document version; a model request is never retried; a failure is shown once per cause until one succeeds. A
suggestion accepted (or typed through to its end) has the suggestion after it asked ahead, for the request the
client sends next to join (`changed`, `accepted`)."""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional

from agent_lsp.completions.context import ContextSource, build_prompt, excluded
from agent_lsp.completions.place import Place, place_at
from agent_lsp.completions.ports import Documents, LanguageSource, SettingsInForce, Warn
from agent_lsp.completions.stream import ModelStream
from agent_lsp.config import Settings
from agent_lsp.config.completions import CompletionsSettings
from agent_lsp.completions.prompt import Completer
from agent_lsp.core.ports import ModelError, OpenDocument

log = logging.getLogger(__name__)

REMEMBERED = 64
"""Documents whose last suggestion is kept to type through (the least recently suggested beyond are asked anew)."""
CANCEL_GRACE = 0.01
"""Seconds a cancelled request's model request stays open for a newer request of the document to take over: VS Code
cancels a request and sends the next in the same write, so the next is read well within this; then it is closed
(PROTOCOL §10 allows a second; a local model server is busy with a stream nobody reads until it is closed)."""


@dataclass
class Stats:
    """Counts since the server started (`agent/completionStats`)."""

    requests: int = 0
    model_calls: int = 0
    reused: int = 0
    """Requests answered from a suggestion already asked for (finished or still streaming), with no call of their own."""
    cancelled: int = 0
    """Requests superseded by a newer one, or cancelled by the client."""
    stale: int = 0
    """Requests answered with nothing because their document changed meanwhile."""
    shown: int = 0
    accepted: int = 0
    partially_accepted: int = 0
    errors: int = 0


@dataclass(frozen=True)
class Ask:
    """One request: a document as the request found it, the cursor as a character offset into its text."""

    doc: OpenDocument
    offset: int
    indent: Optional[str] = None
    """The indentation unit the client says the buffer uses, if it says."""
    expected_version: Optional[int] = None
    """The document version the client says it asks about, if it says (Copilot's clients do)."""


@dataclass(frozen=True)
class Suggestion:
    """Text to insert at the cursor; `id` names it in `agent.completionAccepted`."""

    text: str
    id: int


class Ticket:
    """A request in flight: superseded by a newer one of its document, or not (next edits' too)."""

    def __init__(self, place: Optional[Place] = None) -> None:
        self.place = place
        self.wake: asyncio.Future = asyncio.get_running_loop().create_future()
        self.stream: Optional[ModelStream] = None

    def supersede(self) -> None:
        if not self.wake.done():
            self.wake.set_result(None)

    @property
    def superseded(self) -> bool:
        return self.wake.done()


@dataclass
class _Document:
    current: Optional[Ticket] = None
    stream: Optional[ModelStream] = None
    """The model request in flight, if any."""
    last: Optional[tuple[Place, str]] = None
    """The last finished suggestion and where it was asked for ("": asked ahead, and nothing to offer there)."""
    ahead: Optional[ModelStream] = None
    """The model request asked ahead after an accepted suggestion, until it ends (a request may join it)."""
    asked_after: Optional[tuple[Place, str]] = None
    """The suggestion last asked ahead after: one ask-ahead per acceptance."""


@dataclass
class Suggestions:
    """The suggestions of one connection. `settings()` gives the settings in force, `language()` the language
    features to find definitions with (None: none), `warn(message)` shows a warning."""

    documents: Documents
    settings: SettingsInForce
    warn: Warn
    language: LanguageSource = lambda: None
    env: Mapping[str, str] = field(default_factory=lambda: os.environ)
    completer_for: Optional[Callable[[Any], Completer]] = None
    """Makes the model for a models/resolver.py ModelChoice (None: the provider's own, completions/providers/)."""
    stats: Stats = field(default_factory=Stats)
    asked_ahead: int = 0
    """Model requests asked ahead after an accepted suggestion (counted in `stats.model_calls` too)."""
    _states: dict[str, _Document] = field(default_factory=dict)
    _remembered: dict[str, None] = field(default_factory=dict)
    """The documents whose `last` is set, least recently suggested first."""
    _completers: dict[tuple, Completer] = field(default_factory=dict)
    _shown: set[str] = field(default_factory=set)
    _ids: itertools.count = field(default_factory=lambda: itertools.count(1))
    _offered: dict[int, str] = field(default_factory=dict)
    """The document of each suggestion offered lately, by id (the REMEMBERED latest)."""
    _aheads: set[asyncio.Task] = field(default_factory=set)
    """The ask-aheads starting (held here: the event loop keeps only a weak reference to a task)."""

    async def suggest(self, ask: Ask) -> Optional[Suggestion]:
        """The suggestion at `ask`'s cursor; None when there is nothing to offer (or it was superseded)."""
        self.stats.requests += 1
        settings, options = self.settings()
        doc = ask.doc
        if ask.expected_version is not None and ask.expected_version != doc.version or self._changed(doc):
            self.stats.stale += 1  # asked about a version it no longer has: nothing to ask the model
            return None
        if not options.enabled or excluded(doc.uri, doc.path, self.documents.roots, options.exclude):
            return None
        place = place_at(doc.uri, doc.version, doc.text, ask.offset, ask.indent)
        if "\x00" in place.before or "\x00" in place.after:  # binary content: nothing a model could continue
            return None
        state = self._states.setdefault(doc.uri, _Document())
        ticket = Ticket(place)
        older, state.current = state.current, ticket
        try:
            text = await self._answer(state, ticket, older, doc, settings, options)
        except asyncio.CancelledError:
            self.stats.cancelled += 1
            stream = ticket.stream
            if stream is not None and not stream.done:
                asyncio.get_running_loop().call_later(CANCEL_GRACE, _close_unless_used, stream)
            raise
        finally:
            if state.current is ticket:
                state.current = None
        if text is None:
            return None
        if self._changed(doc):
            self.stats.stale += 1
            return None
        suggestion = Suggestion(text, next(self._ids))
        self._offered[suggestion.id] = doc.uri
        if len(self._offered) > REMEMBERED:
            del self._offered[next(iter(self._offered))]
        return suggestion

    def _changed(self, doc: OpenDocument) -> bool:
        """Whether the buffer is no longer at the version `doc` was taken from (or closed)."""
        current = self.documents.get(doc.uri)
        return current is None or current.version != doc.version

    async def _answer(self, state: _Document, ticket: Ticket, older: Optional[Ticket], doc: OpenDocument,
                      settings: Settings, options: CompletionsSettings) -> Optional[str]:
        place = ticket.place
        if state.last is not None:  # typed through the last suggestion: no model call
            origin, suggestion = state.last
            typed = place.typed_since(origin)
            if typed is not None and suggestion.startswith(typed) and (len(suggestion) > len(typed) or not typed):
                self._close(state, keep=None)
                if older is not None:
                    older.supersede()
                self.stats.reused += 1
                return suggestion[len(typed):] or None  # "": asked ahead there, and the model had nothing to add
        stream, typed = state.stream, None
        if stream is not None and not stream.closed and stream.error is None:
            typed = place.typed_since(stream.origin)
        if stream is None or typed is None or (typed and not stream.agrees(typed)):
            stream, typed = None, ""
        self._close(state, keep=stream)
        if older is not None:
            older.supersede()
        loop = asyncio.get_running_loop()
        deadline: Optional[float] = None
        while True:
            if stream is None:
                stream = await self._start(state, ticket, doc, settings, options)
                if stream is None:
                    return None
            if deadline is None:  # from the first model request on (an SDK's first import is not the model's time)
                deadline = loop.time() + options.timeout
            ticket.stream = stream
            outcome = await follow(stream, ticket, typed, deadline)
            if outcome == "superseded":
                self.stats.cancelled += 1
                return None
            if outcome == "timeout":
                if stream.users == 0:
                    stream.close()
                self.stats.errors += 1
                self._failed(f"no suggestion within {options.timeout:g} s (the completions.timeout setting)")
                return None
            if stream.error is not None or stream.closed:
                return None
            if outcome == "done":
                suggestion = stream.suggestion
                if not typed:
                    return suggestion
                if suggestion is not None and suggestion.startswith(typed) and len(suggestion) > len(typed):
                    self.stats.reused += 1
                    return suggestion[len(typed):]
            # what was typed no longer fits the model's answer: this request asks the model itself
            if stream.users == 0:
                stream.close()
            stream, typed = None, ""

    async def _start(self, state: _Document, ticket: Ticket, doc: OpenDocument, settings: Settings,
                     options: CompletionsSettings) -> Optional[ModelStream]:
        """A model request for the ticket's place; None when no model can be had (shown once when that is a
        problem), or when a newer request superseded the ticket while the model's SDK was being loaded."""
        from agent_lsp.models.resolver import resolve_completions  # the one place a model is chosen

        choice = resolve_completions(settings, options.provider, options.model, options.base_url, options.api,
                                     self.env)
        if choice.lacks == "provider":  # nothing configured at all: suggestions are off, quietly
            log.debug("no suggestion: no model provider is configured")
            return None
        try:
            if choice.problem is not None:
                raise ModelError("initialization_failed", choice.problem)
            completer = self._completer(choice, options.timeout)
        except ModelError as e:
            self.stats.errors += 1
            self._failed(e.message)
            return None
        prepare = getattr(completer, "prepare", None)
        if prepare is not None:
            await prepare()
            if ticket.superseded:
                return None
        place = ticket.place
        source = ContextSource(self.documents, self.language(), tuple(options.exclude))
        single_line = bool(place.line_after.strip())
        stream = ModelStream(place, options.max_lines, completer,
                             lambda: build_prompt(source, doc, place.offset, options.max_lines, single_line),
                             lambda ended: self._ended(state, ended))
        state.stream = stream
        self.stats.model_calls += 1
        return stream

    def _completer(self, choice: Any, timeout: float) -> Completer:
        """The model `choice` names (made once per choice and timeout)."""
        completer = self._completers.get((choice, timeout))
        if completer is None:
            if self.completer_for is not None:
                completer = self.completer_for(choice)
            else:
                from agent_lsp.completions.providers import make_completer

                completer = make_completer(choice, timeout, self._offline_documents, self.env)
            self._completers[(choice, timeout)] = completer
        return completer

    def _offline_documents(self) -> list[OpenDocument]:
        """The open buffers the demo model may complete from: none that is excluded, the most recently changed
        first."""
        _, options = self.settings()
        order = {uri: n for n, (uri, _) in enumerate(self.documents.recent())}
        docs = [d for d in self.documents.all()
                if not excluded(d.uri, d.path, self.documents.roots, options.exclude)]
        return sorted(docs, key=lambda d: order.get(d.uri, len(order)))

    def accepted(self, id: Any) -> None:
        """`agent.completionAccepted {id}`: counted; the suggestion after it asked ahead when its document holds it
        now (the change that applied it usually did so already)."""
        self.stats.accepted += 1
        uri = self._offered.get(id) if isinstance(id, int) and not isinstance(id, bool) else None
        state = self._states.get(uri) if uri is not None else None
        doc = self.documents.get(uri) if state is not None else None
        if doc is not None:
            self._ask_ahead(state, doc)

    def changed(self, uri: str) -> None:
        """The document `uri` changed: a model request asked ahead that no request uses is closed unless the change
        is typing at its place that agrees with it; the suggestion after the last one is asked ahead when the
        change completed it (accepted, or typed through to its end)."""
        state = self._states.get(uri)
        doc = self.documents.get(uri) if state is not None else None
        if doc is None:
            return
        stream = state.ahead
        if stream is not None and stream is state.stream and stream.users == 0 and not stream.done:
            origin = stream.origin
            k = len(doc.text) - origin.length
            typed = place_at(uri, doc.version, doc.text, origin.offset + k).typed_since(origin) if k >= 0 else None
            if typed is None or typed and not stream.agrees(typed):
                self._close(state, keep=None)
        self._ask_ahead(state, doc)

    def _ask_ahead(self, state: _Document, doc: OpenDocument) -> None:
        """Ask the model for the place after the last suggestion when `doc` holds that suggestion whole at its place
        — once per suggestion, only while the model calls so far are no more than the requests (the client asks at
        that place next: the call is the one a request there would make, made earlier) and never where a request
        would ask nothing (suggestions off, an excluded file). AGENT_LSP_ASK_AHEAD=0 turns it off (the reference
        the benchmarks compare with)."""
        if state.last is None or state.asked_after == state.last or self.env.get("AGENT_LSP_ASK_AHEAD") == "0":
            return
        origin, suggestion = state.last
        end = origin.offset + len(suggestion)
        if not suggestion or end > len(doc.text) or self.stats.model_calls > self.stats.requests:
            return
        place = place_at(doc.uri, doc.version, doc.text, end, origin.indent_hint)
        if place.typed_since(origin) != suggestion:
            return
        stream, current = state.stream, state.current
        asking = [stream.origin] if stream is not None and not stream.closed else []
        asking += [current.place] if current is not None and current.place is not None else []
        if any(place.typed_since(there) == "" for there in asking):
            return  # a request at that place asks already
        settings, options = self.settings()
        if not options.enabled or excluded(doc.uri, doc.path, self.documents.roots, options.exclude) \
                or "\x00" in place.before or "\x00" in place.after:
            return
        state.asked_after = state.last
        task = asyncio.get_running_loop().create_task(self._ahead(state, Ticket(place), doc, settings, options))
        self._aheads.add(task)
        task.add_done_callback(self._aheads.discard)

    async def _ahead(self, state: _Document, ticket: Ticket, doc: OpenDocument, settings: Settings,
                     options: CompletionsSettings) -> None:
        """The model request asked ahead at the ticket's place: in flight for the document as a request's would
        be (a newer request takes it over or supersedes it)."""
        older, state.current = state.current, ticket
        if older is not None:
            older.supersede()  # a request made before the acceptance: its answer would be stale
        self._close(state, keep=None)
        try:
            stream = await self._start(state, ticket, doc, settings, options)
        finally:
            if state.current is ticket:
                state.current = None
        if stream is not None:
            state.ahead = stream
            self.asked_ahead += 1
            log.debug("asked ahead at %s:%d", doc.uri, ticket.place.offset)
            # no request may come for it: closed at the timeout a request's own would have, unless one waits on it
            asyncio.get_running_loop().call_later(options.timeout, _close_unless_used, stream)

    def _ended(self, state: _Document, stream: ModelStream) -> None:
        if state.stream is stream:
            state.stream = None
        asked_ahead = state.ahead is stream
        if asked_ahead:
            state.ahead = None
        if stream.error is not None:
            self.stats.errors += 1
            self._failed(stream.error.message)
        elif not stream.closed:
            self._shown.clear()  # a success: the next failure is worth showing again
            suggestion = stream.suggestion
            if suggestion is not None or asked_ahead:  # nothing, asked ahead: the request there asks no more
                state.last = (stream.origin, suggestion or "")
                self._remember(stream.origin.uri)

    def _remember(self, uri: str) -> None:
        """`uri` has the newest suggestion; the oldest beyond REMEMBERED is forgotten (each keeps 4 KB of text)."""
        self._remembered.pop(uri, None)
        self._remembered[uri] = None
        while len(self._remembered) > REMEMBERED:
            oldest = next(iter(self._remembered))
            del self._remembered[oldest]
            state = self._states.get(oldest)
            if state is not None:
                state.last = None
                if state.current is None and state.stream is None:
                    del self._states[oldest]

    def _close(self, state: _Document, keep: Optional[ModelStream]) -> None:
        """Close the document's model request in flight, unless it is `keep`."""
        if state.stream is not None and state.stream is not keep:
            state.stream.close()
            state.stream = None

    def _failed(self, message: str) -> None:
        """Show a failure once per cause, until a suggestion succeeds again."""
        show_once(self._shown, self.warn, "suggestion", message)

    def forget(self, uri: str) -> None:
        """A document was closed: its model request is closed, its state dropped."""
        self._remembered.pop(uri, None)
        state = self._states.pop(uri, None)
        if state is not None:
            self._close(state, keep=None)
            if state.current is not None:
                state.current.supersede()


def show_once(shown: set[str], warn: Callable[[str], None], noun: str, message: str) -> None:
    """Warn `agent-lsp: no {noun}s: {message}` once per cause, until `shown` is cleared (by a success; next edits
    too)."""
    cause = re.sub(r"[A-Za-z0-9_-]{20,}", "…", message)  # request ids do not make a new cause
    log.info("no %s: %s", noun, message)
    if cause not in shown:
        shown.add(cause)
        warn(f"agent-lsp: no {noun}s: {message}")


async def follow(stream: ModelStream, ticket: Ticket, typed: str, deadline: float) -> str:
    """Wait on `stream` until it ends ("done"), disagrees with `typed` ("disagrees"), the ticket is superseded
    ("superseded") or the deadline passes ("timeout")."""
    loop = asyncio.get_running_loop()
    stream.users += 1
    try:
        while True:
            if ticket.superseded:
                return "superseded"
            if stream.done:
                return "done"
            if typed and not stream.agrees(typed):
                return "disagrees"
            left = deadline - loop.time()
            if left <= 0:
                return "timeout"
            changed = stream.next_change()
            try:
                await asyncio.wait((changed, ticket.wake), timeout=left, return_when=asyncio.FIRST_COMPLETED)
            finally:
                changed.cancel()
    finally:
        stream.users -= 1


def _close_unless_used(stream: ModelStream) -> None:
    """A cancelled request's model request, once no newer request took it over."""
    if stream.users == 0:
        stream.close()
