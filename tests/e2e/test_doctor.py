"""`agent-lsp doctor` as a user runs it: a real subprocess in a scratch home, each check made to fail for real once
(no key, a data directory that cannot be a directory, a damaged sessions.db, a Python environment without rg, an
MCP server that exits at once, a sandbox that cannot start), with its message, its fix and the exit status."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCTOR = [sys.executable, "-m", "agent_lsp", "doctor"]
CEILING = 120  # a last resort: doctor bounds its own waits (a connect, an MCP server's start)
SECRET = "sk-ant-doctor-secret-value"


@pytest.fixture
def home(tmp_path):
    """A scratch home: no keys, its own config and state directories, a loopback listener as the base URL."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "OPENAI_", "AGENT_LSP_", "XDG_"))}
    env.update(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_STATE_HOME=str(tmp_path / "state"),
               AGENT_LSP_OFFLINE="1", PYTHONPATH=str(ROOT))
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        env.update(ANTHROPIC_API_KEY=SECRET, ANTHROPIC_BASE_URL=f"http://127.0.0.1:{listener.getsockname()[1]}")
        yield tmp_path, env


def doctor(env: dict, *args: str, python: str = sys.executable) -> tuple[int, dict]:
    done = subprocess.run([python, "-m", "agent_lsp", "doctor", "--json", *args], env=env, cwd=env["HOME"],
                          capture_output=True, text=True, timeout=CEILING)
    assert SECRET not in done.stdout + done.stderr
    return done.returncode, json.loads(done.stdout)


def statuses(report: dict) -> dict[str, str]:
    return {c["name"]: c["status"] for c in report["checks"]}


def only_failure(report: dict) -> dict:
    failed = [c for c in report["checks"] if c["status"] == "fail"]
    assert len(failed) == 1, report
    return failed[0]


def user_settings(tmp_path: Path, settings: dict) -> None:
    path = tmp_path / "config" / "agent-lsp" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(settings))


def mcp_settings(tmp_path: Path, servers: dict) -> None:
    user_settings(tmp_path, {"mcpServers": servers})


def test_all_green_and_the_json_shape(home):
    tmp_path, env = home
    out = tmp_path / "mcp"
    mcp_settings(tmp_path, {"fake": {"command": sys.executable, "args": ["-m", "tests.fakes.mcp_server", str(out)],
                                     "env": {"PYTHONPATH": str(ROOT)}}})
    code, report = doctor(env)
    assert code == 0 and report["ok"] is True
    assert set(report) == {"ok", "version", "protocol", "checks"}
    assert all(set(c) == {"name", "status", "detail"} for c in report["checks"]), report
    assert statuses(report) == {"python": "ok", "version": "ok", "settings": "ok", "keys": "ok", "base URL": "ok",
                                "suggestions": "ok", "data directory": "ok", "sessions database": "ok", "ripgrep": "ok",
                                "sandbox": "skip", "MCP server fake": "ok"}
    details = {c["name"]: c["detail"] for c in report["checks"]}
    assert details["version"] == f"agent-lsp-server {report['version']} (protocol {report['protocol']})"
    assert details["keys"] == "present: ANTHROPIC_API_KEY; provider anthropic"
    assert details["MCP server fake"].endswith("started with 3 tools")
    assert details["suggestions"] == f"on: anthropic claude-haiku-5-5, api chat, at {env['ANTHROPIC_BASE_URL']}, " \
                                     "key ANTHROPIC_API_KEY"


def test_the_text_report_and_its_exit_status(home):
    tmp_path, env = home
    del env["ANTHROPIC_API_KEY"]
    done = subprocess.run(DOCTOR, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=CEILING)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines if not line.startswith(" ")][:-1] == \
        ["OK", "OK", "OK", "FAIL", "SKIP", "SKIP", "OK", "OK", "OK", "SKIP", "SKIP"], done.stdout
    assert lines[-1] == "1 problem found"
    assert any(line.strip().startswith("fix: Set ANTHROPIC_API_KEY") for line in lines), done.stdout


def test_no_key(home):
    _, env = home
    del env["ANTHROPIC_API_KEY"]
    code, report = doctor(env)
    assert code == 1 and report["ok"] is False
    failed = only_failure(report)
    assert failed["name"] == "keys" and failed["detail"] == "no provider key in the environment"
    assert failed["fix"].startswith("Set ANTHROPIC_API_KEY in the environment your editor starts agent-lsp with")
    assert statuses(report)["base URL"] == "skip"
    assert checks(report)["suggestions"] == {"name": "suggestions", "status": "skip",
                                             "detail": "off: no model provider is configured (see keys)"}


def test_the_demo_model_needs_no_key(home):
    _, env = home
    del env["ANTHROPIC_API_KEY"]
    code, report = doctor(env, "--model", "demo")
    assert code == 0 and statuses(report)["keys"] == "ok"
    assert checks(report)["suggestions"] == {"name": "suggestions", "status": "ok", "detail": "on: the demo model "
                                             "(lines completed from the open buffers, offline)"}


def checks(report: dict) -> dict[str, dict]:
    return {c["name"]: c for c in report["checks"]}


OFF = " Or turn suggestions off: `completions.enabled` false."


@pytest.mark.parametrize("completions, detail, fix", [
    ({"provider": "openai", "baseUrl": "{loopback}"},  # the chat's model is anthropic's: openai has no default
     ("on: openai (no model), api chat, at {loopback}, no key; Suggestions from the openai provider need the "
      "`completions.model` setting"),
     ("Set `completions.model` to the model's name as its server knows it (e.g. \"qwen2.5-coder:1.5b-base\" on "
      "Ollama; docs/providers.md).")),
    ({"api": "fim"},
     ("on: anthropic claude-haiku-5-5, api fim, at {anthropic}, key ANTHROPIC_API_KEY; `completions.api` \"fim\" "
      "posts to an OpenAI-compatible /completions endpoint"),
     ("Set `completions.provider` to \"openai\" and `completions.baseUrl` to a server of the legacy /completions "
      "shape (Ollama, llama.cpp, DeepSeek), or `completions.api` to \"chat\".")),
    ({"provider": "openai", "model": "gpt-4.1-mini"},
     ("on: openai gpt-4.1-mini, api chat, at https://api.openai.com/v1, no key; The openai provider needs "
      "OPENAI_API_KEY"),
     ("Set OPENAI_API_KEY in the environment your editor starts agent-lsp with, or `completions.baseUrl` to a local "
      "server (Ollama, llama.cpp), which needs no key.")),
    ({"provider": "openai", "api": "fim", "model": "qwen2.5-coder:1.5b-base", "baseUrl": "{closed}"},
     ("on: openai qwen2.5-coder:1.5b-base, api fim, at {closed}, no key; {closed} cannot be reached (Connection "
      "refused)"),
     ("Check the network (a proxy or firewall), or correct `completions.baseUrl`; for a local server (Ollama, vLLM, "
      "llama.cpp) start it first.")),
], ids=["openai without a model", "fim with anthropic", "openai without a key", "its own base URL unreachable"])
def test_what_keeps_suggestions_from_working_and_its_fix(home, completions, detail, fix):
    tmp_path, env = home
    with socket.socket() as listener, socket.socket() as closed:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        closed.bind(("127.0.0.1", 0))
        urls = {"loopback": f"http://127.0.0.1:{listener.getsockname()[1]}/v1",
                "closed": f"http://127.0.0.1:{closed.getsockname()[1]}/v1", "anthropic": env["ANTHROPIC_BASE_URL"]}
        user_settings(tmp_path, {"completions": {k: v.format(**urls) for k, v in completions.items()}})
        code, report = doctor(env)
    failed = only_failure(report)
    assert code == 1 and failed["name"] == "suggestions", report
    assert failed["detail"].startswith(detail.format(**urls)), failed
    assert failed["fix"] == fix + OFF


def test_suggestions_off_and_on_a_reachable_server_of_their_own(home):
    tmp_path, env = home
    with socket.socket() as ollama:
        ollama.bind(("127.0.0.1", 0))
        ollama.listen()
        url = f"http://127.0.0.1:{ollama.getsockname()[1]}/v1"
        user_settings(tmp_path, {"completions": {"provider": "openai", "api": "fim", "model": "qwen2.5-coder:1.5b-base",
                                                 "baseUrl": url}})
        code, report = doctor(env)
    assert code == 0 and checks(report)["suggestions"] == {
        "name": "suggestions", "status": "ok",
        "detail": f"on: openai qwen2.5-coder:1.5b-base, api fim, at {url}, no key; {url} accepts connections"}
    (tmp_path / "config" / "agent-lsp" / "settings.json").write_text(json.dumps(
        {"completions": {"enabled": False, "api": "fim"}}))  # off: what would be wrong when on is no problem
    code, report = doctor(env)
    assert code == 0 and checks(report)["suggestions"] == {
        "name": "suggestions", "status": "skip", "detail": "off (`completions.enabled` is false); when on: anthropic "
        f"claude-haiku-5-5, api fim, at {env['ANTHROPIC_BASE_URL']}, key ANTHROPIC_API_KEY"}


def test_base_url_unreachable(home):
    _, env = home
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        env["ANTHROPIC_BASE_URL"] = f"http://127.0.0.1:{closed.getsockname()[1]}"
    code, report = doctor(env)
    failed = only_failure(report)
    assert code == 1 and failed["name"] == "base URL"
    assert failed["detail"] == f"{env['ANTHROPIC_BASE_URL']} cannot be reached (Connection refused)"


def test_data_directory_not_writable(home):
    tmp_path, env = home
    (tmp_path / "a-file").write_text("")  # a directory under a regular file cannot be made, even by root
    code, report = doctor(env, "--data-dir", str(tmp_path / "a-file" / "state"))
    assert code == 1
    failed = [c for c in report["checks"] if c["status"] == "fail"]
    assert [c["name"] for c in failed] == ["data directory"], report
    assert failed[0]["detail"] == f"{tmp_path}/a-file/state is not writable (Not a directory)"
    assert failed[0]["fix"].startswith("Make it a writable directory, or choose another with --data-dir")


def test_damaged_sessions_database(home):
    tmp_path, env = home
    data = tmp_path / "data"
    data.mkdir()
    db = sqlite3.connect(data / "sessions.db")
    db.execute("CREATE TABLE t (x TEXT)")
    db.executemany("INSERT INTO t VALUES (?)", [("x" * 500,)] * 200)
    db.commit()
    db.close()
    with open(data / "sessions.db", "r+b") as f:  # zero the second half of the file: pages the schema points at
        size = f.seek(0, 2)
        f.seek(size // 2)
        f.write(b"\0" * (size - size // 2))
    before = (data / "sessions.db").read_bytes()
    code, report = doctor(env, "--data-dir", str(data))
    failed = only_failure(report)
    assert code == 1 and failed["name"] == "sessions database"
    assert failed["detail"].startswith(f"{data}/sessions.db is damaged: "), failed
    assert failed["fix"].startswith(f"Move {data}/sessions.db aside")
    assert (data / "sessions.db").read_bytes() == before  # read-only


def test_ripgrep_missing(home, tmp_path):
    _, env = home
    # A real environment without rg: a venv with no packages, importing agent-lsp and its dependencies from ours
    # (rg lives in our venv's bin/, not in site-packages), with a PATH that has no rg either.
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", bare], check=True, timeout=CEILING)
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    env.update(PATH=str(empty), PYTHONPATH=os.pathsep.join([str(ROOT), sysconfig.get_path("purelib"),
                                                            sysconfig.get_path("platlib")]))
    code, report = doctor(env, python=str(bare / "bin" / "python"))
    failed = only_failure(report)
    assert code == 1 and failed["name"] == "ripgrep"
    assert failed["detail"].startswith("ripgrep (`rg`) was not found next to agent-lsp's Python or on PATH")
    assert f"into agent-lsp's environment ({bare})" in failed["fix"]


def test_an_mcp_server_that_does_not_start(home):
    tmp_path, env = home
    mcp_settings(tmp_path, {"broken": {"command": sys.executable, "args": ["-c", "import sys; sys.exit(3)"]}})
    code, report = doctor(env)
    failed = only_failure(report)
    assert code == 1 and failed["name"] == "MCP server broken"
    assert failed["detail"].startswith(f"the MCP server `broken` ({sys.executable} -c import sys; sys.exit(3)) "
                                       "did not start: "), failed
    assert failed["fix"].startswith("Correct `mcpServers.broken` in your settings")


def test_a_settings_file_that_is_not_json(home):
    tmp_path, env = home
    path = tmp_path / "config" / "agent-lsp" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    code, report = doctor(env)
    failed = only_failure(report)
    assert code == 1 and failed["name"] == "settings" and "is not valid JSON" in failed["detail"]


def test_the_sandbox_on_starts_with_bwrap(home):
    tmp_path, env = home
    user_settings(tmp_path, {"sandbox": {"enabled": True}})
    code, report = doctor(env)
    (check,) = [c for c in report["checks"] if c["name"] == "sandbox"]
    assert code == 0 and check == {"name": "sandbox", "status": "ok",
                                   "detail": "on, without network; /usr/bin/bwrap starts it"}


def test_the_sandbox_on_without_bwrap_on_path(home):
    tmp_path, env = home
    user_settings(tmp_path, {"sandbox": {"enabled": True}})
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    env["PATH"] = str(empty)
    code, report = doctor(env)
    failed = only_failure(report)
    assert code == 1 and failed["name"] == "sandbox"
    assert failed["detail"] == "on, but it cannot start (bwrap: not found on PATH): commands run outside it, each " \
                               "asked first"
    assert failed["fix"].startswith("Install bubblewrap (apt install bubblewrap)")


def test_the_sandbox_off_says_why_it_could_not_start(home):
    tmp_path, env = home
    refusing = tmp_path / "refusing-bin"  # a bwrap that fails as it does where user namespaces are refused
    refusing.mkdir()
    (refusing / "bwrap").write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    (refusing / "bwrap").chmod(0o755)
    env["PATH"] = f"{refusing}{os.pathsep}{env['PATH']}"
    code, report = doctor(env)
    (check,) = [c for c in report["checks"] if c["name"] == "sandbox"]
    assert code == 0 and check == {"name": "sandbox", "status": "skip", "detail": "off (the `sandbox` setting); it "
                                   "cannot start (bwrap: setting up uid map: Permission denied)"}


def test_doctor_refuses_options_of_serving():
    refused = subprocess.run([*DOCTOR, "--tcp"], capture_output=True, text=True, timeout=CEILING)
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines()[-1] == \
        "agent-lsp: error: doctor takes only --json, --model and --data-dir (--tcp given)."


def model(env: dict, *args: str) -> tuple[int, dict]:
    done = subprocess.run([sys.executable, "-m", "agent_lsp", "model", "--json", *args], env=env, cwd=env["HOME"],
                          capture_output=True, text=True, timeout=CEILING)
    assert SECRET not in done.stdout + done.stderr
    return done.returncode, json.loads(done.stdout)


def test_model_says_what_chats_would_use_with_an_editors_settings_over_the_rest(home):
    tmp_path, env = home
    code, answer = model(env, "--settings", json.dumps({"provider": "openai", "baseUrl": "http://127.0.0.1:9/v1",
                                                        "maxTurns": "many"}))
    assert code == 1 and (answer["provider"], answer["model"], answer["baseUrl"], answer["key"], answer["lacks"]) == \
        ("openai", "", "http://127.0.0.1:9/v1", None, "model")
    assert "`model` setting" in answer["problem"] and len(answer["warnings"]) == 1 and "maxTurns" in answer["warnings"][0]
    path = tmp_path / "config" / "agent-lsp" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"model": "claude-from-the-file"}))
    assert model(env) == (0, {"provider": "anthropic", "model": "claude-from-the-file",
                              "baseUrl": env["ANTHROPIC_BASE_URL"], "key": "ANTHROPIC_API_KEY", "api": "chat",
                              "lacks": None, "problem": None,
                              "completions": {"provider": "anthropic", "model": "claude-haiku-5-5",
                                              "baseUrl": env["ANTHROPIC_BASE_URL"], "key": "ANTHROPIC_API_KEY",
                                              "api": "chat", "lacks": None, "problem": None, "enabled": True},
                              "warnings": []})
    assert model(env, "--settings", '{"model": "demo"}')[1]["provider"] == "demo"  # the editor's over the file
    del env["ANTHROPIC_API_KEY"]
    code, answer = model(env, "--model", "claude-x")
    assert (code, answer["provider"], answer["model"], answer["lacks"]) == (1, "none", "claude-x", "provider")


def test_model_says_what_suggestions_would_use_beside_the_chats(home):
    _, env = home
    ollama = "http://127.0.0.1:9/v1"
    code, answer = model(env, "--settings", json.dumps({"completions": {"provider": "openai", "api": "fim",
                                                                         "baseUrl": ollama, "enabled": False}}))
    assert (code, answer["provider"], answer["problem"]) == (0, "anthropic", None)  # the exit status is the chat's
    assert answer["completions"] == {"provider": "openai", "model": "", "baseUrl": ollama, "key": None, "api": "fim",
                                     "lacks": "model", "problem": answer["completions"]["problem"], "enabled": False}
    assert answer["completions"]["problem"].startswith("Suggestions from the openai provider need the "
                                                       "`completions.model` setting")
    code, answer = model(env, "--model", "demo")
    assert (code, answer["completions"]) == (0, {"provider": "demo", "model": "demo", "baseUrl": None, "key": None,
                                                 "api": "chat", "lacks": None, "problem": None, "enabled": True})

    done = subprocess.run([sys.executable, "-m", "agent_lsp", "model", "--settings", json.dumps(
        {"model": "claude-x", "completions": {"provider": "openai", "api": "fim", "baseUrl": ollama}})], env=env,
        cwd=env["HOME"],
        capture_output=True, text=True, timeout=CEILING)
    base = env["ANTHROPIC_BASE_URL"]
    assert (done.returncode, done.stdout.splitlines()) == (0, [
        f"{'':<9} {'chats':<{len(base)}}  suggestions",
        f"provider  {'anthropic':<{len(base)}}  openai",
        f"model     {'claude-x':<{len(base)}}  none",
        f"base URL  {base}  {ollama}",
        f"key       {'ANTHROPIC_API_KEY':<{len(base)}}  none",
        f"api       {'chat':<{len(base)}}  fim",
        ("problem   suggestions: Suggestions from the openai provider need the `completions.model` setting (the "
         "model's name as the server knows it, e.g. \"qwen2.5-coder:1.5b-base\" on Ollama), or the `model` setting "
         "when chats use openai too.")]), done.stdout
    del env["ANTHROPIC_API_KEY"]  # no provider: the one problem is said once
    done = subprocess.run([sys.executable, "-m", "agent_lsp", "model", "--settings",
                           '{"completions": {"enabled": false}}'], env=env, cwd=env["HOME"], capture_output=True,
                          text=True, timeout=CEILING)
    assert done.returncode == 1
    assert done.stdout.splitlines()[0] == "          chats  suggestions (off: completions.enabled)", done.stdout
    assert [line.split()[0] for line in done.stdout.splitlines()[1:]] == \
        ["provider", "model", "base", "key", "api", "problem"], done.stdout


def test_model_refuses_options_that_do_not_apply():
    refused = subprocess.run([sys.executable, "-m", "agent_lsp", "model", "--data-dir", "/tmp/x"],
                             capture_output=True, text=True, timeout=CEILING)
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines()[-1] == \
        "agent-lsp: error: model takes only --json, --model and --settings (--data-dir given)."
    refused = subprocess.run([*DOCTOR, "--settings", "{}"], capture_output=True, text=True, timeout=CEILING)
    assert refused.stderr.strip().splitlines()[-1] == "agent-lsp: error: --settings applies only to `agent-lsp model`"
