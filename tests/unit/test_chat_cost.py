"""What a chat costs must not grow with its session: each save writes only what the chat added, and streamed text
reaches the edge as plain strings, coalesced."""

from __future__ import annotations

from agent_lsp.config import Settings
from agent_lsp.core.compaction import size
from agent_lsp.core.events import TextDelta, ThinkingDelta, ToolCall
from agent_lsp.core.messages import AssistantMessage, TextPart, UserMessage
from agent_lsp.core.tool import ToolContext
from agent_lsp.lsp.updates import UpdateStream
from agent_lsp.models.anthropic import api_messages
from agent_lsp.models.scripted import ScriptedModel
from agent_lsp.sessions.runtime import ChatRequest, Sessions
from agent_lsp.sessions.store import Store
from agent_lsp.tools.list_files import ListFiles
from tests.fakes.editor import FakeEditor


def reply(text: str) -> dict:
    return {"content": [{"type": "text", "text": text}]}


async def test_each_save_writes_as_many_rows_at_chat_30_as_at_chat_2(tmp_path):
    model = ScriptedModel([])
    sent: list = []
    store = Store(tmp_path / "sessions.db")
    sessions = Sessions(lambda settings: model, lambda session, update: sent.append(update), store)
    editor = FakeEditor(root=tmp_path.resolve())
    session = sessions.start()
    written = []
    for n in range(30):
        tool = {"content": [{"type": "tool_use", "name": "list_files", "input": {}, "id": f"t{n}"}]}
        model.script += [tool, reply(f"Done {n}.")]
        before = store._db.total_changes
        request = ChatRequest(message=UserMessage(text=f"chat {n}"), settings=Settings(), system="s",
                              tools=[ListFiles()], ctx=ToolContext(editor=editor))
        outcome = await sessions.chat(sessions.reserve(session), request)
        sessions.release(session)
        assert outcome.stop_reason == "end_turn"
        written.append(store._db.total_changes - before)
    assert written[1] == written[-1]  # messages, one chat row, one tool call row, the session row, the lease
    assert len(store.chats(session.id)) == 30 and len(store.tool_calls(session.id)) == 30
    assert [m for m in store.messages(session.id)] == [m.model_dump_json() for m in session.history]
    assert any(isinstance(u, TextDelta) for u in sent) and any(isinstance(u, ToolCall) for u in sent)
    store.close()


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


async def test_plain_text_is_coalesced_like_text_deltas_and_flushed_before_anything_else():
    sent: list = []
    stream = UpdateStream(sent.append)
    stream.push_text("Hel", False)
    stream.push_text("lo", False)
    stream.push(TextDelta(text=" there"))
    stream.push_text("hmm", True)
    call = ToolCall(tool_call_id="t", name="read_file", title="read", tool_kind="read", input={})
    stream.push(call)
    stream.push_text("late", False)
    stream.flush()  # as the chat's end does
    assert [(type(u), u.wire()) for u in sent] == [
        (TextDelta, {"kind": "text_delta", "text": "Hello there"}),
        (ThinkingDelta, {"kind": "thinking_delta", "text": "hmm"}),
        (ToolCall, call.wire()),
        (TextDelta, {"kind": "text_delta", "text": "late"}),
    ]
