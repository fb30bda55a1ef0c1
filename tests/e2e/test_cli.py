"""The command line: --version and --help start nothing; --tcp serves LSP on loopback; logs never go to stdout."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys

import pytest

from tests.waiting import until


SERVER = [sys.executable, "-m", "agent_lsp"]


def test_version_and_help():
    version = subprocess.run([*SERVER, "--version"], capture_output=True, text=True, timeout=30)
    assert (version.returncode, version.stdout) == (0, "agent-lsp-server 0.2.0 (protocol 1)\n")
    usage = subprocess.run([*SERVER, "--help"], capture_output=True, text=True, timeout=30)
    assert usage.returncode == 0
    for option in ("--tcp", "--host", "--port", "--model", "--data-dir", "--log-file", "--log-level", "demo"):
        assert option in usage.stdout


@pytest.mark.parametrize("args, named", [
    (["demo", "--tcp"], "--tcp"),
    (["demo", "--port", "2090", "--log-level", "DEBUG"], "--port, --log-level"),
    (["demo", "--model", "claude-x"], "--model"),
    (["--port", "2090"], "--host and --port apply only with --tcp"),
    (["--tcp", "--stdio"], "--tcp and --stdio exclude each other"),
])
def test_options_that_do_not_apply_are_refused_not_ignored(args, named):
    refused = subprocess.run([*SERVER, *args], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert refused.returncode == 2 and refused.stdout == ""
    *_, error = refused.stderr.strip().splitlines()
    assert error.startswith("agent-lsp: error: ") and named in error, refused.stderr


def test_the_demo_chats_then_a_suggestion_is_asked_shown_and_accepted_then_a_next_edit(tmp_path):
    demo = subprocess.run([*SERVER, "demo"], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                          cwd=tmp_path)
    assert demo.returncode == 0, demo.stdout + demo.stderr
    lines = demo.stdout.strip().splitlines()
    (result,) = [line for line in lines if line.startswith("result ")]
    assert "stopReason=end_turn" in result
    assert lines[lines.index(result) + 1:] == [  # not a tty: the ghost text is not dimmed
        "editor   │ types on, under low_stock (the cursor is at ▏):",
        "         │ def find(items, name):",
        "         │     for item in items:",
        "         │         if item▏",
        'ghost    │         if item▏["name"] == name:   ← the suggestion (textDocument/inlineCompletion); Tab accepts',
        'accepted │         if item["name"] == name:   ← didChange, then agent.completionAccepted',
        "stats    │ requests=1 modelCalls=2 reused=0 cancelled=0 stale=0 shown=1 accepted=1 partiallyAccepted=0 "
        "errors=0",
        "editor   │ renames items to stock in find's signature:",
        "         │ def find(stock▏, name):",
        "next     │     for item in items:  →  for item in stock:   ← the next edit (textDocument/copilotInlineEdit); "
        "Tab applies",
        "applied  │     for item in stock:   ← didChange",
        "stats    │ next edits: requests=1 modelCalls=1 shown=1 accepted=1 stale=0 cancelled=0 filtered=0 errors=0",
        "server   │ exited with code 0"], demo.stdout


def framed(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


async def read_message(reader: asyncio.StreamReader) -> dict:
    length = 0
    while (line := await reader.readline()) != b"\r\n":
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(await reader.readexactly(length))


async def test_tcp_serves_lsp_and_logs_go_to_the_log_file(tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = tmp_path / "agent-lsp.log"
    server = await asyncio.create_subprocess_exec(
        *SERVER, "--tcp", "--port", str(port), "--log-file", str(log), "--log-level", "DEBUG",
        "--data-dir", str(tmp_path / "state"), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        async def connected():
            try:
                return await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                return None

        reader, writer = await until(connected, what="the server to listen")  # 60 s: start-up on a loaded machine
        writer.write(framed({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                             "params": {"processId": None, "rootUri": None, "capabilities": {}}}))
        answer = await asyncio.wait_for(read_message(reader), 60)
        assert answer["result"]["serverInfo"] == {"name": "agent-lsp-server", "version": "0.2.0"}
        writer.close()
    finally:
        server.kill()
        stdout, _ = await server.communicate()
    assert stdout == b""
    assert "initialize" in log.read_text()
