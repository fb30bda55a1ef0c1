"""Structured output: `outputSchema` offers a `finish` tool; a valid call ends the chat with `structuredOutput`."""

from __future__ import annotations

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from tests.e2e.conftest import chat, sent, shape, text, tool_use, updates_of

SCHEMA = {"type": "object", "properties": {"summary": {"type": "string"}, "count": {"type": "integer"}},
          "required": ["summary", "count"], "additionalProperties": False}


def tool_results(fake_api, request: int) -> list[dict]:
    return [b for b in sent(fake_api, request)[-1]["content"] if b["type"] == "tool_result"]


async def test_an_invalid_finish_is_an_error_the_model_corrects_then_the_chat_ends_with_the_value(lsp):
    lsp.fake_api.add(tool_use("finish", {"summary": "two files", "count": "two"}, id="toolu_f1"),
                     tool_use("finish", {"summary": "two files", "count": 2}, id="toolu_f2", say="Done."))
    client = await lsp.start()
    result = await chat(client, "count the files", outputSchema=SCHEMA)
    assert (result["stopReason"], result["structuredOutput"]) == ("end_turn", {"summary": "two files", "count": 2})
    assert result["metadata"]["turnsCount"] == 2 and result["finalMessage"] == "Done."
    (finish,) = [t for t in lsp.fake_api.requests[0]["tools"] if t["name"] == "finish"]
    assert finish["input_schema"] == SCHEMA
    assert tool_results(lsp.fake_api, 1) == [{
        "type": "tool_result", "tool_use_id": "toolu_f1", "is_error": True,
        "content": "The input does not match the required schema:\n- count: 'two' is not of type 'integer'\n"
                   "Call finish again with corrected input."}]
    assert len(lsp.fake_api.requests) == 2  # no model call after the accepted finish
    assert shape(updates_of(client))[-3:] == ["tool_call", "tool_call_update:running", "tool_call_update:completed"]


async def test_a_schema_that_is_not_an_object_is_wrapped_and_unwrapped_and_a_text_reply_is_nudged(lsp):
    lsp.fake_api.add(text("The names are a and b."), tool_use("finish", {"value": ["a", "b"]}))
    client = await lsp.start()
    result = await chat(client, "names?", outputSchema={"type": "array", "items": {"type": "string"}})
    assert result["structuredOutput"] == ["a", "b"]
    (finish,) = [t for t in lsp.fake_api.requests[0]["tools"] if t["name"] == "finish"]
    assert finish["input_schema"]["properties"] == {"value": {"type": "array", "items": {"type": "string"}}}
    assert sent(lsp.fake_api, 1)[-1]["content"][-1]["text"] == "Call the finish tool with your final answer."


@pytest.mark.parametrize("schema", [{"type": "nonsense"}, {"properties": 3}, "a string", [1]])
async def test_an_invalid_schema_is_invalid_params_naming_output_schema(lsp, schema):
    client = await lsp.start()
    with pytest.raises(JsonRpcInvalidParams, match="outputSchema"):
        await chat(client, "hi", outputSchema=schema)
    assert lsp.fake_api.requests == []


async def test_without_an_output_schema_nothing_changes(lsp):
    lsp.fake_api.add(text("Hello."))
    client = await lsp.start()
    result = await chat(client, "hi")
    assert "structuredOutput" not in result
    assert "finish" not in [t["name"] for t in lsp.fake_api.requests[0]["tools"]]
