"""A model call that never replies (cut, failed, aborted) still counts the usage its provider reported."""

from __future__ import annotations

import asyncio
from typing import AsyncIterator

from agent_lsp.core.events import TextDelta, TurnStart, Usage
from agent_lsp.core.loop import ChatConfig, ChatState, close_aborted, run_chat
from agent_lsp.core.messages import AssistantMessage, TextPart, UserMessage
from agent_lsp.core.ports import ModelError, ModelEvent, ModelReply, ModelRequest, TextChunk
from agent_lsp.core.tool import ToolContext
from tests.fakes.editor import FakeEditor

SO_FAR = Usage(input_tokens=100, output_tokens=1, cache_read_input_tokens=20)


class CutModel:
    """Reports usage, streams some text, then fails (`fail`) or waits until cancelled; or replies in full."""

    name = "cut"

    def __init__(self, ending: str) -> None:
        self.ending = ending
        self.streaming = asyncio.Event()

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        yield SO_FAR
        yield TextChunk("Half")
        self.streaming.set()
        if self.ending == "fail":
            raise ModelError("llm_error", "the stream was cut")
        if self.ending == "hang":
            await asyncio.Event().wait()
        yield Usage(input_tokens=100, output_tokens=9, cache_read_input_tokens=20)
        yield ModelReply(parts=[TextPart(text="Half")], stop_reason="end_turn",
                         usage=Usage(input_tokens=100, output_tokens=9, cache_read_input_tokens=20))


async def drive(model: CutModel, state: ChatState, tmp_path) -> list:
    config = ChatConfig(system="sys", tools=[], max_turns=5)
    ctx = ToolContext(editor=FakeEditor(root=tmp_path.resolve()))
    return [u async for u in run_chat(model, UserMessage(text="go"), state, config, ctx)]


async def test_a_failed_stream_counts_what_it_used(tmp_path):
    state = ChatState(history=[])
    updates = await drive(CutModel("fail"), state, tmp_path)
    assert updates == [TurnStart(turn=1, max_turns=5), TextDelta(text="Half")]
    assert (state.stop_reason, state.usage) == ("error", SO_FAR)
    assert state.history == [UserMessage(text="go"), AssistantMessage(parts=[TextPart(text="Half")])]


async def test_an_aborted_stream_counts_what_it_used(tmp_path):
    state, model = ChatState(history=[]), CutModel("hang")
    task = asyncio.create_task(drive(model, state, tmp_path))
    await model.streaming.wait()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert close_aborted(state) == [] and (state.stop_reason, state.usage) == ("aborted", SO_FAR)


async def test_a_whole_reply_counts_its_final_usage_once(tmp_path):
    state = ChatState(history=[])
    updates = await drive(CutModel("reply"), state, tmp_path)
    final = Usage(input_tokens=100, output_tokens=9, cache_read_input_tokens=20)
    assert updates[-1] == final and state.usage == final
    assert close_aborted(state) == [] and state.usage == final  # nothing in flight is counted twice
