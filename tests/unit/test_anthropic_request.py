"""The keyword arguments agent-lsp gives `messages.stream`: turns merged, unsigned thinking left out, the prompt
cache's breakpoint on the last block only."""

from __future__ import annotations

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
from agent_lsp.models.anthropic import api_request

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


@pytest.mark.parametrize("thinking", [None, "adaptive", 2048])
@pytest.mark.parametrize("tools", [TOOLS, []])
def test_the_request_carries_the_system_prompt_tools_and_thinking_asked_for(thinking, tools):
    messages = history()
    request = ModelRequest(system="You are a coding agent.\nBe brief — «yes».", messages=messages, tools=tools,
                           tool_choice="none" if tools else "auto", max_tokens=4096, thinking=thinking)
    kwargs = api_request("claude-test", request)
    assert {k: v for k, v in kwargs.items() if k != "messages"} == {
        "model": "claude-test", "max_tokens": 4096,
        "system": [{"type": "text", "text": request.system, "cache_control": {"type": "ephemeral"}}],
        **({"tools": [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in tools],
            "tool_choice": {"type": "none"}} if tools else {}),
        **({"thinking": {"type": "adaptive"}} if thinking == "adaptive" else {}),
        **({"thinking": {"type": "enabled", "budget_tokens": 2048}} if thinking == 2048 else {}),
    }
    # Messages merged: user (context, image, text) / assistant / user (results, images, text) / assistant / user.
    png = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    assert kwargs["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Open: a.py (line 3)"}, png,
                                     {"type": "text", "text": "Lis ça, s'il te plaît: \"a.py\"\n"}]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "The user wants a.py.", "signature": "sig=="},
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "text", "text": "Reading it."},
            {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a.py", "n": [1, 2.5, None, True]}},
            {"type": "tool_use", "id": "t2", "name": "list_files", "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "print('é\\u2028')\t"},
            {"type": "tool_result", "tool_use_id": "t2", "content": "(no output)", "is_error": True},
            png,
            {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/4AA="}},
            {"type": "text", "text": "And the image?"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "A 1×1 PNG. 🙂"}]},
        {"role": "user", "content": [{"type": "text", "text": "Thanks", "cache_control": {"type": "ephemeral"}}]},
    ]


def test_a_grown_history_marks_only_the_last_block():
    messages = history()
    for n in range(3):  # each request appends, as a session does; the earlier marks are gone
        messages = [*messages, AssistantMessage(parts=[TextPart(text=f"reply {n}")]), UserMessage(text=f"chat {n}")]
        request = ModelRequest(system="s", messages=messages, tools=TOOLS)
        body = api_request("m", request)
        marked = [b for m in body["messages"] for b in m["content"] if "cache_control" in b]
        assert marked == [{"type": "text", "text": f"chat {n}", "cache_control": {"type": "ephemeral"}}]


def test_the_last_user_turn_merged_from_two_messages_marks_its_last_block():
    messages = [UserMessage(text="a"), ToolResultsMessage(results=[ToolResult(tool_use_id="t", content="x")]),
                ToolResultsMessage(results=[])]
    request = ModelRequest(system="s", messages=messages, tools=[])
    body = api_request("m", request)
    assert body["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "a"},
        {"type": "tool_result", "tool_use_id": "t", "content": "x", "cache_control": {"type": "ephemeral"}}]}]


def test_a_message_of_images_alone_has_no_empty_text_block():
    request = ModelRequest(system="s", messages=[UserMessage(text="", images=[PNG])], tools=[])
    (user,) = api_request("m", request)["messages"]
    assert [b["type"] for b in user["content"]] == ["image"]
    with_context = ModelRequest(system="s", messages=[UserMessage(text="", context="Open: a.py", images=[PNG])], tools=[])
    (user,) = api_request("m", with_context)["messages"]
    assert [(b["type"], b.get("text")) for b in user["content"]] == [("text", "Open: a.py"), ("image", None)]
