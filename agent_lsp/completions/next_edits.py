"""Next-edit suggestions per document (PROTOCOL §11): the request in flight, the model request in flight, the
model's last rewrite of a window (kept), the edit offered and the ones dismissed. Fresh and cheap: an answer is for
its request's version; a newer request answers the older one at once and closes its model request (unless it asks
the same, then it waits for that one); at most one model request per document, begun at once after a pause, QUIET
after its request inside a burst (another request, or a change before the request's own, less than QUIET before
it), and never sooner than THROTTLE after the document's last one (a burst of ten requests in a second makes at
most three); a request whose text still follows the kept rewrite (its changes made, begun or not yet, nothing else)
and whose window holds all that is left of it is answered with the one edit covering what is left, with no model
call; a change that departs from it drops it; a cancelled request closes its model request; an answer waits at
most `nextEdits.timeout`. The model request is completions/stream.py's ModelStream, asked by the same suggestion
providers with the next-edit prompt (completions/next_edit.py)."""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional

from agent_lsp.completions import next_edit
from agent_lsp.completions.context import excluded, shown_path
from agent_lsp.completions.ports import Documents
from agent_lsp.completions.next_edit import Edit, NextEditPrompt, Prediction, Window, ahead, build_prompt, \
    key_of, left_of, minimal_edit, predict, refused, rewritten, window_at
from agent_lsp.completions.place import place_at
from agent_lsp.completions.recent_edits import RecentEdits
from agent_lsp.completions.stream import ModelStream
from agent_lsp.completions.suggestions import Ticket, follow, show_once
from agent_lsp.core.ports import ModelError, OpenDocument

log = logging.getLogger(__name__)

QUIET = 0.075
"""Seconds a request inside a burst (another request of its document, or a change before the one it asks about,
less than this before it: a client asking on every key of fast typing) waits for a newer one before asking the
model; a request after a pause asks at once."""
THROTTLE = 0.5
"""Seconds between the starts of two model requests of one document."""
BACKSTOP = 1.0
"""Seconds the provider's own HTTP timeout gives beyond `nextEdits.timeout`: the answer's deadline is the engine's,
which closes the model request itself (the provider's timeout only bounds a request nobody waits for)."""
DISMISSED = 16
"""Suggestions remembered per document as shown and not taken, which do not come back."""
ACCEPTED_IDS = 64


@dataclass
class NextEditStats:
    """Counts since the server started (`agent/completionStats` `nextEdits`)."""

    requests: int = 0
    model_calls: int = 0
    shown: int = 0
    accepted: int = 0
    stale: int = 0
    """Requests answered with no edit because their document changed (or was at another version) meanwhile."""
    cancelled: int = 0
    """Requests superseded by a newer one, or cancelled by the client."""
    filtered: int = 0
    """Model answers dropped by a filter (unchanged, whitespace, ghost text, outside, too large, undo, dismissed)."""
    errors: int = 0


@dataclass(frozen=True)
class NextEdit:
    """The edit offered: text[start:end] of the document's `version` replaced by `text`; `id` names it in
    `agent.nextEditAccepted`."""

    start: int
    end: int
    text: str
    id: int
    version: Optional[int]


class WindowStream(ModelStream):
    """A model request for a rewritten window: read to its end marker, the answer taken as it came."""

    def _enough(self) -> bool:
        return next_edit.END in self.raw

    @property
    def suggestion(self) -> Optional[str]:
        if not self.done or self.error is not None or self.closed:
            return None
        return self.raw


@dataclass
class _Offered:
    id: int
    text: str
    """The document's text the edit was made for."""
    edit: Edit


@dataclass
class _Document:
    current: Optional[Ticket] = None
    stream: Optional[WindowStream] = None
    started: float = float("-inf")
    """When its last model request began."""
    asked: float = float("-inf")
    """When its last request arrived."""
    changed: tuple[float, float] = (float("-inf"), float("-inf"))
    """When it changed the last time but one, and the last time."""
    prediction: Optional[Prediction] = None
    """The model's last rewrite of a window, while the text follows it."""
    offered: Optional[_Offered] = None
    dismissed: deque = field(default_factory=lambda: deque(maxlen=DISMISSED))

    def wait(self, now: float) -> float:
        """Seconds a request arriving `now` waits before a model request: QUIET inside a burst (the change it asks
        about is the last, so the one before it counts), else none; THROTTLE after the last model request."""
        burst = now - max(self.asked, self.changed[0]) < QUIET
        return max(QUIET if burst else 0.0, self.started + THROTTLE - now)


@dataclass
class NextEdits:
    """The next edits of one connection. `settings()` gives (the chat's Settings, the CompletionsSettings, the
    NextEditsSettings) in force, `switched_off()` whether the client turned them off (Copilot's
    `nextEditSuggestions.enabled`), `warn(message)` shows a warning, `history` the recent edits (fed by the edge)."""

    documents: Documents
    settings: Callable[[], tuple[Any, Any, Any]]
    warn: Callable[[str], None]
    history: RecentEdits
    switched_off: Callable[[], bool] = lambda: False
    env: Mapping[str, str] = field(default_factory=lambda: os.environ)
    clock: Callable[[], float] = time.monotonic
    """The time requests, changes and model requests are told apart by (the event loop's own clock)."""
    completer_for: Optional[Callable[[Any], Any]] = None
    """Makes the model for a models/resolver.py ModelChoice (None: the providers' own, `make_next_editor`)."""
    stats: NextEditStats = field(default_factory=NextEditStats)
    _states: dict[str, _Document] = field(default_factory=dict)
    _completers: dict[tuple, Any] = field(default_factory=dict)
    _shown: set[str] = field(default_factory=set)
    _accepted: deque = field(default_factory=lambda: deque(maxlen=ACCEPTED_IDS))
    _ids: itertools.count = field(default_factory=lambda: itertools.count(1))

    async def suggest(self, doc: OpenDocument, offset: int, version: Optional[int]) -> Optional[NextEdit]:
        """The next edit for `doc` (as the request found it) with the cursor at character `offset`; None when
        there is nothing to offer."""
        self.stats.requests += 1
        settings, completions, options = self.settings()
        if version is not None and version != doc.version:
            self.stats.stale += 1
            return None
        if not options.enabled or self.switched_off() or \
                excluded(doc.uri, doc.path, self.documents.roots, completions.exclude):
            return None
        window = window_at(doc.text, offset, options.lines_above, options.lines_below)
        if window is None or "\x00" in window.old:
            return None
        state = self._states.setdefault(doc.uri, _Document())
        now = self.clock()
        wait, state.asked = state.wait(now), now
        ticket = Ticket()
        older, state.current = state.current, ticket
        if older is not None:
            older.supersede()
        kept = self._kept(state, window)
        if kept is not None:  # answered from the model's last rewrite: its model request, if any, is of no use
            if state.stream is not None:
                state.stream.close()
            state.current = None
            edit, why = self._choose(state, doc, window, kept, options)
            if why is not None:
                log.debug("no next edit from the kept rewrite in %s: %s", doc.uri, why)
                return None
            return self._offer(state, doc, edit)
        stream: list[WindowStream] = []
        try:
            edit = await self._answer(state, ticket, stream, wait, doc, window, settings, completions, options)
        except asyncio.CancelledError:
            self.stats.cancelled += 1
            if stream and stream[0].users == 0 and state.current is ticket:
                stream[0].close()
            raise
        finally:
            if state.current is ticket:
                state.current = None
        if edit is None:
            return None
        return self._offer(state, doc, edit)

    def _offer(self, state: _Document, doc: OpenDocument, edit: Edit) -> Optional[NextEdit]:
        """`edit` offered, unless `doc` is no longer the buffer's version."""
        current = self.documents.get(doc.uri)
        if current is None or current.version != doc.version:
            self.stats.stale += 1
            return None
        offered = state.offered = _Offered(next(self._ids), doc.text, edit)
        return NextEdit(edit.start, edit.end, edit.text, offered.id, doc.version)

    def _kept(self, state: _Document, window: Window) -> Optional[str]:
        """`window` rewritten as the kept rewrite leaves it, when the text still follows the rewrite, something of
        it is left and all that is left lies in `window`; else None (the model is asked: the text departed from
        the rewrite, all it said is done, or it does not say how this window ends), and the rewrite is dropped."""
        if state.prediction is None:
            return None
        new = left_of(state.prediction, window)
        if new is None:
            state.prediction = None
        return new

    def _choose(self, state: _Document, doc: OpenDocument, window: Window, new: str,
                options: Any) -> tuple[Optional[Edit], Optional[str]]:
        """The one edit from `window` to its rewrite `new` (the smallest range covering every change), or None and
        the filter that drops it."""
        edit = minimal_edit(window, new)
        return edit, refused(window, new, edit, options.max_lines, self.history.latest(doc.uri), state.dismissed)

    async def _answer(self, state: _Document, ticket: Ticket, holder: list, wait: float, doc: OpenDocument,
                      window: Window, settings: Any, completions: Any, options: Any) -> Optional[Edit]:
        loop = asyncio.get_running_loop()
        stream = state.stream
        same = stream is not None and not stream.closed and stream.error is None and \
            (stream.origin.version, stream.origin.offset) == (doc.version, window.cursor)
        if not same:
            if stream is not None:
                stream.close()
                state.stream = None
            if wait > 0:
                try:
                    await asyncio.wait_for(asyncio.shield(ticket.wake), wait)
                except asyncio.TimeoutError:
                    pass
            if ticket.superseded:
                self.stats.cancelled += 1
                return None
            current = self.documents.get(doc.uri)
            if current is None or current.version != doc.version:
                self.stats.stale += 1
                return None
            stream = await self._start(state, ticket, doc, window, settings, completions, options)
            if stream is None:
                return None
        holder.append(stream)
        outcome = await follow(stream, ticket, "", loop.time() + options.timeout)
        if outcome == "superseded":
            self.stats.cancelled += 1
            return None
        if outcome == "timeout":
            if stream.users == 0:
                stream.close()
            self.stats.errors += 1
            self._failed(f"no next edit within {options.timeout:g} s (the nextEdits.timeout setting)")
            return None
        answer = stream.suggestion
        if answer is None:
            return None
        new = rewritten(answer)
        if new is None:
            edit, why = None, "no rewritten window"
        else:
            state.prediction = predict(window, new)
            edit, why = self._choose(state, doc, window, new, options)
        if why is not None:
            self.stats.filtered += 1
            log.debug("no next edit in %s: %s", doc.uri, why)
            return None
        return edit

    async def _start(self, state: _Document, ticket: Ticket, doc: OpenDocument, window: Window, settings: Any,
                     completions: Any, options: Any) -> Optional[WindowStream]:
        """A model request for the window; None when no model can be had (shown once when that is a problem), or
        when a newer request superseded the ticket while the model's SDK was being loaded."""
        from agent_lsp.models.resolver import resolve_completions  # the one place a model is chosen

        choice = resolve_completions(settings, options.provider or completions.provider,
                                     options.model or completions.model, options.base_url or completions.base_url,
                                     options.api or completions.api, self.env)
        if choice.lacks == "provider":
            log.debug("no next edit: no model provider is configured")
            return None
        try:
            if choice.problem is not None:
                raise ModelError("initialization_failed", choice.problem)
            completer = self._completer(choice, options.timeout + BACKSTOP)
        except ModelError as e:
            self.stats.errors += 1
            self._failed(e.message)
            return None
        prepare = getattr(completer, "prepare", None)
        if prepare is not None:
            await prepare()
            if ticket.superseded:
                return None
        prompt = self._prompt(doc, window, completions.exclude)

        async def prompt_now() -> NextEditPrompt:
            return prompt

        place = place_at(doc.uri, doc.version, doc.text, window.cursor)
        stream = WindowStream(place, options.max_lines, completer, prompt_now, lambda ended: self._ended(state, ended))
        state.stream = stream
        state.started = self.clock()
        self.stats.model_calls += 1
        return stream

    def _prompt(self, doc: OpenDocument, window: Window, exclude: Any) -> NextEditPrompt:
        roots = self.documents.roots

        def name(uri: str) -> Optional[str]:
            other = self.documents.get(uri)
            if other is None or excluded(other.uri, other.path, roots, exclude):
                return None
            return shown_path(other.uri, other.path, roots)

        return build_prompt(shown_path(doc.uri, doc.path, roots), doc.language_id, window, self.history.diffs(name))

    def _completer(self, choice: Any, timeout: float) -> Any:
        completer = self._completers.get((choice, timeout))
        if completer is None:
            completer = self.completer_for(choice) if self.completer_for is not None else \
                make_next_editor(choice, timeout, self.env)
            self._completers[(choice, timeout)] = completer
        return completer

    def _ended(self, state: _Document, stream: WindowStream) -> None:
        if state.stream is stream:
            state.stream = None
        if stream.error is not None:
            self.stats.errors += 1
            self._failed(stream.error.message)
        elif not stream.closed:
            self._shown.clear()  # a success: the next failure is worth showing again

    def _failed(self, message: str) -> None:
        """Show a failure once per cause, until a next edit succeeds again."""
        show_once(self._shown, self.warn, "next edit", message)

    # ---- what the editor tells of the suggestions ----------------------------------------------------------

    def changed(self, uri: str, text: str) -> None:
        """`uri` now holds `text`: an edit offered is accepted when this is exactly it applied, else dismissed
        (unless the change is at the edit's own place: the user making it their own way, typing it say)."""
        self.history.changed(uri, text)
        state = self._states.setdefault(uri, _Document())
        state.changed = (state.changed[1], self.clock())
        if state.prediction is not None and ahead(state.prediction, text) is None:
            state.prediction = None
        if state.offered is None:
            return
        offered, state.offered = state.offered, None
        if next_edit.apply(offered.text, offered.edit) == text:
            self.accepted(offered.id)
        elif offered.id not in self._accepted and not self._made_there(uri, offered.edit):
            state.dismissed.append(key_of(offered.text, offered.edit))

    def _made_there(self, uri: str, edit: Edit) -> bool:
        """Whether the latest change of `uri` touches the place `edit` changes (a dismissal would keep the same
        edit off every line that reads the same: the next call site's own)."""
        latest = self.history.latest(uri)
        return latest is not None and latest.start <= edit.end and latest.start + len(latest.removed) >= edit.start

    def accepted(self, id: Any) -> None:
        """The edit `id` was applied (counted once, by command or by the change that applies it)."""
        if id in self._accepted:
            return
        if isinstance(id, int):
            self._accepted.append(id)
        self.stats.accepted += 1
        for state in self._states.values():
            if state.offered is not None and state.offered.id == id:
                state.offered = None

    def withdraw(self, uri: str, id: int) -> None:
        """The edit `id` was never sent (its document changed before the answer was written)."""
        state = self._states.get(uri)
        if state is not None and state.offered is not None and state.offered.id == id:
            state.offered = None

    def forget(self, uri: str) -> None:
        """A document was closed: its model request is closed, its state dropped."""
        self.history.closed(uri)
        state = self._states.pop(uri, None)
        if state is not None:
            if state.stream is not None:
                state.stream.close()
            if state.current is not None:
                state.current.supersede()


def make_next_editor(choice: Any, timeout: float, env: Mapping[str, str] = os.environ) -> Any:
    """The model `choice` names, asked with the next-edit prompt through the suggestion providers; raises
    ModelError when it cannot be made."""
    if choice.provider == "demo":
        from agent_lsp.completions.next_edit_offline import DemoNextEditor

        return DemoNextEditor()
    if choice.provider == "scripted":
        from agent_lsp.completions.offline import ScriptCompleter

        return ScriptCompleter(choice.model)
    if choice.provider == "anthropic":
        from agent_lsp.completions.providers.anthropic import AnthropicCompleter

        return AnthropicCompleter(choice.model, choice.base_url, timeout, shape=next_edit)
    if choice.provider == "openai":
        from agent_lsp.completions.providers.openai import OpenAICompleter

        return OpenAICompleter(choice.model, choice.base_url or "", choice.api_key(env), choice.api, timeout,
                               shape=next_edit)
    raise ModelError("initialization_failed", choice.problem or f"no next edits from {choice.provider!r}")
