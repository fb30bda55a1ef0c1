"""One model request for a suggestion, in a task of its own so that several requests of a document can wait for
the same answer (typing through a suggestion still streaming); closing it cancels that task, which closes the HTTP
response and with it the connection."""

from __future__ import annotations

import asyncio
import logging
from typing import Awaitable, Callable, Optional

from agent_lsp.completions.place import Place
from agent_lsp.completions.postprocess import finish, not_retyped_indentation, opening
from agent_lsp.completions.prompt import Completer, CompletionPrompt
from agent_lsp.core.ports import ModelError

log = logging.getLogger(__name__)


class ModelStream:
    """A suggestion's model answer as it streams, for the request at `origin`. Another kind of suggestion (next
    edits) uses it as it is, overriding `_enough` (when to stop reading) and `_finish` (what the whole answer
    becomes)."""

    def __init__(self, origin: Place, max_lines: int, completer: Completer,
                 prompt: Callable[[], Awaitable[CompletionPrompt]],
                 on_end: Callable[["ModelStream"], None]) -> None:
        self.origin = origin
        self.max_lines = max_lines
        self.raw = ""
        """What the model has sent so far."""
        self.done = False
        self.error: Optional[ModelError] = None
        self.closed = False
        """Closed before its end (superseded, cancelled, timed out)."""
        self.users = 0
        """Requests waiting for it now."""
        self._waiters: list[asyncio.Future] = []
        self._on_end = on_end
        self._suggestion: Optional[str] = None
        self._closing = False
        self._stopping = False
        """It has read enough and cancelled its own task to stop reading."""
        self._task = asyncio.get_running_loop().create_task(self._run(completer, prompt))

    async def _run(self, completer: Completer, prompt: Callable[[], Awaitable[CompletionPrompt]]) -> None:
        try:
            answer = completer.complete(await prompt())
            try:
                async for text in answer:
                    self.raw += text
                    self._wake()
                    if self._enough() and not self._stopping:  # the rest would be cut anyway: stop paying for it
                        # by a cancel, which unwinds the provider's stream from its innermost read and closes each
                        # of its generators on the way (a break would leave them to the garbage collector, which
                        # may finalize one from another thread while it runs: "already executing")
                        self._stopping = True
                        self._task.cancel()
            finally:
                await answer.aclose()
        except asyncio.CancelledError:
            if not self._stopping or self._closing:
                self.closed = True
                raise
            self._task.uncancel()  # stopped by itself, having read enough: the answer is whole
        except ModelError as e:
            self.error = e
        except Exception as e:  # a provider's bug must not end as a traceback in the editor
            log.warning("a suggestion's model request failed: %r", e, exc_info=True)
            self.error = ModelError("llm_error", f"{type(e).__name__}: {e}")
        finally:
            self.done = True
            self._wake()
            self._on_end(self)

    def _enough(self) -> bool:
        """Whether the answer so far already has every line a suggestion could keep."""
        seen = opening(self.raw)
        if seen is None:
            return False
        if self.origin.line_after.strip():
            return "\n" in seen.lstrip("\n")
        return seen.strip("\n").count("\n") >= self.max_lines

    @property
    def suggestion(self) -> Optional[str]:
        """The finished answer post-processed at `origin` (None: nothing to offer, or not finished well)."""
        if not self.done or self.error is not None or self.closed:
            return None
        if self._suggestion is None:
            self._suggestion = self._finish(self.raw) or ""
        return self._suggestion or None

    def _finish(self, raw: str) -> Optional[str]:
        """The whole answer `raw` as offered at `origin` (None: nothing to offer)."""
        return finish(raw, self.origin.surroundings(self.max_lines))

    def agrees(self, typed: str) -> bool:
        """Whether text typed at `origin` since the request still fits what the model says (one begins the other,
        or the model has said nothing that can be compared yet)."""
        if self.done and not self.closed and self.error is None:
            suggestion = self.suggestion or ""
            return suggestion.startswith(typed) and len(suggestion) > len(typed)
        seen = opening(self.raw)
        if seen is None:
            return True
        seen = not_retyped_indentation(seen, self.origin.line_before)
        return seen.startswith(typed) or typed.startswith(seen)

    def next_change(self) -> asyncio.Future:
        """A future done when more text arrives or the stream ends (done already if it has ended). Registered at
        once, so that no change between this call and the await is missed; cancel it when no longer waiting."""
        waiter = asyncio.get_running_loop().create_future()
        if self.done:
            waiter.set_result(None)
        else:
            self._waiters.append(waiter)
        return waiter

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def close(self) -> None:
        """Close the model request now (nothing once it has ended, or once it is closing)."""
        if not self._task.done() and not self._closing:
            self._closing = True  # once: a second cancel would break into the provider's own clean-up
            self._task.cancel()
