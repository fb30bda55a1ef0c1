"""One chat run in a session: its asyncio task (abort is cancelling it), its pending confirmations, the builtin
commands `/compact` and `/memory`, `agent/revert`, and what its updates leave on the session (tool calls, plan)."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field, replace
from typing import Callable, Optional

from agent_lsp.config import Settings, effective_max_turns
from agent_lsp.core.events import AgentUpdate, Decision, Notice, Plan, TextDelta, ToolCall, ToolCallUpdate, Usage
from agent_lsp.core.hooks import Hook
from agent_lsp.core.loop import ChatConfig, ChatState, close_aborted, compact_now, run_chat
from agent_lsp.core.messages import UserMessage
from agent_lsp.core.paths import display
from agent_lsp.core.ports import Approve, Model, ModelError
from agent_lsp.core.tool import Baseline, Tool, ToolContext
from agent_lsp.sessions.checkpoints import Checkpoint, RecordingEditor, plan_revert, revert_files, revert_note, to_rows
from agent_lsp.sessions.live import Sessions
from agent_lsp.sessions.permissions import chat_approval, offered
from agent_lsp.sessions.results import ChatFailure, ChatOutcome
from agent_lsp.sessions.session import Session, now, title_of
from agent_lsp.sessions.store import ChatRecord

log = logging.getLogger(__name__)
NOT_SAVED = "This chat could not be saved to the session store (see the log); it is kept in memory only."
Publish = Callable[[AgentUpdate], None]
BuildModel = Callable[[Settings], Model]


class UnknownToolCall(KeyError):
    """No pending confirmation has that id."""


class NothingToRevert(ValueError):
    """The chats named made no edits (or they were reverted already)."""


@dataclass
class ChatRequest:
    """One chat as composed for a session (sessions/assembly.py)."""

    message: UserMessage
    settings: Settings
    system: str
    tools: list[Tool]
    ctx: ToolContext
    ends_with: Optional[str] = None
    """A tool whose valid call ends the chat with a structured output (`finish`)."""
    hooks: list[Hook] = field(default_factory=list)
    builtin: Optional[tuple[str, str]] = None
    """A builtin slash command instead of a model turn: ("compact", the user's instructions) or ("memory", the
    text to show)."""


def abort(session: Session) -> bool:
    """Cancel the session's running chat, or the chat still being composed in it (it then ends aborted as soon
    as it starts); False when neither."""
    if session.task is not None and not session.task.done():
        session.task.cancel()
        return True
    if session.starting:
        session.abort_asked = True
        return True
    return False


def confirm(session: Session, tool_call_id: str, decision: Decision, message: Optional[str]) -> None:
    """Resolve a pending confirmation (agent/confirmTool); UnknownToolCall when none has that id."""
    future = session.pending.get(tool_call_id)
    if future is None or future.done():
        raise UnknownToolCall(tool_call_id)
    future.set_result((decision, message))


async def confirmation(session: Session, tool_call_id: str) -> tuple[Decision, Optional[str]]:
    """The user's answer about a tool call, as `confirm` gives it (agent/confirmTool)."""
    future = asyncio.get_running_loop().create_future()
    session.pending[tool_call_id] = future
    try:
        return await future
    finally:
        session.pending.pop(tool_call_id, None)


class ChatRunner:
    """Runs chats in sessions, and records in each session what its chats did."""

    def __init__(self, sessions: Sessions, build_model: BuildModel) -> None:
        self._sessions = sessions
        self._build_model = build_model

    async def run(self, session: Session, request: ChatRequest, publish: Publish, ask: Approve) -> ChatOutcome:
        """Run one chat to its end, publishing its updates as they happen; `ask` is the front end's question where
        the user must decide. Cancelling the caller aborts the chat, and a result is answered all the same."""
        started = time.monotonic()
        if request.builtin is not None:
            return await self._builtin(session, request, publish, started)
        record = self._recorder(session, publish)
        state = ChatState(history=session.history)
        settings = request.settings
        if settings.max_turns == 0:
            return _result(session, state, "disabled", started)
        try:
            model = self._build_model(settings)
        except ModelError as e:
            state.error = e
            return _result(session, state, "error", started)
        first_message = len(session.history)
        session.title = session.title or title_of(request.message.text)
        mode = settings.permission_mode
        config = ChatConfig(
            system=request.system,
            tools=[t for t in request.tools if offered(t.kind, mode)],
            max_turns=effective_max_turns(settings.max_turns),
            max_tokens=settings.max_tokens,
            thinking=settings.thinking,
            context_window=settings.context_window,
            compact_threshold=settings.compact_threshold,
            ends_with=request.ends_with,
            hooks=request.hooks,
        )
        state.compaction = session.compaction
        approve = chat_approval(mode, session.grants, ask)
        checkpoint = Checkpoint(chat=session.chat_count, message=request.message.text)
        editor = request.ctx.editor
        baseline = Baseline({d.path: d.text for d in editor.open_documents() if d.path is not None},
                            lambda: {p: c.before for p, c in checkpoint.files.items() if not c.hashes_only})
        ctx = replace(request.ctx, editor=RecordingEditor(editor, checkpoint), baseline=baseline)

        async def drive() -> None:
            async for update in run_chat(model, request.message, state, config, ctx, approve):
                record(update)

        task = asyncio.create_task(drive())
        session.task = task
        if session.abort_asked:  # aborted while it was composed: it ends before asking the model anything
            task.cancel()
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:  # $/cancelRequest of agent/chat: abort, and still answer a result
            task.cancel()
            me = asyncio.current_task()
            while not task.done():  # a second cancel (shutdown, then exit) must not stop the chat being saved
                try:
                    await asyncio.wait({task})
                except asyncio.CancelledError:
                    pass
            while me.cancelling():
                me.uncancel()
        finally:
            session.task = None
            for future in session.pending.values():
                future.cancel()
        if task.cancelled() or task.exception() is not None:
            for update in close_aborted(state):
                record(update)
        if not task.cancelled() and task.exception() is not None:
            log.error("chat failed", exc_info=task.exception())
            state.stop_reason = "error"
            state.error = ModelError("tool_error", f"internal error: {task.exception()!r}")
        if checkpoint.files:
            session.checkpoints.append(checkpoint)
        session.turns_count += state.turns
        session.updated_at = now()
        session.compaction = state.compaction
        outcome = _result(session, state, state.stop_reason or "end_turn", started)
        session.chats.append(ChatRecord(first_message=first_message, stop_reason=outcome.stop_reason,
                                        duration_ms=outcome.duration_ms, usage=outcome.usage))
        self._save(session, publish, checkpoints=to_rows(checkpoint))
        return outcome

    async def _builtin(self, session: Session, request: ChatRequest, publish: Publish, started: float) -> ChatOutcome:
        """Run a builtin command: `/compact` compacts the session now (one model call, abortable), `/memory`
        shows its text. Neither adds to the transcript."""
        state = ChatState(history=session.history, compaction=session.compaction)
        name, argument = request.builtin
        text = argument
        if name == "compact":
            try:
                model = self._build_model(request.settings)
                config = ChatConfig(system=request.system, tools=[], max_turns=1,
                                    max_tokens=request.settings.max_tokens)
                session.task = asyncio.ensure_future(compact_now(model, state, config, argument))
                text = await session.task
            except ModelError as e:
                state.error = e
                return _result(session, state, "error", started)
            except asyncio.CancelledError:  # agent/abort, or $/cancelRequest: answered all the same
                me = asyncio.current_task()
                while me.cancelling():
                    me.uncancel()
                return _result(session, state, "aborted", started)
            finally:
                session.task = None
            if state.usage != Usage():
                publish(state.usage.model_copy())
            session.compaction = state.compaction
            session.updated_at = now()
            self._save(session, publish)
        publish(TextDelta(text=text))
        state.final_message = text
        return _result(session, state, "end_turn", started)

    async def revert(self, session: Session, to_chat: Optional[int], editor) -> tuple[list, list]:
        """Undo the edits of the last chat, or of every chat after the first `to_chat`; answers (reverted paths,
        refused (path, reason)). The history tells the model what was undone. NothingToRevert when the chats named
        made no edits still in place."""
        first = session.chat_count - 1 if to_chat is None else to_chat
        chosen = [c for c in session.checkpoints if c.chat >= first]
        if not chosen:
            which = "the last chat" if to_chat is None else f"the chats after the first {to_chat}"
            raise NothingToRevert(f"{which} of session {session.id} made no edits that can be reverted")
        reverted, refused = await revert_files(editor, plan_revert(chosen))
        undone = []
        for checkpoint in chosen:  # what was restored is gone from the checkpoints; what was refused stays
            for path in reverted:
                if checkpoint.files.pop(path, None) is not None:
                    undone.append((checkpoint.chat, str(path)))
        session.checkpoints = [c for c in session.checkpoints if c.files]
        note = revert_note(sorted({c.chat for c in chosen}), [display(editor.roots, p) for p in reverted],
                           [(display(editor.roots, p), why) for p, why in refused])
        session.history.append(UserMessage(text=note, origin="revert"))
        session.updated_at = now()
        self._sessions.save(session, reverted=tuple(undone))
        return reverted, refused

    def _save(self, session: Session, publish: Publish, **records) -> None:
        """Save the session; when the store cannot take it, the user is told."""
        if not self._sessions.save(session, **records):
            publish(Notice(level="warning", message=NOT_SAVED))

    @staticmethod
    def _recorder(session: Session, publish: Publish) -> Publish:
        """Publish an update, and remember how tool calls went and the latest plan for agent/history (a
        subagent's calls are not in the transcript: only sent)."""

        def record(update: AgentUpdate) -> None:
            if update.parent_tool_call_id is not None:
                pass
            elif isinstance(update, Plan):
                session.plan = [entry.wire() for entry in update.entries]
            elif isinstance(update, ToolCall):
                session.tool_calls[update.tool_call_id] = {**update.wire(), "status": "running"}
                session.unsaved_calls.add(update.tool_call_id)
            elif isinstance(update, ToolCallUpdate) and update.tool_call_id in session.tool_calls:
                entry = session.tool_calls[update.tool_call_id]
                entry.update({k: v for k, v in update.wire().items() if k in ("status", "output", "error", "diff")})
                session.unsaved_calls.add(update.tool_call_id)
            publish(update)

        return record


def _result(session: Session, state: ChatState, stop_reason: str, started: float) -> ChatOutcome:
    error = ChatFailure(type=state.error.type, message=state.error.message) if state.error else None
    return ChatOutcome(
        session_id=session.id,
        stop_reason=stop_reason,
        final_message=state.final_message,
        error=error if stop_reason == "error" else None,
        turns_count=state.turns,
        tool_calls_count=state.tool_calls,
        denied_tool_calls=state.denied,
        duration_ms=int((time.monotonic() - started) * 1000),
        usage=state.usage.model_copy(),
        structured_output=state.structured_output if state.finished else None,
    )
