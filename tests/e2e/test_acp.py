"""`agent-lsp --acp` driven by the ACP SDK's own client side, the real anthropic SDK against the fake API."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import acp
import pytest
from acp import schema

from tests.e2e.acp_client import RecordingClient, start_agent, wire_shape
from tests.waiting import until
from tests.e2e.conftest import chat, sent, text, tool_use

MODES = ["default", "acceptEdits", "plan", "bypassPermissions"]


def prompt(agent, session_id: str, words: str):
    return asyncio.ensure_future(agent.conn.prompt(session_id=session_id, prompt=[acp.text_block(words)]))


async def round_trip(agent) -> None:
    """A request answered after everything the agent sent before it: nothing arrives after this but its answer."""
    await agent.conn.list_sessions()


async def test_initialize_and_a_prompt_with_a_tool_call_reading_the_unsaved_buffer(agents, fake_api, workspace):
    app = str(workspace / "app.py")
    client = RecordingClient({app: "def greet(name):\n    return 'hello ' + name  # unsaved\n"})
    agent = await agents(client)
    init = agent.initialized
    assert init.protocol_version == 1
    assert (init.agent_info.name, init.agent_info.version) == ("agent-lsp-server", "0.2.0")
    caps = init.agent_capabilities
    assert caps.load_session and caps.prompt_capabilities.embedded_context
    assert caps.session_capabilities.list is not None
    new = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    assert [m.id for m in new.modes.available_modes] == MODES and new.modes.current_mode_id == "default"

    fake_api.add(tool_use("read_file", {"path": "app.py"}, id="toolu_r", say="Let me look."), text("It says hello."))
    answer = await prompt(agent, new.session_id, "what does greet say?")
    assert answer.stop_reason == "end_turn"
    assert wire_shape(client.wire) == [
        "agent_message_chunk", "usage_update", "tool_call:pending", "tool_call_update:in_progress",
        "fs/read_text_file", "tool_call_update:completed", "agent_message_chunk", "usage_update", "answer:end_turn"]
    start = next(u for u in client.updates if isinstance(u, schema.ToolCallStart))
    assert (start.kind, start.title, start.locations[0].path, start.raw_input) == (
        "read", "Read app.py", app, {"path": "app.py"})
    result = sent(fake_api, 1)[-1]["content"][0]["content"]
    assert "return 'hello ' + name  # unsaved" in result and "unsaved changes" in result


async def new_session(agent, workspace: Path, mode: str = "default") -> str:
    session_id = (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
    if mode != "default":
        await agent.conn.set_session_mode(session_id=session_id, mode_id=mode)
    return session_id


def edit(old: str, new: str, id: str) -> dict:
    return tool_use("edit_file", {"path": "app.py", "old_string": old, "new_string": new}, id=id)


async def test_an_edit_lands_in_the_editor_and_allow_always_is_not_asked_again(agents, fake_api, workspace):
    app = str(workspace / "app.py")
    on_disk = (workspace / "app.py").read_text()
    client = RecordingClient({app: on_disk})
    client.answers = ["allow_always"]
    agent = await agents(client)
    session_id = await new_session(agent, workspace)
    fake_api.add(edit("'hi '", "'hello '", "toolu_e1"), text("Edited."))
    assert (await prompt(agent, session_id, "say hello")).stop_reason == "end_turn"
    assert wire_shape(client.wire) == [
        "usage_update", "tool_call:pending", "fs/read_text_file", "tool_call_update:pending",
        "session/request_permission", "tool_call_update:in_progress", "fs/read_text_file", "fs/read_text_file",
        "fs/write_text_file", "fs/read_text_file", "tool_call_update:completed", "agent_message_chunk", "usage_update",
        "answer:end_turn"]
    first = "def greet(name):\n    return 'hello ' + name\n"
    assert client.writes == [(app, first)]
    assert (workspace / "app.py").read_text() == on_disk  # the editor has it; saving is the user's call
    (asked, kinds), = client.permission_requests
    assert kinds == ["allow_once", "allow_always", "reject_once", "reject_always"]
    assert asked.tool_call_id == "toolu_e1"
    (proposed,) = asked.content  # the proposed change as ACP diff content, which approval prompts show
    assert (proposed.type, proposed.path, proposed.old_text, proposed.new_text) == ("diff", app, on_disk, first)
    assert [loc.path for loc in asked.locations] == [app]
    done = [u for u in client.updates if isinstance(u, schema.ToolCallProgress) and u.status == "completed"][-1]
    diff = done.content[0]
    assert (diff.type, diff.path, diff.old_text, diff.new_text) == ("diff", app, on_disk, first)

    fake_api.add(edit("'hello '", "'hey '", "toolu_e2"), text("Again."))
    assert (await prompt(agent, session_id, "say hey")).stop_reason == "end_turn"
    assert len(client.permission_requests) == 1  # allowed for the rest of the session
    assert client.writes[-1] == (app, "def greet(name):\n    return 'hey ' + name\n")


async def test_an_edit_of_a_buffer_changed_since_it_was_read_is_refused(agents, fake_api, workspace):
    app = str(workspace / "app.py")
    client = RecordingClient({app: (workspace / "app.py").read_text()})
    agent = await agents(client)
    session_id = await new_session(agent, workspace, "acceptEdits")

    def type_after_the_read_the_edit_is_computed_on(path, count):  # the user types between read and write
        if count == 2:
            client.buffers[path] += "# typed by the user\n"

    client.after_read = type_after_the_read_the_edit_is_computed_on
    fake_api.add(edit("'hi '", "'hello '", "toolu_e1"), text("Stopped."))
    assert (await prompt(agent, session_id, "edit")).stop_reason == "end_turn"
    assert client.writes == []
    result = sent(fake_api, 1)[-1]["content"][0]
    assert result["is_error"] and "read it again" in result["content"]


async def test_bad_input_gets_the_sdk_error_codes_naming_the_field(agents, fake_api, workspace):
    agent = await agents(RecordingClient())
    with pytest.raises(acp.RequestError) as unknown:
        await agent.conn.prompt(session_id="s-nope", prompt=[acp.text_block("hi")])
    assert unknown.value.code == -32602 and "sessionId" in str(unknown.value)
    session_id = await new_session(agent, workspace)
    with pytest.raises(acp.RequestError) as mode:
        await agent.conn.set_session_mode(session_id=session_id, mode_id="yolo")
    assert mode.value.code == -32602 and "modeId" in str(mode.value)
    with pytest.raises(acp.RequestError) as cwd:
        await agent.conn.new_session(cwd="relative/dir", mcp_servers=[])
    assert cwd.value.code == -32602 and "cwd" in str(cwd.value)
    with pytest.raises(acp.RequestError) as empty:
        await agent.conn.prompt(session_id=session_id, prompt=[acp.text_block("  ")])
    assert empty.value.code == -32602 and "prompt" in str(empty.value)

    fake_api.add(dict(text("Working on it"), hang=True))
    running = prompt(agent, session_id, "go")
    await until(lambda: "agent_message_chunk" in wire_shape(agent.client.wire))
    with pytest.raises(acp.RequestError) as busy:
        await agent.conn.prompt(session_id=session_id, prompt=[acp.text_block("again")])
    assert busy.value.code == -32602 and "sessionId" in str(busy.value) and "already running" in str(busy.value)
    await agent.conn.cancel(session_id=session_id)
    assert (await running).stop_reason == "cancelled"


# ---- cancellation: the whole sequence the client sees, in each state -------------------------------------

async def assert_nothing_after_the_answer(agent) -> None:
    count = len(agent.client.wire)
    await round_trip(agent)
    assert [m for m in agent.client.wire[count:] if m.get("method") == "session/update"] == []


async def test_cancel_while_streaming(agents, fake_api, workspace):
    agent = await agents(RecordingClient())
    session_id = await new_session(agent, workspace)
    fake_api.add(dict(text("Working on it"), hang=True))
    running = prompt(agent, session_id, "go")
    streamed = lambda: "".join(u.content.text for u in agent.client.updates  # noqa: E731
                               if isinstance(u, schema.AgentMessageChunk))
    await until(lambda: streamed() == "Working on it")  # the whole text (it comes in more than one delta), then hangs
    await agent.conn.cancel(session_id=session_id)
    assert (await running).stop_reason == "cancelled"
    assert wire_shape(agent.client.wire)[-1:] == ["answer:cancelled"]
    assert set(wire_shape(agent.client.wire)[:-1]) == {"agent_message_chunk"}
    await until(lambda: fake_api.disconnects == [1])  # the model stream was closed
    await assert_nothing_after_the_answer(agent)
    fake_api.add(text("Back again."))
    assert (await prompt(agent, session_id, "continue")).stop_reason == "end_turn"
    assert sent(fake_api, -1) == [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Working on it"}]},
        {"role": "user", "content": [{"type": "text", "text": "continue"}]},
    ]


async def test_cancel_while_awaiting_permission_and_a_late_allow_does_nothing(agents, fake_api, workspace):
    app = str(workspace / "app.py")
    client = RecordingClient({app: (workspace / "app.py").read_text()})
    agent = await agents(client)
    session_id = await new_session(agent, workspace)
    fake_api.add(edit("'hi '", "'hello '", "toolu_e1"))
    running = prompt(agent, session_id, "edit")
    await until(lambda: client.held)
    await agent.conn.cancel(session_id=session_id)
    assert (await running).stop_reason == "cancelled"
    client.held[0].set_result("allow_once")  # ACP asks for `cancelled`; a late allow must change nothing
    await assert_nothing_after_the_answer(agent)
    assert wire_shape(client.wire) == [
        "usage_update", "tool_call:pending", "fs/read_text_file", "tool_call_update:pending",
        "session/request_permission", "tool_call_update:failed", "answer:cancelled"]
    failed = [u for u in client.updates if isinstance(u, schema.ToolCallProgress)][-1]
    assert failed.content[0].content.text.startswith("Cancelled: ")
    assert client.writes == [] and len(fake_api.requests) == 1


async def test_a_permission_answered_cancelled_cancels_the_turn(agents, fake_api, workspace):
    app = str(workspace / "app.py")
    client = RecordingClient({app: (workspace / "app.py").read_text()})
    agent = await agents(client)
    session_id = await new_session(agent, workspace)
    fake_api.add(edit("'hi '", "'hello '", "toolu_e1"))
    running = prompt(agent, session_id, "edit")
    await until(lambda: client.held)
    client.held[0].set_result(None)
    assert (await running).stop_reason == "cancelled"
    assert wire_shape(client.wire)[-2:] == ["tool_call_update:failed", "answer:cancelled"]
    assert client.writes == []


async def test_cancel_while_a_command_runs_kills_it(agents, fake_api, workspace):
    agent = await agents(RecordingClient())
    session_id = await new_session(agent, workspace, "bypassPermissions")
    fake_api.add(tool_use("run_command", {"command": "echo $$ > pid; echo started; exec sleep 300"}, id="toolu_c"))
    running = prompt(agent, session_id, "run it")
    pid_file = workspace / "pid"
    await until(lambda: pid_file.exists() and pid_file.read_text().strip())
    pid = int(pid_file.read_text())
    await agent.conn.cancel(session_id=session_id)
    assert (await running).stop_reason == "cancelled"
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # killed, and reaped by the server
    shape = wire_shape(agent.client.wire)
    assert shape[0:3] == ["usage_update", "tool_call:pending", "tool_call_update:in_progress"]
    assert shape[-2:] == ["tool_call_update:failed", "answer:cancelled"]
    assert set(shape[3:-2]) <= {"tool_call_update:in_progress"}  # output previews, if any
    await assert_nothing_after_the_answer(agent)


async def test_commands_run_in_the_client_terminal_when_it_offers_one(agents, fake_api, workspace):
    client = RecordingClient()
    agent = await agents(client, terminal=True)
    session_id = await new_session(agent, workspace, "bypassPermissions")
    fake_api.add(tool_use("run_command", {"command": "echo from the terminal"}, id="toolu_c"), text("Ran."))
    assert (await prompt(agent, session_id, "run it")).stop_reason == "end_turn"
    assert wire_shape(client.wire) == [
        "usage_update", "tool_call:pending", "tool_call_update:in_progress", "terminal/create",
        "tool_call_update:in_progress", "terminal/wait_for_exit", "terminal/output", "terminal/release",
        "tool_call_update:completed", "agent_message_chunk", "usage_update", "answer:end_turn"]
    (terminal_id, terminal), = client.terminals.items()
    command = terminal["command"]
    assert command[0] == "/usr/bin/env" and command[-3:] == ["/bin/sh", "-c", "echo from the terminal"]
    assert "ANTHROPIC_API_KEY" in command[1:-3] and set(command[1:-3:2]) == {"-u"}  # held back as over LSP
    assert terminal["cwd"] == str(workspace)
    assert terminal["released"] and not terminal["killed"]
    shown = [u.content[0] for u in client.updates if isinstance(u, schema.ToolCallProgress) and u.content]
    assert [(c.type, c.terminal_id) for c in shown] == [("terminal", terminal_id)] * 2
    assert sent(fake_api, 1)[-1]["content"][0]["content"] == "Exit code 0\nfrom the terminal"


async def test_cancel_kills_the_command_in_the_client_terminal(agents, fake_api, workspace):
    client = RecordingClient()
    agent = await agents(client, terminal=True)
    session_id = await new_session(agent, workspace, "bypassPermissions")
    fake_api.add(tool_use("run_command", {"command": "exec sleep 300"}, id="toolu_c"))
    running = prompt(agent, session_id, "run it")
    await until(lambda: "terminal/wait_for_exit" in wire_shape(client.wire))
    await agent.conn.cancel(session_id=session_id)
    assert (await running).stop_reason == "cancelled"
    assert wire_shape(client.wire)[-5:] == [
        "terminal/wait_for_exit", "terminal/kill", "terminal/release", "tool_call_update:failed", "answer:cancelled"]
    (terminal,) = client.terminals.values()
    assert terminal["killed"] and terminal["released"] and terminal["process"].returncode is not None
    await assert_nothing_after_the_answer(agent)


async def test_a_client_that_disconnects_mid_prompt_leaves_a_valid_history(agents, fake_api, workspace):
    agent = await agents(RecordingClient())
    session_id = await new_session(agent, workspace)
    fake_api.add(dict(text("Working on it"), hang=True))
    prompt(agent, session_id, "go")
    await until(lambda: "".join(u.content.text for u in agent.client.updates
                                if isinstance(u, schema.AgentMessageChunk)) == "Working on it")  # all its deltas
    agent.process.stdin.close()
    assert await asyncio.wait_for(agent.process.wait(), 60) == 0

    again = await agents(RecordingClient())
    await again.conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
    fake_api.add(text("Back again."))
    assert (await prompt(again, session_id, "continue")).stop_reason == "end_turn"
    assert sent(fake_api, -1)[:2] == [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Working on it"}]},
    ]


# ---- one store for both front ends ---------------------------------------------------------------------

async def test_session_load_replays_a_session_created_over_lsp(lsp, agents, fake_api, workspace):
    client = await lsp.start(agent={"confirmTool": True})
    fake_api.add(tool_use("read_file", {"path": "app.py"}, id="toolu_r", say="Reading."), text("It greets."))
    result = await chat(client, "what is in app.py?")
    session_id = result["sessionId"]
    await lsp.stop()

    acp_client = RecordingClient()
    agent = await agents(acp_client)
    listed = await agent.conn.list_sessions()
    assert [(s.session_id, s.title) for s in listed.sessions] == [(session_id, "what is in app.py?")]
    loaded = await agent.conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
    assert loaded.modes.current_mode_id == "default"
    assert wire_shape(acp_client.wire) == [
        "user_message_chunk", "agent_message_chunk", "tool_call:completed", "agent_message_chunk"]
    user, reading, call, answer = [u for u in acp_client.updates if not isinstance(u, schema.AvailableCommandsUpdate)]
    assert (user.content.text, reading.content.text, answer.content.text) == (
        "what is in app.py?", "Reading.", "It greets.")
    assert (call.tool_call_id, call.kind, call.title) == ("toolu_r", "read", "Read app.py")
    fake_api.add(text("Still greets."))
    assert (await prompt(agent, session_id, "and now?")).stop_reason == "end_turn"
    assert [m["role"] for m in sent(fake_api, -1)] == ["user", "assistant", "user", "assistant", "user"]


# ---- a second implementation: the official TypeScript SDK validates every message we send ----------------

NODE_DIR = Path(__file__).parents[1] / "acp-node"


@pytest.fixture(scope="session")
def node_client() -> Path:
    """tests/acp-node with its pinned @agentclientprotocol/sdk installed (npm ci from the lockfile)."""
    import shutil
    import subprocess

    npm = shutil.which("npm")
    assert npm, "npm (Node 20+) is needed for the ACP TypeScript client test"
    if not (NODE_DIR / "node_modules" / "@agentclientprotocol" / "sdk").is_dir():
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR, check=True, capture_output=True)
    return NODE_DIR / "client.mjs"


async def test_the_typescript_sdk_client_accepts_everything_we_send(node_client, fake_api, workspace):
    import json
    import sys

    from tests.e2e.conftest import server_env

    app = str(workspace / "app.py")
    fake_api.add(
        {"content": [{"type": "thinking", "thinking": "The user wants hello."},
                     {"type": "text", "text": "Editing."},
                     {"type": "tool_use", "id": "toolu_e", "name": "edit_file",
                      "input": {"path": "app.py", "old_string": "'hi '", "new_string": "'hello '"}}]},
        tool_use("read_file", {"path": "app.py"}, id="toolu_r"),
        text("Done."),
        tool_use("run_command", {"command": "echo ran"}, id="toolu_c"),
        tool_use("todo_write", {"todos": [{"content": "Run it", "status": "completed"}]}, id="toolu_p"),
        tool_use("task", {"description": "Check", "prompt": "Read app.py"}, id="toolu_t"),
        tool_use("read_file", {"path": "app.py"}, id="toolu_sub"),  # the subagent's (one task: in order)
        text("It says hello."),
        text("It ran."),
    )
    process = await asyncio.create_subprocess_exec(
        "node", str(node_client), str(workspace), sys.executable, "-m", "agent_lsp", "--acp",
        "--data-dir", str(workspace.parent / "state"),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=server_env(fake_api.base_url))
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, err.decode()[-3000:]
    seen = json.loads(out)
    assert seen["answers"]["prompt1"] == {"stopReason": "end_turn"}
    assert seen["answers"]["prompt2"] == {"stopReason": "end_turn"}
    assert seen["writes"] == [[app, "def greet(name):\n    return 'hello ' + name\n"]]
    assert [r["method"] for r in seen["requests"]] == [
        "fs/read_text_file", "session/request_permission", "fs/read_text_file", "fs/read_text_file",
        "fs/write_text_file", "fs/read_text_file", "fs/read_text_file", "fs/read_text_file"]
    assert "available_commands_update" in [u["sessionUpdate"] for u in seen["updates"]]  # the SDK took it
    assert [u["entries"] for u in seen["updates"] if u["sessionUpdate"] == "plan"] == [  # live, then replayed
        [{"content": "Run it", "status": "completed", "priority": "medium"}]] * 2
    nested = [u for u in seen["updates"] if u.get("toolCallId") == "toolu_sub"]
    assert nested and all(u["_meta"] == {"parentToolCallId": "toolu_t"} for u in nested)
    kinds = [u["sessionUpdate"] for u in seen["updates"][:seen["replayFrom"]]
             if u["sessionUpdate"] != "available_commands_update"]
    assert kinds[0] == "agent_thought_chunk" and "tool_call" in kinds and "tool_call_update" in kinds
    diffs = [c for u in seen["updates"] if u["sessionUpdate"] == "tool_call_update" for c in u.get("content") or []
             if c["type"] == "diff"]
    assert [(d["path"], d["newText"]) for d in diffs] == [(app, "def greet(name):\n    return 'hello ' + name\n")]
    replayed = [u["sessionUpdate"] for u in seen["updates"][seen["replayFrom"]:]
                if u["sessionUpdate"] != "available_commands_update"]
    assert replayed[0] == "user_message_chunk" and replayed.count("user_message_chunk") == 2
    first = sent(fake_api, 0)[0]["content"]
    assert "[app.py](file://" in first[-1]["text"] and "greet is public API" in json.dumps(first)


async def test_tools_speak_the_words_of_acp_not_of_lsp(agents, fake_api, workspace):
    client = RecordingClient({str(workspace / "app.py"): "def broken(:\n"})
    agent = await agents(client)
    session_id = await new_session(agent, workspace)
    fake_api.add(tool_use("get_diagnostics", {"path": "app.py"}, id="toolu_d"), text("Broken."))
    assert (await prompt(agent, session_id, "check")).stop_reason == "end_turn"
    result = sent(fake_api, 1)[-1]["content"][0]["content"]
    assert "the Agent Client Protocol does not carry the editor's diagnostics" in result
    assert "experimental" not in result and "declare" not in result


async def test_tool_call_ids_are_unique_in_a_session_though_the_model_repeats_them(agents, fake_api, workspace):
    client = RecordingClient()
    agent = await agents(client)
    session_id = await new_session(agent, workspace)
    for words in ("first", "second"):
        fake_api.add(tool_use("list_files", {}, id="toolu_same"), text("Listed."))
        assert (await prompt(agent, session_id, words)).stop_reason == "end_turn"
    started = [u.tool_call_id for u in client.updates if isinstance(u, schema.ToolCallStart)]
    assert started == ["toolu_same", "toolu_same~2"]
    # the model reads its own ids back, each answered once
    assert [m["content"][0]["tool_use_id"] for m in sent(fake_api, 3) if m["role"] == "user"
            and isinstance(m["content"], list) and m["content"][0].get("type") == "tool_result"] == ["toolu_same"] * 2
    replay = RecordingClient()
    other = await agents(replay)
    await other.conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
    assert [u.tool_call_id for u in replay.updates if isinstance(u, schema.ToolCallStart)] == started


async def test_a_first_message_that_is_not_initialize_is_answered_by_the_sdk(workspace):
    """initialize is answered before the SDK loads only when it is well formed; anything else reaches the SDK."""
    import json
    import sys

    from tests.e2e.conftest import server_env

    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agent_lsp", "--acp", "--data-dir", str(workspace.parent / "state"),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env=server_env(None))
    bad = {"jsonrpc": "2.0", "id": 1, "method": "no/such/method", "params": {}}
    good = {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"protocolVersion": 1}}
    process.stdin.write((json.dumps(bad) + "\n" + json.dumps(good) + "\n").encode())
    await process.stdin.drain()
    first = json.loads(await asyncio.wait_for(process.stdout.readline(), 60))
    second = json.loads(await asyncio.wait_for(process.stdout.readline(), 60))
    process.stdin.close()
    stderr = (await asyncio.wait_for(process.communicate(), 60))[1].decode()
    assert (first["id"], first["error"]["code"]) == (1, -32601)
    assert second["id"] == 2 and second["result"]["agentInfo"]["name"] == "agent-lsp-server"
    assert "Traceback" not in stderr


async def test_the_model_is_a_session_config_option_and_choosing_one_moves_the_next_prompt(agents, fake_api, workspace):
    agent = await agents(RecordingClient())
    new = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    (option,) = new.config_options
    option = option.root if hasattr(option, "root") else option
    assert (option.id, option.category, option.current_value) == ("model", "model", "claude-sonnet-5-5")
    assert [o.value for o in option.options] == ["claude-sonnet-5-5", "claude-test", "claude-small-test"]
    answer = await agent.conn.set_config_option(config_id="model", session_id=new.session_id, value="claude-small-test")
    chosen = answer.config_options[0]
    assert (chosen.root if hasattr(chosen, "root") else chosen).current_value == "claude-small-test"
    fake_api.add(text("Small."))
    assert (await prompt(agent, new.session_id, "hi")).stop_reason == "end_turn"
    assert fake_api.requests[-1]["model"] == "claude-small-test"
    for config_id, value, field in (("model", "no-such-model", "value"), ("temperature", "1", "configId")):
        with pytest.raises(acp.RequestError) as refused:
            await agent.conn.set_config_option(config_id=config_id, session_id=new.session_id, value=value)
        assert refused.value.code == -32602 and field in str(refused.value)


async def test_session_list_pages_with_a_cursor(fake_api, workspace):
    client = RecordingClient()
    agent = await start_agent(fake_api.base_url, workspace.parent / "state", client, env={"AGENT_LSP_ACP_LIST_PAGE": "2"})
    try:
        made = [(await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id for _ in range(5)]
        seen, cursor, pages = [], None, 0
        while True:
            page = await agent.conn.list_sessions(cursor=cursor)
            seen += [s.session_id for s in page.sessions]
            pages += 1
            cursor = page.next_cursor
            if cursor is None:
                break
        assert pages == 3 and sorted(seen) == sorted(made) and len(seen) == 5
        with pytest.raises(acp.RequestError) as refused:
            await agent.conn.list_sessions(cursor="not-a-cursor")
        assert refused.value.code == -32602 and "cursor" in str(refused.value)
    finally:
        await agent.stop()


async def test_the_mcp_servers_of_session_new_are_started_and_their_tools_offered(agents, fake_api, workspace, tmp_path):
    import sys

    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "mcp"
    out.mkdir()
    client = RecordingClient()
    agent = await agents(client)
    servers = [schema.McpServerStdio(name="fake", command=sys.executable, args=["-m", "tests.fakes.mcp_server", str(out)],
                                     env=[schema.EnvVariable(name="PYTHONPATH", value=str(root))]),
               schema.SseMcpServer(type="sse", name="old", url="http://127.0.0.1:9/sse", headers=[])]
    session_id = (await agent.conn.new_session(cwd=str(workspace), mcp_servers=servers)).session_id
    fake_api.add(tool_use("mcp__fake__lookup", {"word": "cat"}, id="toolu_l"), text("Looked up."))
    assert (await prompt(agent, session_id, "look up cat")).stop_reason == "end_turn"
    assert "mcp__fake__lookup" in [t["name"] for t in fake_api.requests[0]["tools"]]
    assert sent(fake_api, 1)[-1]["content"][0]["content"] == "cat: a word"
    shown = "".join(u.content.text for u in client.updates if isinstance(u, schema.AgentMessageChunk))
    assert "MCP server `old`" in shown and "'sse'" in shown  # a kind agent-lsp does not connect to: said so


async def test_a_first_prompt_right_after_initialize_awaits_the_single_sdk_import(agents, fake_api, workspace):
    """The model SDK starts loading once `acp` has; a prompt sent at once awaits that import, never a second."""
    log = workspace.parent / "agent.log"
    client = RecordingClient({})
    agent = await agents(client, "--log-file", str(log), "--log-level", "INFO")
    new = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    fake_api.add(text("Cold."))
    answer = await prompt(agent, new.session_id, "hi")
    assert answer.stop_reason == "end_turn"

    def imports() -> list[str]:  # preload's one line per import run, written once the run has finished
        return [line.split(": ", 1)[1].split(" in ")[0] for line in log.read_text().splitlines()
                if "agent_lsp.models.preload" in line and ": imported " in line]

    await until(lambda: len(imports()) >= 2)
    assert imports() == ["imported acp, agent_lsp.acp.agent", "imported agent_lsp.models.anthropic, anthropic, httpx2"]


async def test_the_prompt_answer_carries_the_turns_usage_and_each_model_call_a_usage_update(agents, fake_api, workspace):
    client = RecordingClient()
    agent = await agents(client)
    session_id = await new_session(agent, workspace)
    fake_api.add(text("Hello.", usage={"input_tokens": 42, "output_tokens": 27}))
    answer = await prompt(agent, session_id, "hi")
    assert client.wire[-1]["result"] == {"stopReason": "end_turn", "usage": {
        "totalTokens": 69, "inputTokens": 42, "outputTokens": 27, "cachedReadTokens": 0, "cachedWriteTokens": 0}}
    assert (answer.usage.input_tokens, answer.usage.output_tokens, answer.usage.total_tokens) == (42, 27, 69)
    assert wire_shape(client.wire) == ["agent_message_chunk", "usage_update", "answer:end_turn"]
    (context,) = [u for u in client.updates if isinstance(u, schema.UsageUpdate)]
    assert (context.used, context.size) == (69, 200_000)

    # two model calls: the answer sums them (per turn, not per session); each call's update is its own context
    client.wire.clear()
    client.updates.clear()
    fake_api.add(dict(tool_use("list_files", {}, id="toolu_l"),
                      usage={"input_tokens": 100, "output_tokens": 20, "cache_read_input_tokens": 900}),
                 text("Done.", usage={"input_tokens": 30, "output_tokens": 7, "cache_read_input_tokens": 1000,
                                      "cache_creation_input_tokens": 5}))
    answer = await prompt(agent, session_id, "list")
    assert client.wire[-1]["result"]["usage"] == {"totalTokens": 2062, "inputTokens": 130, "outputTokens": 27,
                                                  "cachedReadTokens": 1900, "cachedWriteTokens": 5}
    assert wire_shape(client.wire) == ["usage_update", "tool_call:pending", "tool_call_update:in_progress",
                                       "tool_call_update:completed", "agent_message_chunk", "usage_update",
                                       "answer:end_turn"]
    assert [(u.used, u.size) for u in client.updates if isinstance(u, schema.UsageUpdate)] == [
        (1020, 200_000), (1042, 200_000)]
