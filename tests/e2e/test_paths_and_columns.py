"""What the model reads is in its own terms: workspace paths (not URIs) and columns in characters."""

from __future__ import annotations

import pytest
from lsprotocol import types

from tests.e2e.conftest import chat, open_doc, sent, server_env, text, tool_use
from tests.waiting import until

LINE = "s = '😀é' + undefined_name\n"  # 😀 is 2 UTF-16 units and 4 UTF-8 bytes; é is 1 and 2


def tool_result(fake_api, request: int) -> str:
    (block,) = [b for b in sent(fake_api, request)[-1]["content"] if b["type"] == "tool_result"]
    return block["content"]


async def test_an_active_file_that_is_not_open_is_a_workspace_path_and_read_file_takes_uris(lsp):
    (lsp.workspace / "pkg dir").mkdir()
    other = lsp.workspace / "pkg dir" / "mod.py"
    other.write_text("VALUE = 1\n")
    lsp.fake_api.add(tool_use("read_file", {"path": other.as_uri()}, id="toolu_u"),
                     tool_use("read_file", {"path": "file:///etc/hostname"}, id="toolu_out"), text("Read it."))
    client = await lsp.start()
    result = await chat(client, "what is in the active file?", context={"activeUri": other.as_uri()})
    assert result["finalMessage"] == "Read it."
    context, _ = sent(lsp.fake_api, 0)[0]["content"]
    assert context == {"type": "text", "text": "<editor-context>\nActive file: pkg dir/mod.py\n</editor-context>"}
    assert tool_result(lsp.fake_api, 1) == "pkg dir/mod.py (1 lines)\n     1\tVALUE = 1"
    assert tool_result(lsp.fake_api, 2).startswith("file:///etc/hostname is outside the workspace folders")


@pytest.mark.parametrize("encodings, character", [(None, 12), (["utf-8"], 15), (["utf-32"], 11)])
async def test_editor_diagnostics_reach_the_model_in_character_columns(lsp, encodings, character):
    """The editor counts `undefined_name`'s column in the negotiated encoding; the model reads column 12."""
    lsp.fake_api.add(tool_use("get_diagnostics", {}), text("One error."))
    client = await lsp.start(capabilities=types.ClientCapabilities(
        general=types.GeneralClientCapabilities(position_encodings=encodings) if encodings else None,
        experimental={"agent": {"diagnostics": True}}))
    uri = open_doc(client, lsp.workspace / "app.py", "x = 1\n" + LINE)
    client.editor_diagnostics = {"items": [{"uri": uri, "diagnostics": [{
        "range": {"start": {"line": 1, "character": character}, "end": {"line": 1, "character": character + 14}},
        "severity": 1, "message": "undefined name", "source": "pyflakes"}]}]}
    await chat(client)
    assert tool_result(lsp.fake_api, 1) == "app.py:2:12: error: undefined name [pyflakes]"


async def test_the_sdk_is_warmed_after_initialized_before_any_chat(lsp):
    log = lsp.workspace.parent / "server.log"
    client = await lsp.start("--log-file", str(log), "--log-level", "INFO")
    await until(lambda: log.exists() and "warmed the anthropic SDK" in log.read_text(), timeout=60)
    lsp.fake_api.add(text("Warm."))
    assert (await chat(client))["finalMessage"] == "Warm."


async def test_a_chat_sent_right_after_start_up_shares_the_warm_up_s_single_sdk_import(lsp):
    """The first chat arrives before the warm-up's timer: it starts the warm-up and awaits it, off the loop;
    the SDK is imported once, by the warm-up, and never by the chat itself."""
    log = lsp.workspace.parent / "server.log"
    lsp.fake_api.add(text("Cold."))
    client = await lsp.start("--log-file", str(log), "--log-level", "INFO",
                             env=server_env(lsp.fake_api.base_url, AGENT_LSP_DEBUG="1"))
    assert (await chat(client))["finalMessage"] == "Cold."
    debug = await client.protocol.send_request_async("agent/debug", {})
    assert debug["preloaded"] == ["agent_lsp.lsp.handlers", "agent_lsp.models.anthropic", "anthropic"]  # httpx2: by anthropic
    await until(lambda: "warmed the anthropic SDK" in log.read_text(), timeout=60)
    assert log.read_text().count("warmed the anthropic SDK") == 1
