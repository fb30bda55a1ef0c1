"""Edits by symbol and the impact of a change (PROTOCOL §11) through the real server and a real language server of
its own (jedi-language-server, which starts a symbol at `def`; basedpyright, which starts it at its decorator): the
same span and token on both, the replacement applied to the editor's buffer through workspace/applyEdit, and
`impact` naming the changed function with its callers."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import acp
import pytest
from acp import schema

from agent_lsp.tools.symbols import token_of
from tests.e2e.conftest import chat, open_doc, sent, text, tool_use
from tests.waiting import until

SERVERS = {
    "jedi": {"command": [str(Path(sys.executable).parent / "jedi-language-server")], "languages": ["python"]},
    "basedpyright": {"command": [str(Path(sys.executable).parent / "basedpyright-langserver"), "--stdio"],
                     "languages": ["python"]},
}
SHOP = '''import functools


# prices are cached
@functools.lru_cache
def price(item):
    return 1


class Cart:
    @property
    def total(self):
        return price("a") + price("b")
'''
USE = 'from shop import price\n\nprint(price("c"))\n'
SPAN = "@functools.lru_cache\ndef price(item):\n    return 1"
BODY = "@functools.lru_cache\ndef price(item, tax=0):\n    return 1 + tax\n"


def results(fake_api, count: int) -> list[str]:
    """The tool results the model read, one per request after the first."""
    return [[b for b in sent(fake_api, i)[-1]["content"] if b["type"] == "tool_result"][0]["content"]
            for i in range(1, count + 1)]



async def test_a_symbol_edit_that_changes_nothing_asks_nothing_and_sends_nothing(lsp):
    (lsp.workspace / "shop.py").write_text(SHOP)
    token = token_of(SPAN)
    lsp.fake_api.add(
        tool_use("replace_symbol", {"path": "shop.py", "symbol": "price", "token": token, "body": SPAN + "\n"},
                 id="toolu_same"),
        text("Done."))
    client = await lsp.start(init_options={"languageServers": {"jedi": SERVERS["jedi"]}, "languageTimeout": 120})
    uri = open_doc(client, lsp.workspace / "shop.py", SHOP)
    asked = lambda: any(u["update"]["kind"] == "confirmation_request" for u in client.updates)  # noqa: E731
    chatting = asyncio.ensure_future(chat(client, "keep price as it is"))  # edits are asked about by default
    await until(lambda: chatting.done() or asked())
    assert not asked()
    assert (await chatting)["finalMessage"] == "Done."
    (said,) = results(lsp.fake_api, 1)
    assert said.startswith("No change: `price` in shop.py already reads so; nothing was sent.\n")
    assert client.docs[uri] == [1, SHOP]

@pytest.mark.parametrize("server", ["jedi", "basedpyright"])
async def test_read_replace_and_impact_through_a_real_language_server(lsp, server):
    (lsp.workspace / "shop.py").write_text(SHOP)
    (lsp.workspace / "use.py").write_text(USE)
    token = token_of(SPAN)
    lsp.fake_api.add(
        tool_use("read_symbol", {"path": "shop.py", "symbol": "price"}, id="toolu_read"),
        tool_use("replace_symbol", {"path": "shop.py", "symbol": "price", "token": token, "body": BODY},
                 id="toolu_replace"),
        tool_use("impact", {}, id="toolu_impact"),
        text("Done."))
    # a ceiling, not a wait: basedpyright's first answer under a loaded machine can take longer than the default 5 s
    client = await lsp.start(init_options={"languageServers": {server: SERVERS[server]}, "languageTimeout": 120})
    uri = open_doc(client, lsp.workspace / "shop.py", SHOP)
    result = await chat(client, "add a tax to price", permissionMode="acceptEdits")
    assert result["finalMessage"] == "Done."
    read, replaced, impact = results(lsp.fake_api, 3)
    assert read.splitlines()[:4] == [f"shop.py:5-7 function price token={token}", "     5\t@functools.lru_cache",
                                     "     6\tdef price(item):", "     7\t    return 1"]
    assert read.splitlines()[4].startswith("index: ")
    assert replaced.startswith(f"Replaced `price` in shop.py: now lines 5-7, token={token_of(BODY.rstrip())}.\n")
    assert client.docs[uri] == [2, SHOP.replace("def price(item):\n    return 1", "def price(item, tax=0):\n"
                                                                               "    return 1 + tax")]
    lines = impact.splitlines()
    assert lines[:2] == ["## price (shop.py:6): changed function", "references: 4 in 2 files: shop.py, use.py"]
    if server == "jedi":
        assert lines[2:5] == ["callers (from references; jedi has no call hierarchy):", "  shop.py: Cart/total (2)",
                              "  use.py: module level (2)"]
    else:
        assert lines[2:4] == ["callers:", "  shop.py:12:9: total"]
    assert lines[-1].startswith("index: ")


async def test_references_from_jedi_say_they_may_stop_at_its_limit_of_files_and_name_the_search(lsp):
    """jedi reads at most 30 of the files holding a name per reference search: with 40 callers, find_references and
    impact answer what it found and say the rest may be missing, naming the search that finds them all."""
    (lsp.workspace / "shop.py").write_text(SHOP)
    for n in range(40):
        (lsp.workspace / f"use{n:02}.py").write_text(USE)
    lsp.fake_api.add(
        tool_use("find_references", {"path": "shop.py", "line": 6, "column": 5}, id="toolu_refs"),
        tool_use("impact", {"targets": [{"path": "shop.py", "symbol": "price"}]}, id="toolu_impact"),
        text("Done."))
    client = await lsp.start(init_options={"languageServers": {"jedi": SERVERS["jedi"]}, "languageTimeout": 120})
    assert (await chat(client, "who calls price?"))["finalMessage"] == "Done."
    note = ("These may be incomplete: the language server reads at most 30 of the files that hold `price` in one "
            "search, and 41 do here. Run search with pattern `\\bprice\\b` for the rest.")
    references, impact = results(lsp.fake_api, 2)
    found = references.splitlines()
    assert found[-2:] == [note, "index: unknown — `jedi` reports nothing of its indexing"]
    assert len({line.split(":")[0] for line in found[:-2]}) < 41  # jedi stopped before the last files
    assert note in impact.splitlines()


GREET = "def greet(name):\n    return 'hi ' + name\n\n\ndef wave():\n    return 'o/'\n"
ASKED = {  # each symbol edit of GREET, and the text it proposes
    "replace_symbol": ({"symbol": "greet", "token": token_of("def greet(name):\n    return 'hi ' + name"),
                        "body": "def greet(name):\n    return 'hello ' + name\n"},
                       GREET.replace("'hi '", "'hello '")),
    "insert_symbol": ({"anchor": "wave", "where": "after", "text": "def bow():\n    return 'm(_ _)m'\n"},
                      GREET + "\n\ndef bow():\n    return 'm(_ _)m'\n"),
    "delete_symbol": ({"symbol": "wave", "token": token_of("def wave():\n    return 'o/'"), "force": True},
                      "def greet(name):\n    return 'hi ' + name\n"),
}


@pytest.mark.parametrize("tool", list(ASKED))
async def test_over_acp_a_symbol_edit_asks_with_diff_content_as_edit_file_does(agents, fake_api, workspace, tmp_path,
                                                                               tool):
    """ACP clients show only the tool call's content in their approval prompt: a symbol edit's is the ACP `diff`
    of the whole file, as edit_file's (test_acp.py), and so is its completed update."""
    from tests.e2e.acp_client import RecordingClient

    app = str(workspace / "app.py")
    (workspace / "app.py").write_text(GREET)
    config = tmp_path / "config"
    (config / "agent-lsp").mkdir(parents=True)
    (config / "agent-lsp" / "settings.json").write_text(json.dumps({"languageServers": {"jedi": SERVERS["jedi"]}}))
    client = RecordingClient({app: GREET})
    client.answers = ["allow_once"]
    agent = await agents(client, env={"XDG_CONFIG_HOME": str(config)})
    session_id = (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
    args, after = ASKED[tool]
    fake_api.add(tool_use(tool, {"path": "app.py", **args}, id="toolu_sym"), text("Done."))
    answer = await agent.conn.prompt(session_id=session_id, prompt=[acp.text_block("change it")])
    assert answer.stop_reason == "end_turn"
    (asked, kinds), = client.permission_requests
    assert (asked.tool_call_id, asked.kind, kinds) == ("toolu_sym", "edit", [
        "allow_once", "allow_always", "reject_once", "reject_always"])
    (proposed,) = asked.content
    assert (proposed.type, proposed.path, proposed.old_text, proposed.new_text) == ("diff", app, GREET, after)
    assert [loc.path for loc in asked.locations] == [app]
    assert client.writes == [(app, after)]
    done = [u for u in client.updates if isinstance(u, schema.ToolCallProgress) and u.status == "completed"][-1]
    (diff,) = done.content
    assert (diff.type, diff.path, diff.old_text, diff.new_text) == ("diff", app, GREET, after)
