"""The request body agent-lsp sends to the Messages API, made from JSON worked out once per message, is the body
`messages.stream(**api_request(...))` would send: the same JSON, encoded as the SDK encodes it."""

from __future__ import annotations

import json

import pytest

from agent_lsp.core.messages import (
    AssistantMessage,
    ImagePart,
    RedactedThinkingPart,
    TextPart,
    ThinkingPart,
    ToolResult,
    ToolResultsMessage,
    ToolUsePart,
    UserMessage,
)
from agent_lsp.core.ports import ModelRequest, ToolSpec
from agent_lsp.models.anthropic import api_body, api_request

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
TOOLS = [ToolSpec("read_file", "Read a file — whole or a range.", SCHEMA),
         ToolSpec("list_files", "List files.", {"type": "object", "properties": {}})]
PNG = ImagePart(media_type="image/png", data="iVBORw0KGgo=")


def history() -> list:
    return [
        UserMessage(text="Lis ça, s'il te plaît: \"a.py\"\n", context="Open: a.py (line 3)", images=[PNG]),
        AssistantMessage(parts=[
            ThinkingPart(thinking="The user wants a.py.", signature="sig=="),
            RedactedThinkingPart(data="opaque"),
            ThinkingPart(thinking="unsigned, from another provider"),  # never sent
            TextPart(text="Reading it."),
            ToolUsePart(id="t1", name="read_file", input={"path": "a.py", "n": [1, 2.5, None, True]}),
            ToolUsePart(id="t2", name="list_files"),
        ]),
        ToolResultsMessage(results=[ToolResult(tool_use_id="t1", content="print('é\\u2028')\t"),
                                    ToolResult(tool_use_id="t2", content="", is_error=True)]),
        UserMessage(text="And the image?", images=[PNG, ImagePart(media_type="image/jpeg", data="/9j/4AA=")]),
        AssistantMessage(parts=[ThinkingPart(thinking="only unsigned")]),  # nothing left: no message
        AssistantMessage(parts=[TextPart(text="A 1×1 PNG. 🙂")]),
        UserMessage(text="Thanks"),
        ToolResultsMessage(results=[]),  # merged into the user turn before, adds nothing
    ]


def sdk_bytes(kwargs: dict) -> bytes:
    """The body as the SDK encodes `messages.stream(**kwargs)`: its key order, no spaces, UTF-8 unescaped."""
    order = ["max_tokens", "messages", "model", "system", "tools", "thinking", "tool_choice"]
    body = {k: kwargs[k] for k in order if k in kwargs} | {"stream": True}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


@pytest.mark.parametrize("thinking", [None, "adaptive", 2048])
@pytest.mark.parametrize("tools", [TOOLS, []])
def test_the_body_is_the_sdk_body_of_the_same_request(thinking, tools):
    messages = history()
    request = ModelRequest(system="You are a coding agent.\nBe brief — «yes».", messages=messages, tools=tools,
                           tool_choice="none" if tools else "auto", max_tokens=4096, thinking=thinking)
    kwargs = api_request("claude-test", request)
    assert json.loads(api_body("claude-test", request)) == {**kwargs, "stream": True}
    assert api_body("claude-test", request) == sdk_bytes(kwargs)
    # Messages merged: user (context, image, text) / assistant / user (results, images, text) / assistant / user.
    assert [m["role"] for m in kwargs["messages"]] == ["user", "assistant", "user", "assistant", "user"]


def test_a_grown_history_reuses_each_message_and_marks_only_the_last_block():
    messages = history()
    for n in range(3):  # each request appends, as a session does; the earlier marks are gone
        messages = [*messages, AssistantMessage(parts=[TextPart(text=f"reply {n}")]), UserMessage(text=f"chat {n}")]
        request = ModelRequest(system="s", messages=messages, tools=TOOLS)
        body = json.loads(api_body("m", request))
        assert body == {**api_request("m", request), "stream": True}
        marked = [b for m in body["messages"] for b in m["content"] if "cache_control" in b]
        assert marked == [{"type": "text", "text": f"chat {n}", "cache_control": {"type": "ephemeral"}}]


def test_the_last_user_turn_merged_from_two_messages_marks_its_last_block():
    messages = [UserMessage(text="a"), ToolResultsMessage(results=[ToolResult(tool_use_id="t", content="x")]),
                ToolResultsMessage(results=[])]
    request = ModelRequest(system="s", messages=messages, tools=[])
    body = json.loads(api_body("m", request))
    assert body["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "a"},
        {"type": "tool_result", "tool_use_id": "t", "content": "x", "cache_control": {"type": "ephemeral"}}]}]
    assert body == {**api_request("m", request), "stream": True}


def test_a_tool_list_with_other_schemas_is_not_taken_for_a_cached_one():
    first = json.loads(api_body("m", ModelRequest(system="s", messages=[UserMessage(text="a")], tools=TOOLS)))
    other = [ToolSpec("read_file", TOOLS[0].description, {"type": "object", "properties": {}}), TOOLS[1]]
    second = json.loads(api_body("m", ModelRequest(system="s", messages=[UserMessage(text="a")], tools=other)))
    assert first["tools"][0]["input_schema"] == SCHEMA
    assert second["tools"][0]["input_schema"] == {"type": "object", "properties": {}}


def test_a_history_that_is_not_an_extension_of_the_last_one_is_made_whole():
    messages = history()
    requests = [
        messages,
        [*messages, AssistantMessage(parts=[TextPart(text="more")]), UserMessage(text="again")],
        messages[:3],  # shorter: cut
        [messages[0], messages[1].model_copy(update={"parts": [TextPart(text="changed")]}), *messages[2:]],
        [*messages[:6], UserMessage(text="a user turn merged into the last")],
        [UserMessage(text="another session")],
        messages,
    ]
    for sent in requests:
        request = ModelRequest(system="s", messages=sent, tools=TOOLS)
        assert json.loads(api_body("m", request)) == {**api_request("m", request), "stream": True}


def test_a_message_of_images_alone_has_no_empty_text_block():
    request = ModelRequest(system="s", messages=[UserMessage(text="", images=[PNG])], tools=[])
    (user,) = json.loads(api_body("m", request))["messages"]
    assert [b["type"] for b in user["content"]] == ["image"]
    with_context = ModelRequest(system="s", messages=[UserMessage(text="", context="Open: a.py", images=[PNG])], tools=[])
    (user,) = api_request("m", with_context)["messages"]
    assert [(b["type"], b.get("text")) for b in user["content"]] == [("text", "Open: a.py"), ("image", None)]
