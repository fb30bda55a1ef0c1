"""Shell hooks from settings and from the workspace's own settings file (only once trusted), and the other keys of
that file that need trust: a permission mode that acts without asking, webFetch."""

from __future__ import annotations

import asyncio
import json

from tests.e2e.conftest import chat, confirm, sent, text, tool_use, updates_of, waiting_for_confirmation
from tests.waiting import until

RUN = tool_use("run_command", {"command": "touch ran.txt"}, id="toolu_r1")


def hooks(command: str, timeout: float = 10) -> dict:
    return {"PreToolUse": [{"matcher": "run_command|edit_file",
                            "hooks": [{"type": "command", "command": command, "timeout": timeout}]}]}


def tool_result(fake_api, request: int) -> dict:
    return [b for b in sent(fake_api, request)[-1]["content"] if b["type"] == "tool_result"][0]


async def test_a_pre_tool_hook_that_exits_2_blocks_the_call_and_the_model_reads_why(lsp):
    seen = lsp.workspace.parent / "event.json"
    lsp.fake_api.add(RUN, text("Understood."))
    client = await lsp.start(init_options={"hooks": hooks(f"cat > {seen}; echo 'no shell commands here' >&2; exit 2")})
    result = await chat(client, "make a file", permissionMode="bypassPermissions")
    assert result["stopReason"] == "end_turn" and not (lsp.workspace / "ran.txt").exists()
    assert tool_result(lsp.fake_api, 1) == {"type": "tool_result", "tool_use_id": "toolu_r1", "is_error": True,
                                            "content": "A hook refused this call: no shell commands here"}
    event = json.loads(seen.read_text())
    assert event == {"event": "PreToolUse", "sessionId": result["sessionId"], "cwd": str(lsp.workspace),
                     "toolName": "run_command", "toolInput": {"command": "touch ran.txt"}}
    statuses = [u["status"] for u in updates_of(client) if u["kind"] == "tool_call_update"]
    assert statuses == ["rejected"]


async def test_a_hook_that_times_out_is_stopped_with_a_warning_and_the_call_goes_on(lsp):
    lsp.fake_api.add(RUN, text("Done."))
    client = await lsp.start(init_options={"hooks": hooks("sleep 60", timeout=1)})
    await chat(client, "make a file", permissionMode="bypassPermissions")
    assert (lsp.workspace / "ran.txt").exists()
    notices = [u["message"] for u in updates_of(client) if u["kind"] == "notice"]
    assert notices == ["The PreToolUse hook `sleep 60` timed out after 1 s and was stopped."]


async def test_a_workspace_files_hooks_run_only_once_trusted(lsp):
    (lsp.workspace / ".agent-lsp").mkdir()
    (lsp.workspace / ".agent-lsp" / "settings.json").write_text(json.dumps({"hooks": hooks("exit 2")}))
    lsp.fake_api.add(RUN, text("Ran."))
    client = await lsp.start()
    client.message_answer = "Don't trust"
    await chat(client, "make a file", permissionMode="bypassPermissions")
    assert (lsp.workspace / "ran.txt").exists()  # the untrusted hook did not run
    (question,) = client.message_requests
    assert question.message.startswith(f"agent-lsp: {lsp.workspace}/.agent-lsp/settings.json asks to run hooks: "
                                       "`exit 2`.")
    assert [a.title for a in question.actions] == ["Trust", "Don't trust"]

    (lsp.workspace / "ran.txt").unlink()
    lsp.fake_api.add(RUN, text("Not asked again."))
    await chat(client, "again", permissionMode="bypassPermissions")
    assert len(client.message_requests) == 1 and (lsp.workspace / "ran.txt").exists()

    # another server on the same data dir remembers the answer; a trusted file's hook runs
    await lsp.stop_client(client)
    (lsp.workspace / ".agent-lsp" / "settings.json").write_text(json.dumps({"hooks": hooks("exit 2 # v2")}))
    (lsp.workspace / "ran.txt").unlink()
    lsp.fake_api.add(RUN, text("Blocked."))
    trusted = await lsp.start()
    trusted.message_answer = "Trust"
    await chat(trusted, "make a file", permissionMode="bypassPermissions")
    assert len(trusted.message_requests) == 1  # the commands changed, so it asked again
    assert not (lsp.workspace / "ran.txt").exists()


async def test_a_malformed_hooks_setting_is_a_warning_naming_it(lsp):
    lsp.fake_api.add(text("Hi."))
    client = await lsp.start(init_options={"hooks": {"PreToolUse": [{"matcher": "(", "command": "true"}]}})
    await chat(client, "hi")
    (warning,) = [m.message for m in client.messages]
    assert warning.startswith("agent-lsp: setting `hooks` from initializationOptions PreToolUse matcher '(' is not "
                              "a regex")


async def test_a_workspace_files_hands_off_permission_mode_applies_only_once_trusted(lsp):
    (lsp.workspace / ".agent-lsp").mkdir()
    (lsp.workspace / ".agent-lsp" / "settings.json").write_text(json.dumps({"permissionMode": "bypassPermissions"}))
    lsp.fake_api.add(RUN, text("Asked first."))
    client = await lsp.start(agent={"confirmTool": True})
    client.message_answer = "Don't trust"
    task = asyncio.ensure_future(chat(client, "make a file"))
    await until(waiting_for_confirmation(client))  # untrusted: the default mode asks
    (question,) = client.message_requests
    assert question.message == (f"agent-lsp: {lsp.workspace}/.agent-lsp/settings.json asks to run every tool without "
                                "asking (`permissionMode`: bypassPermissions). Trust this workspace's settings? Until "
                                "you do, they are ignored.")
    await confirm(client, "reject_once")
    assert (await task)["stopReason"] == "end_turn" and not (lsp.workspace / "ran.txt").exists()

    await lsp.stop_client(client)  # the answer is remembered for this content: changed, it is asked again
    (lsp.workspace / ".agent-lsp" / "settings.json").write_text(json.dumps(
        {"permissionMode": "bypassPermissions", "webFetch": {"timeout": 5}}))
    lsp.fake_api.add(RUN, text("Ran."))
    trusted = await lsp.start(agent={"confirmTool": True})
    trusted.message_answer = "Trust"
    await chat(trusted, "make a file")
    (question,) = trusted.message_requests
    assert question.message.startswith(f"agent-lsp: {lsp.workspace}/.agent-lsp/settings.json asks to set where "
                                       'web_fetch may go (`webFetch`: {"timeout": 5}) and run every tool without asking')
    assert (lsp.workspace / "ran.txt").exists()  # trusted: it ran without a confirmation
    assert not [u for u in trusted.updates if u["update"]["kind"] == "confirmation_request"]
