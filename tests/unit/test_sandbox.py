"""The sandbox of commands: bubblewrap's command line, real runs under bubblewrap (writes confined to the workspace
and a private /tmp, no network), the fallback when bwrap cannot start, hooks inside it, the permission it gives."""

from __future__ import annotations

import shutil
import socket
import sys
import tempfile
from pathlib import Path

import pytest

from agent_lsp.config.hooks import HookCommand
from agent_lsp.core.hooks import HookEvent
from agent_lsp.core.ports import Allow, Deny, PermissionRequest
from agent_lsp.core.tool import ToolContext, ToolError
from agent_lsp.processes import Sandbox, bwrap_args, open_sandbox
from agent_lsp.sessions.permissions import Grants, make_permit
from agent_lsp.sessions.shell_hooks import ShellHooks
from agent_lsp.tools.run_command import RunCommand, RunCommandInput
from tests.fakes.editor import FakeEditor

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap runs on Linux")
SANDBOXED = "sandboxed: only the workspace, a private /tmp and the `writable` paths are writable; no network"


def test_bubblewrap_command_line():
    ws, extra = Path("/tmp/p/ws"), Path("/home/u/.cache")
    assert bwrap_args((ws, extra, ws), network=False, cwd=ws) == [
        "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
        "--unshare-net", "--tmpfs", "/run",
        "--bind-try", "/tmp/p/ws", "/tmp/p/ws", "--bind-try", "/home/u/.cache", "/home/u/.cache",
        "--unshare-pid", "--unshare-ipc", "--die-with-parent", "--setenv", "TMPDIR", "/tmp", "--chdir", "/tmp/p/ws"]
    assert bwrap_args((ws,), network=True, cwd=None) == [
        "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
        "--bind-try", "/tmp/p/ws", "/tmp/p/ws",
        "--unshare-pid", "--unshare-ipc", "--die-with-parent", "--setenv", "TMPDIR", "/tmp"]


def test_a_command_line_wrapped_only_when_the_sandbox_can_start():
    ready = Sandbox((Path("/w"),), bwrap="/usr/bin/bwrap")
    assert ready.wrap(["/bin/sh", "-c", "make"], Path("/w")) == [
        "/usr/bin/bwrap", *bwrap_args((Path("/w"),), False, Path("/w")), "--", "/bin/sh", "-c", "make"]
    broken = Sandbox((Path("/w"),), problem="bwrap: not found on PATH")
    assert not broken.ready and broken.wrap(["/bin/sh", "-c", "make"], Path("/w")) == ["/bin/sh", "-c", "make"]
    assert broken.note() == "not sandboxed: bwrap: not found on PATH"


@pytest.fixture
def outside_tmp():
    """A folder that is not under /tmp (where the private /tmp would hide it), removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix="agent-lsp-sandbox-", dir="/var/tmp")).resolve()
    yield path
    shutil.rmtree(path, ignore_errors=True)


async def run(sandbox: Sandbox, root: Path, command: str, **ctx) -> str:
    return (await RunCommand(sandbox).run(ToolContext(editor=FakeEditor(root=root), **ctx),
                                          RunCommandInput(command=command))).text


async def test_a_sandboxed_command_writes_in_the_workspace_and_nowhere_else(outside_tmp):
    ws = outside_tmp / "ws"
    ws.mkdir()
    sandbox = await open_sandbox([ws])
    assert sandbox.ready, sandbox.problem
    out = await run(sandbox, ws, "echo made > made.txt && cat made.txt; echo x > ../outside.txt; "
                                 "touch /etc/agent-lsp-sandbox-probe")
    assert out.splitlines() == [f"Exit code 1 ({SANDBOXED})", "made",
                                "/bin/sh: 1: cannot create ../outside.txt: Read-only file system",
                                "touch: cannot touch '/etc/agent-lsp-sandbox-probe': Read-only file system"]
    assert (ws / "made.txt").read_text() == "made\n"
    assert not (outside_tmp / "outside.txt").exists() and not Path("/etc/agent-lsp-sandbox-probe").exists()


async def test_a_workspace_under_tmp_stays_writable_and_the_rest_of_tmp_is_private(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "host-secret").write_text("not for the sandbox")
    sandbox = await open_sandbox([ws])
    out = await run(sandbox, ws, "echo in > in.txt; echo up > ../up.txt; cat ../host-secret; "
                                 "echo t > /tmp/agent-lsp-private-probe && echo $TMPDIR")
    lines = out.splitlines()
    assert lines[0] == f"Exit code 0 ({SANDBOXED})"
    assert lines[1].endswith("host-secret: No such file or directory") and lines[2:] == ["/tmp"]
    assert (ws / "in.txt").read_text() == "in\n"
    # the folders around the workspace are the private /tmp's: what is written there goes with it
    assert not (tmp_path / "up.txt").exists() and not Path("/tmp/agent-lsp-private-probe").exists()


async def test_writable_paths_are_added(tmp_path, outside_tmp):
    ws = tmp_path / "ws"
    ws.mkdir()
    sandbox = await open_sandbox([ws, outside_tmp])
    out = await run(sandbox, ws, f"echo cached > {outside_tmp}/cache.txt")
    assert out == f"Exit code 0 ({SANDBOXED})"
    assert (outside_tmp / "cache.txt").read_text() == "cached\n"


async def test_no_network_unless_the_setting_allows_it(tmp_path):
    connect = (f"{sys.executable} -c \"import socket,sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), "
               "timeout=30); print('connected')\"")
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        closed = await run(await open_sandbox([tmp_path]), tmp_path, f"{connect} {port}")
        assert closed.splitlines()[0] == f"Exit code 1 ({SANDBOXED})"
        assert closed.splitlines()[-1] == "ConnectionRefusedError: [Errno 111] Connection refused"
        listener.settimeout(0)
        with pytest.raises(BlockingIOError):  # nothing reached the listener
            listener.accept()
        opened = await run(await open_sandbox([tmp_path], network=True), tmp_path, f"{connect} {port}")
        assert opened == ("Exit code 0 (sandboxed: only the workspace, a private /tmp and the `writable` paths are "
                          "writable; network allowed)\nconnected")


async def test_the_environment_rules_hold_inside(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-held-back")
    monkeypatch.setenv("CORP_VAULT", "held back by secretEnv")
    monkeypatch.setenv("AGENT_LSP_SANDBOX_SEEN", "passed on")
    out = await run(await open_sandbox([tmp_path]), tmp_path,
                    'echo "${ANTHROPIC_API_KEY:-none} ${CORP_VAULT:-none} $AGENT_LSP_SANDBOX_SEEN"',
                    secret_env=("CORP_*",))
    assert out.splitlines()[1:] == ["none none passed on"]


async def test_a_timeout_kills_the_sandboxed_command(tmp_path):
    sandbox = await open_sandbox([tmp_path])
    with pytest.raises(ToolError, match=r"timed out after 1 s and was killed \(sandboxed: "):
        await RunCommand(sandbox).run(ToolContext(editor=FakeEditor(root=tmp_path)),
                                      RunCommandInput(command="echo started; sleep 30 & wait", timeout=1))


def path_with(tmp_path: Path, bwrap_script: str = "") -> str:
    """A PATH whose only program is a `bwrap` running `bwrap_script` (none at all when it is empty)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    if bwrap_script:
        (folder / "bwrap").write_text(f"#!/bin/sh\n{bwrap_script}\n")
        (folder / "bwrap").chmod(0o755)
    return str(folder)


async def test_without_bwrap_commands_run_outside_and_say_so(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", path_with(tmp_path))
    sandbox = await open_sandbox([tmp_path])
    assert (sandbox.ready, sandbox.problem) == (False, "bwrap: not found on PATH")
    tool = RunCommand(sandbox)
    preview = await tool.preview(ToolContext(editor=FakeEditor(root=tmp_path)), RunCommandInput(command="echo hi"))
    assert not preview.sandbox_auto_allow  # so it asks, whatever autoAllow says
    assert await run(sandbox, tmp_path, "echo hi > out.txt; echo ran") == \
        "Exit code 0 (not sandboxed: bwrap: not found on PATH)\nran"
    assert (tmp_path / "out.txt").read_text() == "hi\n"


async def test_a_bwrap_that_fails_to_start_is_named_with_its_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", path_with(tmp_path, "echo 'bwrap: No permissions to create new namespace' >&2; exit 1"))
    sandbox = await open_sandbox([tmp_path])
    assert (sandbox.ready, sandbox.problem) == (False, "bwrap: No permissions to create new namespace")
    assert sandbox.wrap(["/bin/sh", "-c", "true"], tmp_path) == ["/bin/sh", "-c", "true"]


async def test_the_preview_lets_a_sandboxed_command_run_unasked_only_with_auto_allow(tmp_path):
    ctx, command = ToolContext(editor=FakeEditor(root=tmp_path)), RunCommandInput(command="make")
    assert (await RunCommand(await open_sandbox([tmp_path])).preview(ctx, command)).sandbox_auto_allow
    assert not (await RunCommand(await open_sandbox([tmp_path], auto_allow=False)).preview(ctx, command)) \
        .sandbox_auto_allow
    assert not (await RunCommand().preview(ctx, command)).sandbox_auto_allow


def request(sandbox_auto_allow: bool) -> PermissionRequest:
    return PermissionRequest(tool_call_id="c1", name="run_command", kind="execute", title="Run `make`",
                             input={"command": "make"}, command="make", sandbox_auto_allow=sandbox_auto_allow)


@pytest.mark.parametrize("mode, sandboxed, expected", [
    ("default", True, "allowed unasked"), ("acceptEdits", True, "allowed unasked"),
    ("plan", True, "refused"), ("default", False, "asked"), ("acceptEdits", False, "asked")])
async def test_auto_allow_by_permission_mode(mode, sandboxed, expected):
    asked = []

    async def ask(req):
        asked.append(req.tool_call_id)
        return "allow_once", None

    emitted = []
    decision = await make_permit(mode, Grants(), ask)(request(sandboxed), emitted.append)
    outcome = {(Allow, False): "allowed unasked", (Allow, True): "asked", (Deny, False): "refused"}[
        (type(decision), bool(asked))]
    assert outcome == expected
    if expected == "refused":
        assert decision.message == "run_command is refused in plan mode."
    assert [type(e).__name__ for e in emitted] == (["ToolCallUpdate", "ConfirmationRequest"] if asked else [])


async def test_a_refusal_for_the_session_wins_over_auto_allow():
    async def ask(req):
        raise AssertionError("not asked")

    decision = await make_permit("default", Grants(refused={"run_command"}), ask)(request(True), lambda e: None)
    assert decision == Deny("The user refused run_command for the rest of this session.")


async def test_a_hook_runs_in_the_sandbox(outside_tmp):
    ws = outside_tmp / "ws"
    ws.mkdir()
    hook = HookCommand("", f"echo inside > hooked.txt; touch {outside_tmp}/escaped; echo $? > touch-status", 10)
    hooks = ShellHooks({"PreToolUse": [hook]}, "s1", ws, await open_sandbox([ws]))
    verdict = await hooks(HookEvent("PreToolUse", tool_name="run_command", tool_input={"command": "make"}))
    assert verdict.block is None and verdict.warnings == []
    assert (ws / "hooked.txt").read_text() == "inside\n" and (ws / "touch-status").read_text() == "1\n"
    assert not (outside_tmp / "escaped").exists()
