"""The chat.completions translation, both ways: transcript -> request, streamed chunks -> reply."""

from __future__ import annotations

import asyncio
import json

import httpx2
import pytest
from openai.types.chat import ChatCompletionChunk

from agent_lsp.core.messages import (
    AssistantMessage,
    ImagePart,
    TextPart,
    ThinkingPart,
    ToolResult,
    ToolResultsMessage,
    ToolUsePart,
    UserMessage,
)
from agent_lsp.core.ports import ModelError, ModelReply, ModelRequest, TextChunk, ThinkingChunk, ToolSpec
from agent_lsp.models.openai import OpenAIModel
from agent_lsp.models.openai_wire import ReplyBuilder, api_messages, api_request
from tests.fakes.chat_completions import reply_chunks

READ = ToolSpec("read_file", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}}})


def test_a_transcript_becomes_chat_completions_messages():
    history = [
        UserMessage(text="fix it", context="<editor-context>\nActive file: a.py\n</editor-context>"),
        AssistantMessage(parts=[ThinkingPart(thinking="which file?"), TextPart(text="Reading both."),
                                ToolUsePart(id="call_1", name="read_file", input={"path": "a.py"}),
                                ToolUsePart(id="call_2", name="read_file", input={"path": "é.py"})]),
        ToolResultsMessage(results=[ToolResult(tool_use_id="call_1", content="a"),
                                    ToolResult(tool_use_id="call_2", content="no such file", is_error=True)]),
        AssistantMessage(parts=[ThinkingPart(thinking="only thought")]),
        AssistantMessage(parts=[ToolUsePart(id="call_3", name="read_file", input={}, input_error="not JSON")]),
        ToolResultsMessage(results=[ToolResult(tool_use_id="call_3", content="")]),
        UserMessage(text="thanks", origin="nudge"),
    ]
    assert api_messages(history) == [
        {"role": "user", "content": "<editor-context>\nActive file: a.py\n</editor-context>\n\nfix it"},
        {"role": "assistant", "content": "Reading both.", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a.py"}'}},
            {"id": "call_2", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "é.py"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "a"},
        {"role": "tool", "tool_call_id": "call_2", "content": "Error: no such file"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_3", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_3", "content": "(no output)"},
        {"role": "user", "content": "thanks"},
    ]


def test_the_request_carries_system_tools_and_tool_choice():
    request = ModelRequest(system="You are agent-lsp.", messages=[UserMessage(text="hi")], tools=[READ],
                           tool_choice="none", max_tokens=100)
    assert api_request("qwen", request, "http://127.0.0.1:11434/v1") == {
        "model": "qwen", "stream": True, "stream_options": {"include_usage": True}, "max_tokens": 100,
        "messages": [{"role": "system", "content": "You are agent-lsp."}, {"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "read_file", "description": "Read a file.",
                                                    "parameters": READ.input_schema}}],
        "tool_choice": "none"}
    openai = api_request("gpt-4.1", ModelRequest(system="s", messages=[], tools=[]), None)
    assert openai["max_completion_tokens"] == 8192 and "max_tokens" not in openai and "tools" not in openai


def chunks(*deltas: dict, finish: str = "stop", usage: dict | None = None) -> list[ChatCompletionChunk]:
    base = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    out = [{**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    out.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    if usage:
        out.append({**base, "choices": [], "usage": usage})
    return [ChatCompletionChunk.model_validate(c) for c in out]


def run(items: list[ChatCompletionChunk]) -> tuple[list, ModelReply]:
    builder = ReplyBuilder()
    events = [e for c in items for e in builder.add(c)]
    return events, builder.finish("http://127.0.0.1:2/v1/chat/completions")


def test_text_reasoning_finish_reasons_and_usage_with_cached_tokens():
    events, reply = run(chunks({"role": "assistant", "content": ""}, {"reasoning_content": "think "},
                               {"reasoning": "more"}, {"content": "Hel"}, {"content": "lo"},
                               usage={"prompt_tokens": 100, "completion_tokens": 7, "total_tokens": 107,
                                      "prompt_tokens_details": {"cached_tokens": 60}}))
    assert events == [ThinkingChunk("think "), ThinkingChunk("more"), TextChunk("Hel"), TextChunk("lo")]
    assert reply.parts == [ThinkingPart(thinking="think more"), TextPart(text="Hello")]
    assert reply.stop_reason == "end_turn"
    assert (reply.usage.input_tokens, reply.usage.output_tokens, reply.usage.cache_read_input_tokens) == (40, 7, 60)
    for finish, stop in [("length", "max_tokens"), ("content_filter", "refusal"), ("tool_calls", "end_turn")]:
        assert run(chunks({"content": "x"}, finish=finish))[1].stop_reason == stop


def test_tool_calls_are_read_from_the_calls_not_the_finish_reason():
    call = {"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                            "function": {"name": "read_file", "arguments": "{}"}}]}
    reply = run(chunks(call, finish="stop"))[1]
    assert reply.stop_reason == "tool_use" and reply.parts == [ToolUsePart(id="call_1", name="read_file")]


def test_a_stream_without_finish_reason_is_an_llm_error():
    builder = ReplyBuilder()
    list(builder.add(chunks({"content": "cut"})[0]))
    with pytest.raises(ModelError) as error:
        builder.finish("http://127.0.0.1:2/v1/chat/completions")
    assert (error.value.type, error.value.message) == ("llm_error", "The model stream from http://127.0.0.1:2/v1/chat/"
                                                                    "completions broke off before its end (no "
                                                                    "finish_reason after 1 chunks).")


ARGS = {"path": "src/é/日本.py", "old_string": "say \"hi\"\n\t😀", "new_string": "\u00e9 \\ done"}


def fragments(raw: str, cuts: list[int], index: int = 0, call_id: str = "call_x") -> list[dict]:
    pieces = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)])]
    first = {"tool_calls": [{"index": index, "id": call_id, "type": "function",
                             "function": {"name": "edit_file", "arguments": ""}}]}
    return [first] + [{"tool_calls": [{"index": index, "function": {"arguments": p}}]} for p in pieces]


@pytest.mark.parametrize("raw", [json.dumps(ARGS), json.dumps(ARGS, ensure_ascii=False)])
def test_arguments_split_at_every_position_assemble_to_the_same_input(raw):
    for cut in range(len(raw) + 1):
        reply = run(chunks(*fragments(raw, [cut]), finish="tool_calls"))[1]
        assert reply.parts == [ToolUsePart(id="call_x", name="edit_file", input=ARGS)], cut
    for cut in range(1, len(raw)):  # three pieces, the second one character long
        assert run(chunks(*fragments(raw, [cut, cut + 1])))[1].parts[0].input == ARGS


def test_two_parallel_calls_interleaved_and_a_proxy_that_gives_both_index_zero():
    a, b = json.dumps({"path": "a.py"}), json.dumps({"path": "b.py"})
    fa, fb = fragments(a, [5], 0, "call_a"), fragments(b, [7], 1, "call_b")
    interleaved = [fa[0], fb[0], fa[1], fb[1], fa[2], fb[2]]
    expected = [ToolUsePart(id="call_a", name="edit_file", input={"path": "a.py"}),
                ToolUsePart(id="call_b", name="edit_file", input={"path": "b.py"})]
    assert run(chunks(*interleaved, finish="tool_calls"))[1].parts == expected
    same_index = fragments(a, [5], 0, "call_a") + fragments(b, [7], 0, "call_b")
    assert run(chunks(*same_index, finish="tool_calls"))[1].parts == expected


@pytest.mark.parametrize("raw, problem", [
    ('{"path": "a.py"', "the arguments are not valid JSON (Expecting ',' delimiter, at character 15): "
                        "'{\"path\": \"a.py\"'"),
    ('["a.py"]', "the arguments are a JSON array, not an object: '[\"a.py\"]'"),
    ('"a.py"', "the arguments are a JSON string, not an object: '\"a.py\"'"),
])
def test_malformed_arguments_leave_an_input_error(raw, problem):
    (part,) = run(chunks(*fragments(raw, [3])))[1].parts
    assert (part.input, part.input_error) == ({}, problem)


def test_empty_arguments_and_a_missing_id_are_a_call_without_input():
    call = {"tool_calls": [{"index": 0, "function": {"name": "list_open_buffers", "arguments": ""}}]}
    assert run(chunks(call))[1].parts == [ToolUsePart(id="call_0", name="list_open_buffers")]


def test_the_sdk_reads_the_stream_split_at_every_byte():
    """The fake's SSE bytes (raw UTF-8) delivered one byte at a time, so that every byte position is a cut,
    through the real SDK and our model; then cut in two at each position inside a multi-byte character."""
    script = {"content": [{"type": "thinking", "thinking": "ü"}, {"type": "text", "text": "日本 ok"},
                          {"type": "tool_use", "id": "call_1", "name": "read_file", "input": {"path": "é😀.py"}}]}
    body = b"".join(f"data: {json.dumps(c, ensure_ascii=False)}\n\n".encode()
                    for c in reply_chunks(script, 1, "m", True)) + b"data: [DONE]\n\n"
    inside = [n for n in range(1, len(body)) if body[n] & 0xC0 == 0x80]  # continuation bytes of UTF-8
    splits = iter([[body[n:n + 1] for n in range(len(body))]] + [[body[:n], body[n:]] for n in inside])

    class Pieces(httpx2.AsyncByteStream):
        def __init__(self, pieces: list[bytes]) -> None:
            self.pieces = pieces

        async def __aiter__(self):
            for piece in self.pieces:
                yield piece

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=Pieces(next(splits)))

    import openai


    async def every_split():
        client = openai.AsyncOpenAI(base_url="http://127.0.0.1:1/v1", api_key="k",
                                    http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)))
        model = OpenAIModel("m", "http://127.0.0.1:1/v1", "k", client=client)
        for _ in range(1 + len(inside)):
            events = [e async for e in model.stream(ModelRequest(system="s", messages=[], tools=[]))]
            assert "".join(e.text for e in events if isinstance(e, TextChunk)) == "日本 ok"
            assert events[-1].parts == [ThinkingPart(thinking="ü"), TextPart(text="日本 ok"),
                                        ToolUsePart(id="call_1", name="read_file", input={"path": "é😀.py"})]

    assert len(inside) == 9  # ü, 日, 本, é, 😀
    asyncio.run(every_split())


def test_a_stream_that_breaks_off_says_so_and_an_error_chunk_is_the_apis_message():
    import openai


    body = b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in reply_chunks({"content": [
        {"type": "text", "text": "one two"}]}, 1, "m", True)[:3])

    class Broken(httpx2.AsyncByteStream):
        async def __aiter__(self):
            yield body
            raise httpx2.ReadError("connection reset")

    answers = iter([
        httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=Broken()),
        httpx2.Response(200, headers={"content-type": "text/event-stream"},
                        content=body + b'data: {"error": {"message": "overloaded", "type": "server_error"}}\n\n'),
    ])
    async def failures() -> list[ModelError]:
        client = openai.AsyncOpenAI(base_url="http://127.0.0.1:2/v1", api_key="k", http_client=httpx2.AsyncClient(
            transport=httpx2.MockTransport(lambda request: next(answers))))
        model = OpenAIModel("m", "http://127.0.0.1:2/v1", "k", client=client)
        errors = []
        for _ in range(2):
            with pytest.raises(ModelError) as error:
                [e async for e in model.stream(ModelRequest(system="s", messages=[], tools=[]))]
            errors.append(error.value)
        return errors

    broke, overloaded = asyncio.run(failures())
    assert broke.message == ("The model stream from http://127.0.0.1:2/v1/chat/completions broke off after 3 "
                             "chunks (ReadError: connection reset).")
    assert overloaded.message == ("The model stream from http://127.0.0.1:2/v1/chat/completions failed: APIError: "
                                  "overloaded")


def loose(*deltas: dict, finish: str = "stop") -> list[ChatCompletionChunk]:
    """Chunks as the SDK reads a stream (built without validation), so that odd shapes get through."""
    base = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    out = [{**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    out.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    return [ChatCompletionChunk.construct(**c) for c in out]


def test_fragments_without_an_index_continue_the_last_call_until_a_new_id():
    reply = run(loose({"tool_calls": [{"id": "call_a", "function": {"name": "read_file", "arguments": '{"pa'}}]},
                      {"tool_calls": [{"function": {"arguments": 'th": "a"}'}}]},
                      {"tool_calls": [{"id": "call_b", "function": {"name": "list_files", "arguments": "{}"}}]},
                      finish="tool_calls"))[1]
    assert [(p.id, p.name, p.input) for p in reply.parts] == [("call_a", "read_file", {"path": "a"}),
                                                               ("call_b", "list_files", {})]


@pytest.mark.parametrize("delta, says", [
    ({"content": 7}, "a delta's text is a JSON number: '7'"),
    ({"content": {"text": "x"}}, "a delta's text is a JSON object"),
    ({"tool_calls": [None]}, "a delta's tool_calls is not a list of objects"),
    ({"tool_calls": {"index": 0}}, "a delta's tool_calls is not a list of objects"),
])
def test_a_delta_of_the_wrong_shape_is_a_value_error_naming_it(delta, says):
    with pytest.raises(ValueError, match=says.replace("(", r"\(")):
        run(loose({"content": "fine"}, delta))


def test_a_refusal_delta_is_a_refusal_though_it_ends_with_stop():
    events, reply = run(loose({"content": None, "refusal": "I can't help with that"}))
    assert (events, reply.stop_reason) == ([TextChunk("I can't help with that")], "refusal")


@pytest.mark.parametrize("name, sent", [("read_file", "read_file"), ("", "unnamed_tool"),
                                         ("read file!", "read_file_"), ("x" * 200, "x" * 64)])
def test_a_past_call_goes_back_with_a_name_the_api_accepts(name, sent):
    history = [UserMessage(text="hi"), AssistantMessage(parts=[ToolUsePart(id="call_1", name=name, input={})]),
               ToolResultsMessage(results=[ToolResult(tool_use_id="call_1", content="Unknown tool", is_error=True)])]
    assert api_messages(history)[1]["tool_calls"][0]["function"]["name"] == sent


@pytest.mark.parametrize("depth, error", [(60, None), (500, "nested more than 64 levels"),
                                          (100_000, "the arguments are nested too deep")])
def test_arguments_nested_too_deep_are_an_input_error(depth, error):
    arguments = '{"path": ' + "[" * depth + "]" * depth + "}"
    call = {"tool_calls": [{"index": 0, "id": "call_1", "function": {"name": "read_file", "arguments": arguments}}]}
    use = run(loose(call, finish="tool_calls"))[1].parts[-1]
    assert (use.input_error is None) if error is None else (error in use.input_error and use.input == {})


def test_a_message_of_images_alone_has_no_empty_text_part():
    png = ImagePart(media_type="image/png", data="iVBORw0KGgo=")
    assert api_messages([UserMessage(text="", images=[png])]) == [
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]}]
