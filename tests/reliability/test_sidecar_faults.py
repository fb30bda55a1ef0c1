"""Language servers of agent-lsp's own that misbehave (tests/fakes/lsp_raw.py, raw LSP framing), through the real
server and a plain LSP client: one that never answers a request, one that dies once mid-request, one that dies
again after its restart, one that answers garbage, one that writes junk to stdout, and an abort while a request
is pending; one slow to answer `initialize` (the chat does not wait for it beyond START_WAIT, made short here
through AGENT_LSP_LANGUAGE_START_WAIT; a later chat uses it once it has started), one that never does within its
`startTimeout` (withdrawn with one warning), and an abort while a chat waits for a start. Each chat answers, the
model reads a result (an error naming the server when it failed), nothing crashes, no process is left behind.
One that never answers `initialize` is also tried at the port."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from agent_lsp.config import clean
from agent_lsp.core.ports import LanguageFeatureError
from agent_lsp.sidecar import SidecarLanguageFeatures
from tests.e2e.conftest import text, tool_use
from tests.fakes.lsp_raw import garbage, junk
from tests.reliability.conftest import abort_latest, tally
from tests.reliability.test_mcp_faults import tool_results, warnings
from tests.waiting import holds_within

AREA = "language servers of its own"
ROOT = Path(__file__).resolve().parents[2]
LINES = "\n".join(f"word{n} = {n}" for n in range(40)) + "\n"
BYPASS = {"permissionMode": "bypassPermissions"}


def raw_server(mode: str, out: Path, extension: str, **fields) -> dict:
    return {"command": [sys.executable, "-m", "tests.fakes.lsp_raw", mode, str(out / extension.lstrip("."))],
            "languages": [extension], **fields}


def log_of(out: Path, extension: str) -> list[str]:
    try:
        return (out / extension.lstrip(".") / "log").read_text().splitlines()
    except OSError:
        return []


def processes_under(pid: int) -> list[tuple[int, str, str]]:
    """(pid, state, command line) of every descendant of `pid`, from /proc."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry.name)] = int(fields[1])
    found, frontier = [], {pid}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier}
        for p in frontier:
            try:
                state = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[0]
                cmdline = Path(f"/proc/{p}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            found.append((p, state, cmdline))
    return found


async def test_misbehaving_language_servers(start_server, fake_api, workspace, tmp_path, long_run):
    out = tmp_path / "ls"
    junks = junk()
    servers = {"ok": raw_server("ok", out, ".ok"), "hang": raw_server("hang", out, ".hang"),
               "once": raw_server("die-once", out, ".once"), "die": raw_server("die", out, ".die"),
               "garbage": raw_server("garbage", out, ".garbage"),
               **{f"junk{n}": raw_server("junk", out, f".junk{n}") for n in range(len(junks))}}
    for extension in (".ok", ".hang", ".once", ".die", ".garbage", *(f".junk{n}" for n in range(len(junks)))):
        (workspace / f"a{extension}").write_text(LINES)
    server = await start_server(init_options={"languageServers": servers, "languageTimeout": 1})
    problems: list[str] = []
    count = 0

    async def call(message: str, tool: str, extension: str, line: int = 1) -> dict:
        """One chat whose model calls `tool` on a<extension>; the result the model read."""
        nonlocal count
        count += 1
        fake_api.add(tool_use(tool, {"path": f"a{extension}", "line": line, "column": 1}), text("Done."))
        answer = await server.request("agent/chat", {"message": message, **BYPASS})
        result = answer.get("result") or {}
        found = tool_results(fake_api, message)
        if result.get("stopReason") != "end_turn" or len(found) != 1:
            problems.append(f"{message}: {answer}, results {found}")
            return {}
        return found[0]

    # a server that works: the baseline
    ok = await call("ok", "go_to_definition", ".ok")
    if ok.get("is_error") or not ok.get("content", "").startswith("a.ok:1:1"):
        problems.append(f"ok: {ok}")

    # (b) a request never answered: an error naming the server within languageTimeout, the chat goes on
    hung = await call("hang", "hover", ".hang")
    if not hung.get("is_error") or "`hang` did not answer textDocument/hover within 1 s" not in hung.get("content"):
        problems.append(f"hang: {hung}")
    if not await holds_within(lambda: any(line.startswith("cancel ") for line in log_of(out, ".hang"))):
        problems.append(f"hang: no $/cancelRequest: {log_of(out, '.hang')}")

    # (c) dies mid-request once: a clear error naming it (or the answer), then it is restarted and answers
    once = await call("once", "go_to_definition", ".once")
    if once.get("is_error") and "`once` stopped while answering textDocument/definition" not in once["content"]:
        problems.append(f"die-once: {once}")
    again = await call("once again", "go_to_definition", ".once")
    starts = [line for line in log_of(out, ".once") if line.startswith("start ")]
    if again.get("is_error") or not again.get("content", "").startswith("a.once:1:1") or len(starts) != 2:
        problems.append(f"die-once, after: {again}, {starts}")

    # (d) dies again after its restart: withdrawn with one warning, its tools say so, nothing left of it
    first = await call("die", "go_to_definition", ".die")
    if not await holds_within(lambda: len([x for x in log_of(out, ".die") if x.startswith("start ")]) == 2):
        problems.append(f"die: not started again after dying: {log_of(out, '.die')}")
    second = await call("die again", "go_to_definition", ".die")
    if not await holds_within(lambda: any("`die`" in w for w in warnings(server))):
        problems.append(f"die: no warning after dying twice: {warnings(server)}")
    third = await call("die thrice", "go_to_definition", ".die")
    for name, found in (("first", first), ("second", second)):
        if not found.get("is_error") or "`die` stopped while answering textDocument/definition (it said: dying " \
                                        "on purpose)" not in found["content"]:
            problems.append(f"die, {name}: {found}")
    if not third.get("is_error") or "No language server answers textDocument/definition for a.die" not in \
            third.get("content", ""):
        problems.append(f"die, third: {third}")
    said = [w for w in warnings(server) if "`die`" in w]
    if len(said) != 1 or "stopped again (exit code 3)" not in said[0] or "its tools are withdrawn" not in said[0]:
        problems.append(f"die: warnings {said}")
    left = [p for p in processes_under(server.proc.pid) if p[1] == "Z" or "lsp_raw die " in p[2]]
    if left:
        problems.append(f"die: left behind {left}")
    tally(AREA, cases=4)

    # (e) garbage answers: a result the model can read (an error or not), never a crash
    variants = garbage("file:///x")
    tools = ("go_to_definition", "hover", "find_references")
    for n in range(len(variants)):
        for tool in (tools if long_run else tools[n % 3:n % 3 + 1]):
            found = await call(f"garbage {n} {tool}", tool, ".garbage", line=n + 1)
            if not isinstance(found.get("content"), str) or len(found["content"]) > 200_000 or \
                    f"{tool} failed: " in found["content"] or "Traceback" in found["content"]:
                problems.append(f"garbage {n} {tool}: {str(found)[:300]}")
            tally(AREA, cases=1)

    # (f) junk on stdout: the call fails within languageTimeout (or is answered), the server goes on
    for n in range(len(junks)):
        found = await call(f"junk {n}", "hover", f".junk{n}", line=n + 1)
        if not found.get("is_error") or f"`junk{n}`" not in found.get("content", ""):
            problems.append(f"junk {n}: {found}")
        tally(AREA, cases=1)

    # (g) abort while a request is pending: answered at once, the request cancelled, the session goes on
    for n in range(5 if long_run else 1):
        fake_api.add(tool_use("hover", {"path": "a.hang", "line": 1, "column": 1}))
        asked = len([x for x in log_of(out, ".hang") if x.startswith("textDocument/hover")])
        sent = len(server.notifications)
        pending = server.request_future("agent/chat", {"message": f"abort {n}", **BYPASS})
        if not await holds_within(lambda: len([x for x in log_of(out, ".hang")
                                               if x.startswith("textDocument/hover")]) > asked):
            problems.append(f"abort {n}: the hover never reached the language server")
        _, aborted = await abort_latest(server, pending, AREA, "tool_call", since=sent)
        if aborted["stopReason"] != "aborted":
            problems.append(f"abort {n}: {aborted}")
        tally(AREA, cases=1)
    after = await call("after", "go_to_definition", ".ok")
    if after.get("is_error"):
        problems.append(f"after: {after}")

    if server.proc.returncode is not None:
        tally(AREA, crashes=1)
    tally(AREA, wrong=len(problems))
    assert server.proc.returncode is None
    assert not problems, "\n".join(problems)


async def test_a_server_that_never_answers_initialize_is_tried_twice_then_withdrawn(tmp_path):
    root = tmp_path.resolve()
    (root / "a.noinit").write_text(LINES)
    out = tmp_path / "ls"
    warned: list[str] = []
    mute = raw_server("no-init", out, ".noinit", startTimeout=1)
    servers = clean({"languageServers": {"mute": mute}}, "the test")[0]["language_servers"]
    port = SidecarLanguageFeatures(servers, [root], lambda: None, warned.append, 1.0, start_wait=600)
    params = {"textDocument": {"uri": (root / "a.noinit").as_uri()}, "position": {"line": 0, "character": 0}}
    problems = []
    try:
        try:
            await port.request("textDocument/hover", params, root / "a.noinit")
            problems.append("answered")
        except LanguageFeatureError as e:
            if str(e) != "language server `mute` did not answer initialize within 1 s (its `startTimeout`)":
                problems.append(f"first: {e}")
        if not await holds_within(lambda: warned):
            problems.append("withdrawn: no warning")
        said = (f"agent-lsp: language server `mute` ({' '.join(mute['command'])}) did not start again in {root}: did "
                "not answer initialize within 1 s (its `startTimeout`); its tools are withdrawn.")
        if warned != [said] or port.methods(root / "a.noinit") != {}:
            problems.append(f"withdrawn: {warned}, {port.methods(root / 'a.noinit')}")
        try:
            await port.request("textDocument/hover", params, root / "a.noinit")
            problems.append("answered after withdrawn")
        except LanguageFeatureError as e:
            if str(e) != "language server `mute` did not start and was withdrawn":
                problems.append(f"after withdrawn: {e}")
        starts = [line for line in log_of(out, ".noinit") if line.startswith("start ")]
        if len(starts) != 2 or port.running():
            problems.append(f"starts {starts}, running {port.running()}")
    finally:
        await port.close()
    tally(AREA, cases=1, wrong=len(problems))
    assert not problems, "\n".join(problems)


async def test_a_server_still_starting_does_not_hold_the_chat(start_server, fake_api, workspace, tmp_path):
    out = tmp_path / "ls"
    servers = {"late": raw_server("late-init", out, ".late"),
               "mute": raw_server("no-init", out, ".mute", startTimeout=1)}
    for extension in (".late", ".mute"):
        (workspace / f"a{extension}").write_text(LINES)
    # a start waited for 3 s: the late server outlasts it (it answers once told), the mute one fails before
    server = await start_server(init_options={"languageServers": servers},
                                AGENT_LSP_LANGUAGE_START_WAIT="3")
    problems: list[str] = []

    async def call(message: str, tool: str, extension: str) -> dict:
        fake_api.add(tool_use(tool, {"path": f"a{extension}", "line": 1, "column": 1}), text("Done."))
        answer = await server.request("agent/chat", {"message": message, **BYPASS})
        found = tool_results(fake_api, message)
        if (answer.get("result") or {}).get("stopReason") != "end_turn" or len(found) != 1:
            problems.append(f"{message}: {answer}, results {found}")
            return {}
        return found[0]

    # still starting: the chat goes on, the model reads that it is, and what to do meanwhile
    still = ("language server `late` is still starting (no answer to initialize after 3 s); use search and "
             "read_file meanwhile: its tools answer once it has started")
    for message, tool in (("late", "hover"), ("late again", "go_to_definition")):  # the second waits no more
        found = await call(message, tool, ".late")
        if not found.get("is_error") or found.get("content") != still:
            problems.append(f"{message}: {found}")
        tally(AREA, cases=1)

    # once it has answered `initialize`, a later chat gets its answers (from the same process: one start)
    pid = int(next(line for line in log_of(out, ".late") if line.startswith("start ")).split()[1])
    os.kill(pid, signal.SIGUSR1)
    if not await holds_within(lambda: "initialized" in log_of(out, ".late")):
        problems.append(f"late: never initialized: {log_of(out, '.late')}")
    ready = await call("late ready", "go_to_definition", ".late")
    starts = [line for line in log_of(out, ".late") if line.startswith("start ")]
    if ready.get("is_error") or not ready.get("content", "").startswith("a.late:1:1") or len(starts) != 1:
        problems.append(f"late ready: {ready}, {starts}")
    tally(AREA, cases=1)

    # no answer within its startTimeout: the waiting call says so; tried once more, then withdrawn with one
    # warning, and no call waits for it again
    failed = await call("mute", "hover", ".mute")
    if not failed.get("is_error") or failed.get("content") != \
            "language server `mute` did not answer initialize within 1 s (its `startTimeout`)":
        problems.append(f"mute: {failed}")
    if not await holds_within(lambda: any("`mute`" in w for w in warnings(server))):
        problems.append(f"mute: no warning: {warnings(server)}")
    gone = await call("mute again", "hover", ".mute")
    if not gone.get("is_error") or not gone.get("content", "").startswith(
            "No language server answers textDocument/hover for a.mute; use search"):
        problems.append(f"mute again: {gone}")
    said = [w for w in warnings(server) if "`mute`" in w]
    if len(said) != 1 or f"did not start again in {workspace}: did not answer initialize within 1 s" not in said[0]:
        problems.append(f"mute: warnings {said}")
    tally(AREA, cases=1)

    if server.proc.returncode is not None:
        tally(AREA, crashes=1)
    tally(AREA, wrong=len(problems))
    assert server.proc.returncode is None
    assert not problems, "\n".join(problems)


async def test_an_abort_while_a_chat_waits_for_a_start_answers_at_once(start_server, fake_api, workspace, tmp_path):
    out = tmp_path / "ls"
    (workspace / "a.mute").write_text(LINES)
    # the wait and the start far beyond the ceiling: only the abort can end this chat in time
    server = await start_server(init_options={"languageServers": {"mute": raw_server(
        "no-init", out, ".mute", startTimeout=600)}}, AGENT_LSP_LANGUAGE_START_WAIT="600")
    fake_api.add(tool_use("hover", {"path": "a.mute", "line": 1, "column": 1}))
    sent = len(server.notifications)
    pending = server.request_future("agent/chat", {"message": "abort the wait", **BYPASS})
    asked = await holds_within(lambda: any(line.startswith("initialize ") for line in log_of(out, ".mute")))
    _, aborted = await abort_latest(server, pending, AREA, "tool_call", since=sent)
    problems = [] if asked and aborted["stopReason"] == "aborted" else [f"abort: {aborted}, started: {asked}"]
    # the start goes on for the next chat: the same process, not asked to stop
    starts = [line for line in log_of(out, ".mute") if line.startswith("start ")]
    running = [p for p in processes_under(server.proc.pid) if "lsp_raw no-init" in p[2] and p[1] != "Z"]
    if len(starts) != 1 or len(running) != 1:
        problems.append(f"abort: starts {starts}, running {running}")
    tally(AREA, cases=1, wrong=len(problems))
    assert not problems, "\n".join(problems)
