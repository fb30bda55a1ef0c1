"""What a chat costs must not grow with its session: each save writes only what the chat added, each message's
derived forms are worked out once, and streamed text is coalesced at the edge."""

from __future__ import annotations

from agent_lsp.config import Settings
from agent_lsp.core.compaction import size
from agent_lsp.core.events import TextDelta, ThinkingDelta, ToolCall
from agent_lsp.core.memo import per_message
from agent_lsp.core.messages import AssistantMessage, TextPart, UserMessage
from agent_lsp.core.tool import ToolContext
from agent_lsp.lsp.updates import UpdateStream
from agent_lsp.models.anthropic import api_messages
from agent_lsp.models.scripted import ScriptedModel
from agent_lsp.sessions.chat_run import ChatRequest, ChatRunner
from agent_lsp.sessions.live import Sessions
from agent_lsp.sessions.store import Store
from agent_lsp.tools.list_files import ListFiles
from tests.fakes.editor import FakeEditor


def reply(text: str) -> dict:
    return {"content": [{"type": "text", "text": text}]}


async def test_each_save_writes_as_many_rows_at_chat_30_as_at_chat_2(tmp_path):
    model = ScriptedModel([])
    sent: list = []
    store = Store(tmp_path / "sessions.db")
    sessions = Sessions(store)
    runner = ChatRunner(sessions, lambda settings: model)
    editor = FakeEditor(root=tmp_path.resolve())
    session = sessions.start()
    written = []
    for n in range(30):
        tool = {"content": [{"type": "tool_use", "name": "list_files", "input": {}, "id": f"t{n}"}]}
        model.script += [tool, reply(f"Done {n}.")]
        before = store._db.total_changes
        request = ChatRequest(message=UserMessage(text=f"chat {n}"), settings=Settings(), system="s",
                              tools=[ListFiles()], ctx=ToolContext(editor=editor))
        outcome = await runner.run(sessions.reserve(session), request, sent.append, ask=None)
        sessions.release(session)
        assert outcome.stop_reason == "end_turn"
        written.append(store._db.total_changes - before)
    assert written[1] == written[-1]  # messages, one chat row, one tool call row, the session row, the lease
    assert len(store.chats(session.id)) == 30 and len(store.tool_calls(session.id)) == 30
    assert [m for m in store.messages(session.id)] == [m.model_dump_json() for m in session.history]
    assert any(isinstance(u, TextDelta) for u in sent) and any(isinstance(u, ToolCall) for u in sent)
    store.close()


def test_a_derived_value_is_computed_once_per_message_and_anew_for_a_changed_copy():
    calls = []

    @per_message
    def words(message: UserMessage) -> int:
        calls.append(message.text)
        return len(message.text.split())

    first = UserMessage(text="one two")
    assert words(first) == words(first) == 2 and calls == ["one two"]
    changed = first.model_copy(update={"text": "one two three"})
    assert words(changed) == 3 and calls == ["one two", "one two three"]


def test_the_wire_form_and_size_of_a_history_stay_as_they_were_when_asked_twice():
    history = [UserMessage(text="hi", context="ctx"), AssistantMessage(parts=[TextPart(text="Hello.")]),
               UserMessage(text="again")]
    first = api_messages(history)
    first[-1]["content"][-1] = {**first[-1]["content"][-1], "cache_control": {"type": "ephemeral"}}
    first[0]["content"].append({"type": "text", "text": "changed by a caller"})
    assert api_messages(history) == [
        {"role": "user", "content": [{"type": "text", "text": "ctx"}, {"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Hello."}]},
        {"role": "user", "content": [{"type": "text", "text": "again"}]},
    ]
    assert size(history) == size(history) > 0


async def test_text_deltas_are_coalesced_and_flushed_before_anything_else():
    sent: list = []
    stream = UpdateStream(sent.append)
    stream.push(TextDelta(text="Hel"))
    stream.push(TextDelta(text="lo"))
    stream.push(TextDelta(text=" there"))
    stream.push(ThinkingDelta(text="hmm"))
    call = ToolCall(tool_call_id="t", name="read_file", title="read", tool_kind="read", input={})
    stream.push(call)
    stream.push(TextDelta(text="late"))
    stream.flush()  # as the chat's end does
    assert [(type(u), u.wire()) for u in sent] == [
        (TextDelta, {"kind": "text_delta", "text": "Hello there"}),
        (ThinkingDelta, {"kind": "thinking_delta", "text": "hmm"}),
        (ToolCall, call.wire()),
        (TextDelta, {"kind": "text_delta", "text": "late"}),
    ]
