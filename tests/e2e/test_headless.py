"""`agent-lsp run`, the real command as a subprocess against the fake Messages API (or the demo model): the three
output formats as whole sequences, exit statuses, SIGINT / SIGTERM mid-chat, sessions shared with editors,
permissions without anyone to ask, and bad input (PROTOCOL §10 "Headless runs")."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Optional

import pytest

from tests.e2e.conftest import CEILING, sent, server_env, text, tool_use
from tests.waiting import until

RUN = [sys.executable, "-m", "agent_lsp", "run"]
TOOLS = ["list_open_buffers", "read_file", "list_files", "search", "get_diagnostics", "edit_file", "write_file",
         "run_command", "todo_write", "task", "web_fetch", "remember", "forget"]
EDIT = tool_use("edit_file", {"path": "app.py", "old_string": "'hi '", "new_string": "'hello '"}, id="toolu_e1")
ORIGINAL = "def greet(name):\n    return 'hi ' + name\n"
USAGE = {"inputTokens": 10, "outputTokens": 5, "cacheReadInputTokens": 0, "cacheCreationInputTokens": 0}
TWICE = {k: 2 * v for k, v in USAGE.items()}


def headless(fake_api, workspace: Path, *args: str, stdin: Optional[bytes] = None, env: Optional[dict] = None,
             state: Optional[Path] = None) -> subprocess.CompletedProcess:
    """Run `agent-lsp run` in `workspace` to its end (stdin: empty unless given)."""
    command = [*RUN, "--cwd", str(workspace), "--data-dir", str(state or workspace.parent / "state"), *args]
    done = subprocess.run(command, input=stdin if stdin is not None else b"", capture_output=True, timeout=CEILING,
                          env=env or server_env(fake_api.base_url))
    assert b"Traceback" not in done.stderr, done.stderr.decode()
    return done


def lines(stdout: bytes) -> list[dict[str, Any]]:
    """stream-json's objects, each line one (durationMs, which no test can know, checked and left out)."""
    found = [json.loads(line) for line in stdout.decode().splitlines()]
    for entry in found:
        if "durationMs" in entry:
            assert entry.pop("durationMs") >= 0
    return found


def result(session_id: str, answer: str, stop: str = "end_turn", turns: int = 1, calls: int = 0,
           usage: Optional[dict] = None, is_error: bool = False, **extra: Any) -> dict[str, Any]:
    return {"sessionId": session_id, "stopReason": stop, "result": answer, "usage": usage or USAGE, "turns": turns,
            "toolCalls": calls, "isError": is_error, **extra}


def stderr_lines(done: subprocess.CompletedProcess) -> list[str]:
    return done.stderr.decode().strip().splitlines()


# ---- the three output formats --------------------------------------------------------------------------------


def test_text_prints_the_final_answer_and_exits_0(fake_api, workspace):
    fake_api.add(text("The answer."))
    done = headless(fake_api, workspace, "what is app.py?")
    assert (done.returncode, done.stdout, done.stderr) == (0, b"The answer.\n", b"")
    assert sent(fake_api, 0) == [{"role": "user", "content": [{"type": "text", "text": "what is app.py?"}]}]


def test_json_is_one_result_object(fake_api, workspace):
    fake_api.add(text("The answer."))
    done = headless(fake_api, workspace, "--output-format", "json", "hi")
    (found,) = lines(done.stdout)
    assert done.returncode == 0 and found == result(found["sessionId"], "The answer.")
    assert found["sessionId"].startswith("s-")


def test_stream_json_is_init_each_update_and_the_result_and_an_edit_nobody_allowed_is_refused(fake_api, workspace):
    fake_api.add(EDIT, text("Left as it was."))
    done = headless(fake_api, workspace, "--output-format", "stream-json", "greet with hello")
    found = lines(done.stdout)
    session_id = found[0]["sessionId"]
    refused = ("edit_file needs the user's approval, and nobody can be asked in this headless run (agent-lsp run): it "
               "was refused. Go on without it; the user can allow it with `--allowed-tools edit_file` or "
               "`--permission-mode`.")
    assert found == [
        {"type": "init", "sessionId": session_id, "model": "claude-sonnet-5-5", "tools": TOOLS},
        *({"type": "update", "update": u} for u in [
            {"kind": "turn_start", "turn": 1, "maxTurns": 25},
            {"kind": "usage", **USAGE},
            {"kind": "tool_call", "toolCallId": "toolu_e1", "name": "edit_file", "title": "Edit app.py",
             "toolKind": "edit", "input": EDIT["content"][0]["input"],
             "locations": [{"uri": (workspace / "app.py").as_uri()}]},
            {"kind": "tool_call_update", "toolCallId": "toolu_e1", "status": "awaiting_confirmation"},
            {"kind": "tool_call_update", "toolCallId": "toolu_e1", "status": "rejected", "error": refused},
            {"kind": "turn_start", "turn": 2, "maxTurns": 25},
            {"kind": "text_delta", "text": "Left "},
            {"kind": "text_delta", "text": "as "},
            {"kind": "text_delta", "text": "it "},
            {"kind": "text_delta", "text": "was."},
            {"kind": "usage", **TWICE},
        ]),
        {"type": "result", **result(session_id, "Left as it was.", turns=2, calls=1, usage=TWICE)},
    ]
    assert done.returncode == 0 and (workspace / "app.py").read_text() == ORIGINAL
    assert sent(fake_api, 1)[-1]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_e1", "content": refused, "is_error": True}]
    assert stderr_lines(done) == [
        "agent-lsp run: edit_file refused: nobody can be asked; allow it with --allowed-tools edit_file"]


# ---- permissions without anyone to ask ----------------------------------------------------------------------


def statuses(found: list[dict]) -> list[str]:
    return [e["update"]["status"] for e in found if e["type"] == "update" and e["update"]["kind"] == "tool_call_update"]


def test_allowed_tools_run_unasked_and_their_edits_are_written_to_disk(fake_api, workspace):
    fake_api.add(EDIT, text("Edited."))
    done = headless(fake_api, workspace, "--output-format", "stream-json", "--allowed-tools", "run_command, edit_file",
                    "greet with hello")
    found = lines(done.stdout)
    assert statuses(found) == ["awaiting_confirmation", "running", "completed"]
    assert (done.returncode, done.stderr) == (0, b"")
    assert (workspace / "app.py").read_text() == ORIGINAL.replace("'hi '", "'hello '")
    assert found[-1]["result"] == "Edited."


@pytest.mark.parametrize("mode, offered, went", [
    ("acceptEdits", TOOLS, ["running", "completed"]),
    ("bypassPermissions", TOOLS, ["running", "completed"]),
    ("plan", [t for t in TOOLS if t not in ("edit_file", "write_file", "run_command", "web_fetch", "remember",
                                            "forget")], ["failed"]),  # not offered: the call fails
])
def test_a_permission_mode_decides_without_asking(fake_api, workspace, mode, offered, went):
    fake_api.add(EDIT, text("Done."))
    done = headless(fake_api, workspace, "--output-format", "stream-json", "--permission-mode", mode, "greet")
    found = lines(done.stdout)
    assert found[0]["tools"] == offered and done.returncode == 0 and done.stderr == b""
    assert statuses(found) == went
    assert ((workspace / "app.py").read_text() != ORIGINAL) is (went[-1] == "completed")


def test_commands_are_refused_in_accept_edits_mode_unless_allowed(fake_api, workspace):
    make = tool_use("run_command", {"command": "touch made.txt"}, id="toolu_c1")
    fake_api.add(make, text("Could not."), make, text("Made."))
    refused = headless(fake_api, workspace, "--permission-mode", "acceptEdits", "make a file")
    assert (refused.returncode, refused.stdout) == (0, b"Could not.\n") and not (workspace / "made.txt").exists()
    assert stderr_lines(refused) == ["agent-lsp run: run_command (`touch made.txt`) refused: nobody can be asked; "
                                     "allow it with --allowed-tools run_command"]
    allowed = headless(fake_api, workspace, "--permission-mode", "acceptEdits", "--allowed-tools", "run_command",
                       "make a file")
    assert (allowed.returncode, allowed.stdout) == (0, b"Made.\n") and (workspace / "made.txt").exists()


# ---- exit statuses --------------------------------------------------------------------------------------------


def test_a_chat_that_ends_in_an_error_exits_1_with_is_error(fake_api, workspace):
    fake_api.add({"status": 400, "error": {"type": "invalid_request_error", "message": "prompt is too odd"}})
    done = headless(fake_api, workspace, "--output-format", "json", "hi")
    (found,) = lines(done.stdout)
    assert done.returncode == 1 and found.pop("error")["type"] == "llm_error"
    assert found == result(found["sessionId"], "", stop="error", usage=dict.fromkeys(USAGE, 0), is_error=True)
    (line,) = stderr_lines(done)
    assert line.startswith("agent-lsp run: the chat ended in an error (llm_error): ") and "prompt is too odd" in line


def test_no_model_configured_exits_1_naming_the_key(fake_api, workspace):
    done = headless(fake_api, workspace, "--output-format", "stream-json", "hi", env=server_env(None, key=False))
    init, last = lines(done.stdout)
    assert done.returncode == 1 and init["type"] == "init" and init["model"] == ""
    assert last["stopReason"] == "error" and last["isError"] is True
    assert last["error"]["type"] == "initialization_failed" and "ANTHROPIC_API_KEY" in last["error"]["message"]


def test_max_turns_ends_the_chat_with_exit_0(fake_api, workspace):
    fake_api.add(tool_use("read_file", {"path": "app.py"}, say="Reading."), text("It greets."))  # then a summary
    done = headless(fake_api, workspace, "--output-format", "json", "--max-turns", "1", "read it")
    (found,) = lines(done.stdout)
    assert done.returncode == 0
    assert found == result(found["sessionId"], "It greets.", stop="max_turns", calls=1, usage=TWICE)


# ---- SIGINT and SIGTERM -------------------------------------------------------------------------------------


class Running:
    """An `agent-lsp run --output-format stream-json` still running: its lines read as they come."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.lines: list[dict[str, Any]] = []

    @classmethod
    async def start(cls, fake_api, workspace: Path, *args: str) -> "Running":
        process = await asyncio.create_subprocess_exec(
            *RUN, "--cwd", str(workspace), "--data-dir", str(workspace.parent / "state"), "--output-format",
            "stream-json", *args, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=server_env(fake_api.base_url))
        return cls(process)

    async def until_line(self, wanted) -> dict[str, Any]:
        """Read lines until one satisfies `wanted`; that line."""
        while True:
            line = await asyncio.wait_for(self.process.stdout.readline(), CEILING)
            assert line, "the run ended first"
            self.lines.append(json.loads(line))
            if wanted(self.lines[-1]):
                return self.lines[-1]

    async def end(self) -> tuple[int, str]:
        """The exit status and stderr once it ended (the lines read to the end)."""
        rest, stderr = await asyncio.wait_for(self.process.communicate(), CEILING)
        self.lines += [json.loads(line) for line in rest.decode().splitlines()]
        return self.process.returncode, stderr.decode()


def update(kind: str, **members: Any):
    return lambda line: line["type"] == "update" and line["update"]["kind"] == kind and all(
        line["update"].get(k) == v for k, v in members.items())


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
async def test_a_signal_mid_chat_aborts_it_saves_the_session_and_exits_130(fake_api, workspace, signum):
    fake_api.add(dict(text("Working on it"), hang=True), text("Back again."))
    running = await Running.start(fake_api, workspace, "go")
    await running.until_line(update("text_delta", text="it"))  # the model is streaming: the chat runs
    running.process.send_signal(signum)
    status, stderr = await running.end()
    last = running.lines[-1]
    session_id = last["sessionId"]
    usage = last["usage"]  # the stream's usage so far: its last count may or may not have come before the signal
    assert usage["inputTokens"] == 10 and usage["outputTokens"] in (1, 5)
    assert status == 130 and last == {"type": "result", "durationMs": last["durationMs"], **result(
        session_id, "Working on it", stop="aborted", is_error=True)} | {"usage": usage}
    assert [line["type"] for line in running.lines] == ["init", "update", "update", "update", "update", "result"]
    assert stderr.strip().splitlines()[-1] == (f"agent-lsp run: stopped by {signum.name}; session {session_id} is "
                                               f"saved (continue it with --session {session_id})")
    await until(lambda: fake_api.disconnects == [1])  # the model's stream was closed
    again = headless(fake_api, workspace, "--session", session_id, "continue")
    assert (again.returncode, again.stdout) == (0, b"Back again.\n")
    assert sent(fake_api, -1) == [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Working on it"}]},
        {"role": "user", "content": [{"type": "text", "text": "continue"}]},
    ]


async def test_sigterm_during_a_command_kills_it(fake_api, workspace):
    fake_api.add(tool_use("run_command", {"command": "echo $$; exec sleep 300"}, id="toolu_s1"))
    running = await Running.start(fake_api, workspace, "--allowed-tools", "run_command", "wait")
    started = await running.until_line(lambda line: update("tool_call_update", status="running")(line)
                                       and "output" in line["update"])  # the command printed its pid
    pid = int(started["update"]["output"].strip())
    running.process.send_signal(signal.SIGTERM)
    status, _ = await running.end()
    assert status == 130 and running.lines[-1]["stopReason"] == "aborted"
    assert statuses(running.lines) == ["awaiting_confirmation", "running", "running", "cancelled"]
    with pytest.raises(ProcessLookupError):  # the command went with the chat
        os.kill(pid, 0)
    fake_api.add(text("Stopped, then."))
    again = headless(fake_api, workspace, "--session", running.lines[-1]["sessionId"], "what happened?")
    assert (again.returncode, again.stdout) == (0, b"Stopped, then.\n")
    call, answer = sent(fake_api, -1)[1:3]  # the call, and a result for it: a history the model accepts
    assert [b["type"] for b in call["content"]] == ["tool_use"] and answer["content"][0] == {
        "type": "tool_result", "tool_use_id": "toolu_s1", "is_error": True, "content": "Cancelled by the user before this tool call finished."}


# ---- sessions shared with editors -----------------------------------------------------------------------------


def test_session_continues_an_earlier_run(fake_api, workspace):
    fake_api.add(text("Seven."), text("It was seven."))
    first = lines(headless(fake_api, workspace, "--output-format", "json", "remember 7").stdout)[0]
    second = lines(headless(fake_api, workspace, "--output-format", "json", "--session", first["sessionId"],
                            "which number?").stdout)[0]
    assert second == result(first["sessionId"], "It was seven.")
    assert sent(fake_api, 1) == [
        {"role": "user", "content": [{"type": "text", "text": "remember 7"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Seven."}]},
        {"role": "user", "content": [{"type": "text", "text": "which number?"}]},
    ]


async def test_a_headless_session_is_listed_and_loaded_by_an_editor(lsp):
    lsp.fake_api.add(tool_use("read_file", {"path": "app.py"}, id="toolu_r1", say="Reading."), text("It greets."),
                     text("Still greets."))
    done = headless(lsp.fake_api, lsp.workspace, "--output-format", "json", "what does app.py do?",
                    state=lsp.data_dir)
    session_id = lines(done.stdout)[0]["sessionId"]
    client = await lsp.start()
    listed = (await client.protocol.send_request_async("agent/sessions", {"workspace": lsp.workspace.as_uri()}))
    assert [(s["sessionId"], s["title"], s["turnsCount"], s["workspace"]) for s in listed["sessions"]] == [
        (session_id, "what does app.py do?", 2, lsp.workspace.as_uri())]
    history = await client.protocol.send_request_async("agent/history", {"sessionId": session_id})
    assert [(m["role"], m["content"], [c["status"] for c in m.get("toolCalls", [])]) for m in history["messages"]] == [
        ("user", "what does app.py do?", []), ("assistant", "Reading.", ["completed"]),
        ("assistant", "It greets.", [])]
    answer = await client.protocol.send_request_async("agent/chat", {"message": "and now?", "sessionId": session_id})
    assert answer["finalMessage"] == "Still greets." and len(sent(lsp.fake_api, 2)) == 5


async def test_workspace_settings_apply_only_once_trusted_in_an_editor(lsp):
    settings = lsp.workspace / ".agent-lsp" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "run_command",
                                                             "hooks": [{"type": "command", "command": "exit 2"}]}]}}))
    make = tool_use("run_command", {"command": "touch ran.txt"})
    lsp.fake_api.add(make, text("Ran."))
    untrusted = headless(lsp.fake_api, lsp.workspace, "--permission-mode", "bypassPermissions", "make a file",
                         state=lsp.data_dir)
    assert untrusted.returncode == 0 and (lsp.workspace / "ran.txt").exists()  # the hook did not run
    assert stderr_lines(untrusted) == [
        "agent-lsp run: not trusted, so ignored (nobody can be asked here; trust the workspace once in an editor): "
        f"agent-lsp: {settings} asks to run hooks: `exit 2`. Trust this workspace's settings? Until you do, they are "
        "ignored."]
    (lsp.workspace / "ran.txt").unlink()
    lsp.fake_api.add(text("Trusted."))
    client = await lsp.start()
    client.message_answer = "Trust"
    await client.protocol.send_request_async("agent/chat", {"message": "hi"})
    await lsp.stop_client(client)
    lsp.fake_api.add(make, text("Blocked."))
    trusted = headless(lsp.fake_api, lsp.workspace, "--permission-mode", "bypassPermissions", "make a file",
                       state=lsp.data_dir)
    assert (trusted.returncode, trusted.stderr) == (0, b"") and not (lsp.workspace / "ran.txt").exists()


# ---- bad input ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("args, stdin, named", [
    (["--frobnicate", "hi"], None, "unrecognized arguments: --frobnicate"),
    (["--output-format", "xml", "hi"], None, "argument --output-format: invalid choice: 'xml'"),
    (["--permission-mode", "yolo", "hi"], None, "argument --permission-mode: invalid choice: 'yolo'"),
    (["--max-turns", "many", "hi"], None, "argument --max-turns: invalid int value: 'many'"),
    (["--max-turns", "-2", "hi"], None, "--max-turns -2: must be -1"),
    (["--allowed-tools", "Bash,read_file", "hi"], None, "--allowed-tools: no tool is named Bash (tools: "),
    (["--cwd", "{ws}/app.py", "hi"], None, "--cwd {ws}/app.py: not a folder"),
    (["--cwd", "{ws}/nowhere", "hi"], None, "--cwd {ws}/nowhere: no such folder"),
    (["--session", "s-nope", "hi"], None, "--session s-nope: no session has this id in "),
    (["two", "words"], None, "PROMPT is one argument: quote it"),
    (["  \n "], None, "PROMPT is empty"),
    ([], b" \n", "the prompt read from standard input is empty"),
    ([], "closed", "no prompt: give PROMPT, or pipe it on standard input (standard input is closed)"),
])
def test_bad_input_exits_2_naming_what_and_writes_nothing(fake_api, workspace, args, stdin, named):
    args = [a.replace("{ws}", str(workspace)) for a in args]
    state = workspace.parent / "state"
    command = [*RUN, "--cwd", str(workspace), "--data-dir", str(state), *args]
    if stdin == "closed":
        command, stdin = ["sh", "-c", 'exec "$@" <&-', "sh", *command], None
    done = subprocess.run(command, input=stdin, capture_output=True, timeout=CEILING, env=server_env(fake_api.base_url),
                          stdin=None if stdin is not None else subprocess.DEVNULL)
    assert (done.returncode, done.stdout) == (2, b"")
    assert named.replace("{ws}", str(workspace)) in stderr_lines(done)[-1]
    assert not state.exists() and fake_api.requests == []


def test_run_comes_first_and_the_help_says_so():
    misplaced = subprocess.run([sys.executable, "-m", "agent_lsp", "--model", "demo", "run", "hi"], capture_output=True,
                               text=True, timeout=CEILING, stdin=subprocess.DEVNULL)
    assert (misplaced.returncode, misplaced.stdout) == (2, "")
    assert misplaced.stderr.splitlines()[-1] == ("agent-lsp: error: `run` comes first, with its own options: "
                                                 "agent-lsp run [OPTIONS] [PROMPT]")
    usage = subprocess.run([*RUN, "--help"], capture_output=True, text=True, timeout=CEILING)
    assert usage.returncode == 0 and usage.stdout.startswith("usage: agent-lsp run ")
    for option in ("--output-format", "--permission-mode", "--allowed-tools", "--session", "--max-turns", "--model",
                   "--data-dir", "--cwd", "PROMPT"):
        assert option in usage.stdout


def test_an_unknown_command_writes_nothing(fake_api, workspace):
    fake_api.add(text("First."))
    first = lines(headless(fake_api, workspace, "--output-format", "json", "hi").stdout)[0]
    unknown = headless(fake_api, workspace, "--session", first["sessionId"], "/nosuch thing")
    assert (unknown.returncode, unknown.stdout) == (2, b"")
    assert stderr_lines(unknown)[-1].startswith("agent-lsp run: PROMPT: unknown command /nosuch (known: /compact")
    fake_api.add(text("Again."))
    again = lines(headless(fake_api, workspace, "--output-format", "json", "--session", first["sessionId"],
                           "hi again").stdout)[0]
    assert again["result"] == "Again." and len(sent(fake_api, 1)) == 3  # nothing of the refused run was kept


async def test_a_session_busy_in_another_run_exits_1(fake_api, workspace):
    fake_api.add(text("First."), dict(text("Working on it"), hang=True))
    session_id = lines(headless(fake_api, workspace, "--output-format", "json", "hi").stdout)[0]["sessionId"]
    running = await Running.start(fake_api, workspace, "--session", session_id, "go")
    await running.until_line(update("text_delta"))
    busy = headless(fake_api, workspace, "--session", session_id, "me too")
    assert (busy.returncode, busy.stdout) == (1, b"")
    assert stderr_lines(busy) == [f"agent-lsp run: Session {session_id} is busy: agent-lsp process "
                                  f"{running.process.pid} (another window) is running a chat in it."]
    running.process.send_signal(signal.SIGINT)
    assert (await running.end())[0] == 130


# ---- the offline demo model, as CI runs it ----------------------------------------------------------------------


def test_a_ci_style_stream_json_run_of_the_demo_model(fake_api, workspace):
    diff = b"Review this diff:\n--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n-    return 'hi ' + name\n+    return 'hello ' + name\n"
    done = headless(fake_api, workspace, "--output-format", "stream-json", "--model", "demo", stdin=diff,
                    env=server_env(None, key=False))
    found = lines(done.stdout)
    assert done.returncode == 0 and done.stderr == b""
    assert found[0] == {"type": "init", "sessionId": found[0]["sessionId"], "model": "demo", "tools": TOOLS}
    kinds = [e["update"]["kind"] for e in found[1:-1]]
    text_runs = [k for i, k in enumerate(kinds) if not (k == "text_delta" and kinds[i - 1] == k)]
    assert text_runs == ["turn_start", "thinking_delta", "text_delta", "usage", "tool_call", "tool_call",
                         "tool_call_update", "tool_call_update", "tool_call_update", "tool_call_update",
                         "turn_start", "thinking_delta", "text_delta", "usage"]
    last = found[-1]
    assert last["type"] == "result" and last["isError"] is False and last["stopReason"] == "end_turn"
    assert last["result"].startswith("You asked: “Review this diff:") and last["toolCalls"] == 2
