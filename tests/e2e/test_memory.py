"""Project memory: a fact remembered in one session is in the system prompt of a new session after a restart."""

from __future__ import annotations

import asyncio

from tests.e2e.conftest import chat, confirm, text, tool_use, waiting_for_confirmation
from tests.waiting import until

FACT = "Run the tests with `make check`, never with plain pytest."


async def test_remembered_in_agents_md_through_the_editor_and_known_after_a_restart(lsp):
    (lsp.workspace / "AGENTS.md").write_text("# Notes\n\nUse tabs.\n")
    lsp.fake_api.add(tool_use("remember", {"fact": FACT}, id="toolu_m1"), text("I'll remember that."))
    client = await lsp.start(agent={"confirmTool": True})
    task = asyncio.ensure_future(chat(client, "remember how to run the tests"))
    await until(waiting_for_confirmation(client))
    (request,) = [u["update"] for u in client.updates if u["update"]["kind"] == "confirmation_request"]
    assert request["diff"].endswith("+## Memory\n+\n+- Run the tests with `make check`, never with plain pytest.\n")
    await confirm(client, "allow_once")
    await task
    (applied,) = client.applied
    assert applied.label == "agent-lsp: remembered the fact"
    # the test editor applies edits to open buffers only; the file on disk is what a saved buffer would hold
    (lsp.workspace / "AGENTS.md").write_text(f"# Notes\n\nUse tabs.\n\n## Memory\n\n- {FACT}\n")
    await lsp.stop_client(client)

    lsp.fake_api.add(text("Hello again."))
    restarted = await lsp.start()
    await chat(restarted, "how do I run the tests?")
    system = lsp.fake_api.requests[-1]["system"][0]["text"]
    assert system.endswith(f"# Project instructions (AGENTS.md)\n# Notes\n\nUse tabs.\n\n## Memory\n\n- {FACT}")


async def test_private_memory_stays_out_of_the_repository_and_forget_removes_it(lsp):
    lsp.fake_api.add(tool_use("remember", {"fact": FACT}), text("Noted."))
    options = {"memoryFile": "private"}
    client = await lsp.start(init_options=options)
    await chat(client, "remember how to run the tests", permissionMode="acceptEdits")
    assert not (lsp.workspace / "AGENTS.md").exists() and client.applied == []
    await lsp.stop_client(client)

    lsp.fake_api.add(tool_use("forget", {"fact": "no such fact"}), tool_use("forget", {"fact": FACT}),
                     text("Forgotten."))
    restarted = await lsp.start(init_options=options)
    await chat(restarted, "forget it", permissionMode="acceptEdits")
    first_system = lsp.fake_api.requests[-3]["system"][0]["text"]
    assert first_system.endswith(f"# Project memory (facts remembered in earlier chats)\n- {FACT}")
    refused = [b for b in lsp.fake_api.requests[-2]["messages"][-1]["content"] if b["type"] == "tool_result"][0]
    assert refused["is_error"] and refused["content"].endswith(f"The memory holds:\n- {FACT}")

    lsp.fake_api.add(text("Clean."))
    await chat(restarted, "anything remembered?")
    assert "# Project memory" not in lsp.fake_api.requests[-1]["system"][0]["text"]
