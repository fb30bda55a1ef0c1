"""Language servers of agent-lsp's own, wired into the real server: a plain LSP client and an ACP client (neither
can answer agent/languageFeature) get the language tools from the `languageServers` setting, answered by a real
jedi-language-server with the editor's unsaved text; the server never outlives agent-lsp."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

import acp

from tests.e2e.acp_client import RecordingClient, start_agent
from tests.e2e.conftest import chat, open_doc, sent, server_env, server_process, text, tool_use
from tests.waiting import holds_within

JEDI = str(Path(sys.executable).parent / "jedi-language-server")
SERVERS = {"jedi": {"command": [JEDI], "languages": ["python"]}}
LANGUAGE_TOOLS = ["find_symbol", "go_to_definition", "find_references", "hover", "document_symbols",
                  "call_hierarchy", "rename_symbol"]
JEDI_INDEX = "index: unknown — `jedi` reports nothing of its indexing"
REFERENCES = tool_use("find_references", {"path": "app.py", "line": 1, "column": 5}, id="toolu_refs")


def setup_workspace(root: Path) -> None:
    (root / "app.py").write_text("def greet(name):\n    return 'hi ' + name\n")
    (root / "use.py").write_text("from app import greet\n\nprint(greet('a'))\n")


def result(fake_api, request: int) -> str:
    return [b for b in sent(fake_api, request)[-1]["content"] if b["type"] == "tool_result"][0]["content"]


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


async def test_a_plain_client_gets_the_language_tools_from_its_own_language_servers(lsp):
    setup_workspace(lsp.workspace)
    client = await lsp.start(init_options={"languageServers": SERVERS})
    tools = (await client.protocol.send_request_async("agent/tools", {}))["tools"]
    offered = {t["name"]: t["origin"] for t in tools if t["name"] in LANGUAGE_TOOLS}
    assert offered == {name: "languageServer:jedi" for name in LANGUAGE_TOOLS}
    # an unsaved call in the editor's buffer is a reference too
    open_doc(client, lsp.workspace / "app.py", "def greet(name):\n    return 'hi ' + name\n\ngreet('unsaved')\n")
    lsp.fake_api.add(REFERENCES, text("Three callers."))
    assert (await chat(client, "who calls greet?"))["stopReason"] == "end_turn"
    assert result(lsp.fake_api, 1) == "app.py:4:1: greet('unsaved')\nuse.py:1:17: from app import greet\n" \
                                      f"use.py:3:7: print(greet('a'))\n{JEDI_INDEX}"


async def test_over_acp_the_same_settings_give_the_same_language_tools_and_answers(lsp, tmp_path):
    fake_api, workspace = lsp.fake_api, lsp.workspace
    setup_workspace(workspace)
    config = tmp_path / "config"
    (config / "agent-lsp").mkdir(parents=True)
    (config / "agent-lsp" / "settings.json").write_text(json.dumps({"languageServers": SERVERS}))
    env = {"XDG_CONFIG_HOME": str(config)}
    answers = {}
    for name in ("lsp", "acp"):
        first = len(fake_api.requests)
        fake_api.add(REFERENCES, text("Found."))
        if name == "lsp":
            client = await lsp.start(env={**server_env(fake_api.base_url), **env})
            await chat(client, "who calls greet?")
        else:
            agent = await start_agent(fake_api.base_url, workspace.parent / "state", RecordingClient(), env=env)
            try:
                session_id = (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
                await agent.conn.prompt(session_id=session_id, prompt=[acp.text_block("who calls greet?")])
            finally:
                await agent.stop()
        answers[name] = ([t["name"] for t in fake_api.requests[first]["tools"] if t["name"] in LANGUAGE_TOOLS],
                         result(fake_api, first + 1))
    assert answers["lsp"] == answers["acp"] == (LANGUAGE_TOOLS, "use.py:1:17: from app import greet\n"
                                                                f"use.py:3:7: print(greet('a'))\n{JEDI_INDEX}")


async def test_a_sigkilled_agent_lsp_leaves_no_language_server_behind(lsp):
    setup_workspace(lsp.workspace)
    client = await lsp.start(init_options={"languageServers": SERVERS})
    lsp.fake_api.add(REFERENCES, text("Found."))
    await chat(client, "who calls greet?")
    server_pid = server_process(client).pid
    (language_server,) = [pid for pid in children(server_pid) if "jedi" in Path(f"/proc/{pid}/cmdline").read_text()]
    os.kill(server_pid, signal.SIGKILL)
    assert await holds_within(lambda: not alive(language_server)), f"jedi ({language_server}) outlived agent-lsp"
    lsp.clients.remove(client)  # nothing to shut down: it is gone
    assert await asyncio.wait_for(server_process(client).wait(), 60) == -signal.SIGKILL
