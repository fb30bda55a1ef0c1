"""The loop with the scripted model and a FakeEditor: whole update sequences."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agent_lsp import tools
from agent_lsp.core.events import Notice, TextDelta, ToolCall, ToolCallUpdate, TurnStart, Usage
from agent_lsp.core.loop import NUDGE, SUMMARY_REQUEST, ChatConfig, ChatState, run_chat
from agent_lsp.core.messages import (
    AssistantMessage,
    TextPart,
    ToolResult,
    ToolResultsMessage,
    UserMessage,
)
from agent_lsp.core.tool import Tool, ToolContext, ToolInput, ToolOutput
from agent_lsp.models.scripted import ScriptedModel
from tests.fakes.editor import FakeEditor


def text(t: str, **extra: Any) -> dict:
    return {"content": [{"type": "text", "text": t}], **extra}


def calls(*uses: tuple[str, dict], say: str = "") -> dict:
    content = [{"type": "text", "text": say}] if say else []
    return {"content": content + [{"type": "tool_use", "id": f"t{i}", "name": n, "input": a}
                                  for i, (n, a) in enumerate(uses, 1)]}


async def run(script: list[dict], editor: FakeEditor, max_turns: int = 10, extra_tools: list[Tool] = ()):
    model = ScriptedModel(script)
    state = ChatState(history=[])
    config = ChatConfig(system="sys", tools=[*tools.ALL, *extra_tools], max_turns=max_turns)
    updates = [u async for u in run_chat(model, UserMessage(text="hello"), state, config, ToolContext(editor=editor))]
    return updates, state, model


def shape(updates) -> list[str]:
    """The kinds of a sequence, with tool statuses; a run of text deltas counts once."""
    kinds = [f"{u.kind}:{u.status}" if isinstance(u, ToolCallUpdate) else u.kind for u in updates]
    return [k for i, k in enumerate(kinds) if not (k == "text_delta" and i and kinds[i - 1] == k)]


@pytest.fixture
def editor(tmp_path) -> FakeEditor:
    return FakeEditor(root=tmp_path.resolve())


async def test_text_only(editor):
    updates, state, model = await run([text("Hello there.")], editor)
    assert updates == [
        TurnStart(turn=1, max_turns=10),
        TextDelta(text="Hello "),
        TextDelta(text="there."),
        Usage(input_tokens=10, output_tokens=5),
    ]
    assert (state.stop_reason, state.final_message, state.turns, state.tool_calls) == ("end_turn", "Hello there.", 1, 0)
    assert state.history == [UserMessage(text="hello"), AssistantMessage(parts=[TextPart(text="Hello there.")])]
    assert [t.name for t in model.requests[0].tools] == [t.name for t in tools.ALL]


async def test_one_tool_reads_the_unsaved_buffer(editor):
    path = editor.open("a.py", "x = 1  # unsaved\n")
    path.write_text("x = 0\n")
    updates, state, model = await run([calls(("read_file", {"path": "a.py"})), text("Done.")], editor)
    assert shape(updates) == ["turn_start", "usage", "tool_call", "tool_call_update:running",
                              "tool_call_update:completed", "turn_start", "text_delta", "usage"]
    assert updates[2] == ToolCall(tool_call_id="t1", name="read_file", title="Read a.py", tool_kind="read",
                                  input={"path": "a.py"}, locations=[{"uri": path.as_uri()}])
    result = state.history[2]
    assert result == ToolResultsMessage(results=[ToolResult(
        tool_use_id="t1", content="a.py (1 lines, open in the editor with unsaved changes)\n     1\tx = 1  # unsaved")])
    assert model.requests[1].messages[2] == result
    assert (state.turns, state.tool_calls, state.stop_reason) == (2, 1, "end_turn")


class Rendezvous(Tool):
    """Two calls of this tool finish only if they run at the same time."""

    name, kind, description = "rendezvous", "read", "test"

    class Input(ToolInput):
        name: str

    def __init__(self) -> None:
        self.arrived: dict[str, asyncio.Event] = {"a": asyncio.Event(), "b": asyncio.Event()}
        self.b_done = asyncio.Event()

    async def run(self, ctx: ToolContext, input: "Rendezvous.Input") -> ToolOutput:
        self.arrived[input.name].set()
        other = "b" if input.name == "a" else "a"
        await asyncio.wait_for(self.arrived[other].wait(), 60)  # a ceiling: without concurrency they never meet
        if input.name == "a":
            await self.b_done.wait()  # finishes last, yet its result goes first
        else:
            self.b_done.set()
        return ToolOutput(f"met {other}")


async def test_two_reads_run_concurrently_and_answer_in_call_order(editor):
    tool = Rendezvous()
    updates, state, _ = await run(
        [calls(("rendezvous", {"name": "a"}), ("rendezvous", {"name": "b"})), text("ok")], editor, extra_tools=[tool])
    assert shape(updates)[:7] == ["turn_start", "usage", "tool_call", "tool_call", "tool_call_update:running",
                                  "tool_call_update:running", "tool_call_update:completed"]
    assert [(u.tool_call_id, u.output) for u in updates if isinstance(u, ToolCallUpdate) and u.status == "completed"] \
        == [("t1", "met b"), ("t2", "met a")]
    assert state.history[2] == ToolResultsMessage(results=[
        ToolResult(tool_use_id="t1", content="met b"), ToolResult(tool_use_id="t2", content="met a")])


async def test_unknown_tool_is_an_error_result_and_the_loop_goes_on(editor):
    updates, state, model = await run([calls(("rm_rf", {})), text("Sorry.")], editor)
    failed = [u for u in updates if isinstance(u, ToolCallUpdate)]
    assert failed == [ToolCallUpdate(tool_call_id="t1", status="failed", error=failed[0].error)]
    assert failed[0].error.startswith("Unknown tool 'rm_rf'. Available tools: list_open_buffers, read_file")
    assert state.history[2].results[0].is_error and state.stop_reason == "end_turn"
    assert [u.tool_kind for u in updates if isinstance(u, ToolCall)] == ["other"]


async def test_invalid_input_names_the_field(editor):
    updates, state, _ = await run([calls(("read_file", {"path": 3, "limit": 0})), text("ok")], editor)
    result = state.history[2].results[0]
    assert result.is_error
    assert result.content == ("Invalid input for read_file: path: Input should be a valid string; "
                              "limit: Input should be greater than or equal to 1.")


class Broken(Tool):
    name, kind, description = "broken", "read", "always raises"

    class Input(ToolInput):
        pass

    async def run(self, ctx, input):
        raise RuntimeError("disk on fire")


async def test_a_tool_that_raises_is_an_error_result(editor):
    updates, state, _ = await run([calls(("broken", {})), text("ok")], editor, extra_tools=[Broken()])
    assert shape(updates) == ["turn_start", "usage", "tool_call", "tool_call_update:running",
                              "tool_call_update:failed", "turn_start", "text_delta", "usage"]
    assert state.history[2].results == [ToolResult(
        tool_use_id="t1", content="broken failed: RuntimeError: disk on fire", is_error=True)]


async def test_max_turns_ends_with_a_summary_call(editor):
    editor.open("a.py", "x\n")
    script = [calls(("read_file", {"path": "a.py"})), calls(("read_file", {"path": "a.py"})), text("Summary: read twice.")]
    updates, state, model = await run(script, editor, max_turns=2)
    assert shape(updates) == [
        "turn_start", "usage", "tool_call", "tool_call_update:running", "tool_call_update:completed",
        "turn_start", "usage", "tool_call", "tool_call_update:running", "tool_call_update:completed",
        "notice", "text_delta", "usage"]
    assert (state.stop_reason, state.turns, state.final_message) == ("max_turns", 2, "Summary: read twice.")
    last = model.requests[-1]
    assert last.tool_choice == "none" and [t.name for t in last.tools] == [t.name for t in tools.ALL]
    assert last.messages[-1] == UserMessage(text=SUMMARY_REQUEST, origin="summary_request")
    assert isinstance(last.messages[-2], ToolResultsMessage)


async def test_nudge_at_most_twice_in_a_row(editor):
    script = [text("Let me check the file."), text("I will look at it:"), text("Let me look now...")]
    updates, state, model = await run(script, editor)
    assert shape(updates) == ["turn_start", "text_delta", "usage", "notice",
                              "turn_start", "text_delta", "usage", "notice",
                              "turn_start", "text_delta", "usage"]
    assert [m.text for m in state.history if isinstance(m, UserMessage)] == ["hello", NUDGE, NUDGE]
    assert (state.turns, state.stop_reason) == (3, "end_turn")
    assert all(isinstance(u, Notice) for u in updates if u.kind == "notice")


async def test_a_tool_call_resets_the_nudge_count(editor):
    editor.open("a.py", "x\n")
    script = [text("Let me check."), calls(("read_file", {"path": "a.py"})), text("Let me fix it:"),
              text("Let me fix it:"), text("Let me fix it:")]
    _, state, _ = await run(script, editor)
    assert [m.text for m in state.history if isinstance(m, UserMessage)] == ["hello", NUDGE, NUDGE, NUDGE]
    assert state.turns == 5


async def test_model_failure_keeps_partial_text_and_a_valid_history(editor):
    updates, state, _ = await run([{"error": {"message": "overloaded"}}], editor)
    assert shape(updates) == ["turn_start"]
    assert (state.stop_reason, state.error.type, state.error.message) == ("error", "llm_error", "overloaded")
    assert state.history == [UserMessage(text="hello")]


async def test_lone_surrogates_from_a_model_become_u_fffd_and_the_reply_can_be_saved(editor):
    """A model's JSON may escape a lone surrogate ("\\ud800"): such text could not be saved or sent on."""
    updates, state, _ = await run([calls(("read\ud800", {"path": "\udc00.py"}), say="a\ud800b"), text("ok")], editor)
    assert "".join(u.text for u in updates if isinstance(u, TextDelta)) == "a\ufffdbok"
    reply = state.history[1]
    assert reply.text == "a\ufffdb"
    assert [(u.name, u.input) for u in reply.tool_uses] == [("read\ufffd", {"path": "\ufffd.py"})]
    assert [m.model_dump_json() for m in state.history]  # would raise on a lone surrogate
    assert state.stop_reason == "end_turn"


async def test_lone_surrogates_in_thinking_become_u_fffd(editor):
    updates, state, _ = await run([{"content": [{"type": "thinking", "thinking": "hm\udfff"},
                                                {"type": "text", "text": "ok"}]}], editor)
    assert state.history[1].parts[0].thinking == "hm\ufffd"
    assert [m.model_dump_json() for m in state.history]


class LongAnswer(Tool):
    """A language answer longer than an update's preview, ending with its index line."""

    name, kind, description = "long_answer", "read", "test"

    class Input(ToolInput):
        pass

    async def run(self, ctx: ToolContext, input: "LongAnswer.Input") -> ToolOutput:
        return ToolOutput("\n".join(f"a.py:{n}:1: ref" for n in range(1, 301)) + "\nindex: loading — `jedi` is busy")


async def test_a_long_language_answer_keeps_its_index_line_in_the_completed_update(editor):
    updates, state, _ = await run([calls(("long_answer", {})), text("ok")], editor, extra_tools=[LongAnswer()])
    done = [u for u in updates if isinstance(u, ToolCallUpdate) and u.status == "completed"][0].output
    lines = done.splitlines()
    assert lines[0] == "a.py:1:1: ref" and lines[-2].startswith("[output truncated: ")
    assert lines[-1] == "index: loading — `jedi` is busy"  # what the clients show (PROTOCOL §11)
    assert state.history[2].results[0].content.endswith("a.py:300:1: ref\nindex: loading — `jedi` is busy")
