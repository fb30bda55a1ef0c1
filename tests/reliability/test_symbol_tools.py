"""The symbol tools (PROTOCOL §11 "Edits by symbol": read_symbol, replace_symbol, insert_symbol, delete_symbol,
impact) under fire, through real chats whose scripted model calls them, on the real server with a language server
of its own (tests/fakes/lsp_raw.py `symbols`: documentSymbol from the text it was synced, references by word) and
a client that holds the buffer and applies edits only to the version they were made for, as editors do:

- inputs fuzzed (hypothesis, strategies.py): hostile name paths, tokens of another symbol, bodies with surrogates,
  NUL, 1 MB or not text, paths outside the workspace and through a symlink out of it, members missing: every call
  answered once, an error names why and edits nothing, an edit only with the token of the text it replaces, the
  file still compiles, nothing outside the workspace touched;
- the user typing inside the symbol between its read and the edit (while the model thinks, and as the edit
  arrives at the editor): the edit refused, the user's text kept; typing elsewhere: both kept;
- the language server killed (SIGKILL) in the middle of the call of each tool: an error naming it, nothing
  edited, the next call answered by its restart;
- an index not ready (`$/progress` begun and not ended; the editor's `agent/languageStatus` loading; a file
  changed on disk): the answer says `index: loading`, a delete is not proved and refused, a file changed on disk
  is read as it is now.

Counts: crashes (the server died), hangs (a chat unanswered within the ceiling), wrong (an edit that should not
have been made or a refusal that edited, a traceback), lost (a tool call without exactly one result).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
import threading
from pathlib import Path
from typing import Any, Callable, Optional
from urllib.parse import unquote, urlparse

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from agent_lsp.core.tool import ToolError
from agent_lsp.tools.symbols import Lines, matching, symbols_of, token_of
from tests.e2e.conftest import text, tool_use
from tests.fakes.lsp_raw import document_symbols
from tests.fakes.messages_api import FakeMessagesAPI
from tests.reliability import strategies as S
from tests.reliability.conftest import server_env, tally
from tests.reliability.rawlsp import ANSWER_CEILING
from tests.reliability.suggesting import WatchedServer, has_surrogate
from tests.waiting import until

LONG = "--long" in sys.argv
AREA_FUZZ = "symbol tools: inputs fuzzed"
AREA_TYPING = "symbol tools: the user typing between read and edit"
AREA_KILLED = "symbol tools: a language server killed mid-call"
AREA_INDEX = "symbol tools: an index not ready"
BYPASS = {"permissionMode": "bypassPermissions"}
SHOP = '''import functools


# prices are cached
@functools.lru_cache
def price(item):
    return 1


def helper():
    return price("h")


class Cart:
    @property
    def total(self):
        return price("a") + price("b")
'''
OUTSIDE = "SECRET = 1\n"


# ---- the client: buffers, and edits applied only to the version they were made for ------------------------

def offset(text: str, position: dict) -> int:
    """The index in `text` of an LSP position (UTF-16 columns, LSP's line breaks)."""
    starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]
    start = starts[min(position["line"], len(starts) - 1)]
    end = next((m.start() for m in re.compile(r"\r\n|\r|\n").finditer(text, start)), len(text))
    units = 0
    for i in range(start, end):
        if units >= position["character"]:
            return i
        units += 2 if ord(text[i]) > 0xFFFF else 1
    return end


def applied(text: str, edits: list[dict]) -> str:
    spans = sorted(((offset(text, e["range"]["start"]), offset(text, e["range"]["end"]), e["newText"])
                    for e in edits), reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


class Editor:
    """The client's side: open buffers (uri -> [version, text]); workspace/applyEdit applied only when every
    document's version is the one it holds (else refused, as editors do), then a didChange; `before_apply`, when
    set, runs once as an edit arrives (a keystroke that beats it)."""

    def __init__(self, server: WatchedServer, root: Path) -> None:
        self.server, self.root = server, root
        self.docs: dict[str, list] = {}
        self.before_apply: Optional[Callable[[], None]] = None
        self.edits = 0
        server.handlers["workspace/applyEdit"] = self.apply

    def open(self, name: str, text: str) -> str:
        uri = (self.root / name).as_uri()
        self.docs[uri] = [1, text]
        self.server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python",
                                                                      "version": 1, "text": text}})
        return uri

    def change(self, uri: str, text: str) -> None:
        self.docs[uri] = [self.docs[uri][0] + 1, text]
        self.server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": self.docs[uri][0]},
                                                      "contentChanges": [{"text": text}]})

    def text(self, uri: str) -> str:
        return self.docs[uri][1]

    def apply(self, params: Any) -> dict:
        if self.before_apply is not None:
            hook, self.before_apply = self.before_apply, None
            hook()
        changes = params["edit"].get("documentChanges") or []
        for change in changes:
            uri = change.get("textDocument", {}).get("uri")
            if uri in self.docs and change["textDocument"].get("version") != self.docs[uri][0]:
                return {"applied": False, "failureReason": f"{uri} is at version {self.docs[uri][0]}"}
            if "kind" in change or (uri not in self.docs and not Path(unquote(urlparse(uri).path)).is_file()):
                return {"applied": False, "failureReason": "no such file"}
        for change in changes:
            uri = change["textDocument"]["uri"]
            self.edits += 1
            if uri in self.docs:
                self.change(uri, applied(self.text(uri), change["edits"]))
            else:  # a closed file: the editor edits it on disk
                path = Path(unquote(urlparse(uri).path))
                path.write_text(applied(path.read_text(), change["edits"]))
        return {"applied": True}


# ---- a server with a language server of its own ------------------------------------------------------------

def language_server(out: Path) -> dict:
    return {"py": {"command": [sys.executable, "-m", "tests.fakes.lsp_raw", "symbols", str(out)],
                   "languages": ["python"]}}


def workspace_for(tmp: Path) -> Path:
    root = tmp / "ws"
    (root / "sub").mkdir(parents=True)
    (root / "shop.py").write_text(SHOP)
    (tmp / "outside.py").write_text(OUTSIDE)
    (root / "link.py").symlink_to(tmp / "outside.py")
    return root


async def start(tmp: Path, root: Path, model: FakeMessagesAPI, sidecar: bool = True, **init: Any) -> WatchedServer:
    server = await WatchedServer.start("--data-dir", str(tmp / "state"), env=server_env(model.base_url))
    options = {"languageServers": language_server(tmp / "ls"), "languageTimeout": 30} if sidecar else {}
    await server.initialize(root, init_options={**options, **init},
                            agent=None if sidecar else {"languageFeatures": [
                                "textDocument/documentSymbol", "textDocument/references"]})
    return server


def result_text(block: dict) -> str:
    content = block.get("content")
    if isinstance(content, list):
        return "".join(c.get("text", "") for c in content if isinstance(c, dict))
    return content if isinstance(content, str) else ""


def results_of(model: FakeMessagesAPI, tool_id: str) -> list[dict]:
    """Every tool result the model was sent for the call `tool_id` (each request after it repeats it: the last)."""
    for body in reversed(model.requests):
        found = [b for m in body.get("messages", []) if m["role"] == "user" and isinstance(m["content"], list)
                 for b in m["content"] if b.get("type") == "tool_result" and b.get("tool_use_id") == tool_id]
        if found:
            return found
    return []


class Calls:
    """Chats of one call each on `server`, counted under `area`; `problems` says what went wrong."""

    def __init__(self, server: WatchedServer, model: FakeMessagesAPI, area: str) -> None:
        self.server, self.model, self.area = server, model, area
        self.n = 0
        self.args: Any = None
        self.problems: list[str] = []

    def problem(self, kind: str, what: str) -> None:
        tally(self.area, **{kind: 1})
        self.problems.append(what[:600])

    def script(self, tool: str, args: Any) -> tuple[str, str]:
        self.n += 1
        tool_id = f"toolu_{self.area.split(':')[0][:6].replace(' ', '')}{self.n}"
        self.model.add(tool_use(tool, args, id=tool_id), text("Done."))
        return f"call {self.n}: {tool}", tool_id

    async def finish(self, message: str, tool_id: str, future: asyncio.Future) -> Optional[dict]:
        """The one result of the call (None when the chat or its result went missing, counted)."""
        tally(self.area, cases=1)
        try:
            answer = await asyncio.wait_for(future, ANSWER_CEILING)
        except asyncio.TimeoutError:
            self.problem("hangs", f"{message}: no answer within {ANSWER_CEILING} s")
            return None
        except ConnectionError:
            self.problem("crashes", f"{message}: the server went away")
            return None
        result = answer.get("result") or {}
        self.model.script.clear()  # a chat that ended early leaves none of its replies to the next
        error = json.dumps(result.get("error") or {})
        if result.get("stopReason") == "error" and "parse tool parameter JSON" in error and has_surrogate(self.args):
            # the anthropic SDK refuses a tool call whose JSON holds a lone surrogate: the model's failure, shown
            return {"is_error": True, "content": error}
        if result.get("stopReason") != "end_turn" or result.get("finalMessage") != "Done.":
            self.problem("wrong", f"{message}: {json.dumps(answer)[:400]}")
        found = results_of(self.model, tool_id)
        if len(found) != 1:
            self.problem("lost", f"{message}: {len(found)} results")
            return None
        if "Traceback" in result_text(found[0]):
            self.problem("wrong", f"{message}: a traceback in {result_text(found[0])[:300]}")
        return found[0]

    def send(self, tool: str, args: Any) -> tuple[str, str, asyncio.Future]:
        self.args = args
        message, tool_id = self.script(tool, args)
        return message, tool_id, self.server.request_future("agent/chat", {"message": message, **BYPASS})

    async def call(self, tool: str, args: Any) -> Optional[dict]:
        return await self.finish(*self.send(tool, args))

    def check(self, ok: bool, what: str) -> None:
        if not ok:
            self.problem("wrong", what)


def tokens(text_now: str, name_path: Any) -> set[str]:
    """The tokens of the symbols `name_path` names in `text_now` (as the span rule cuts them)."""
    lines = Lines.of(text_now)
    try:
        found = matching(symbols_of(document_symbols(text_now), lines, True), name_path)
    except (ToolError, AttributeError, TypeError):
        return set()
    return {token_of(lines.text[lines.starts[s.start]:lines.end(s.end)]) for s in found}


def all_tokens(text_now: str) -> list[str]:
    lines = Lines.of(text_now)
    return sorted({token_of(lines.text[lines.starts[s.start]:lines.end(s.end)])
                   for s in symbols_of(document_symbols(text_now), lines, True)})


def compiles(source: str) -> bool:
    try:
        compile(source, "shop.py", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


# ---- inputs fuzzed -------------------------------------------------------------------------------------------

class Bench:
    """One server on a loop of its own (hypothesis drives plain functions), shop.py open in the client."""

    def __init__(self, tmp: Path) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.tmp = tmp
        self.model = FakeMessagesAPI().start()
        self.root = workspace_for(tmp)
        self.server = self.run(start(tmp, self.root, self.model))
        self.editor = Editor(self.server, self.root)
        self.uri = self.editor.open("shop.py", SHOP)
        self.calls = Calls(self.server, self.model, AREA_FUZZ)
        self.edited = self.refused = 0

    def run(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(ANSWER_CEILING * 3)

    def close(self) -> int:
        try:
            return self.run(self.server.stop())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
            self.model.stop()


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    b = Bench(tmp_path_factory.mktemp("symbols"))
    yield b
    code = b.close()
    tally(AREA_FUZZ, crashes=int(code != 0), wrong=len(b.server.tracebacks))
    assert code == 0, b.server.stderr.decode(errors="replace")[-3000:]
    assert not b.server.tracebacks, b.server.tracebacks[:3]


FUZZ = settings(max_examples=600 if LONG else 60, deadline=None, database=None, derandomize=not LONG,
                suppress_health_check=list(HealthCheck), print_blob=False, phases=[Phase.explicit, Phase.generate])


async def one_fuzzed(b: Bench, tool: str, args: dict) -> None:
    if b.editor.text(b.uri) != SHOP:  # each case on the file as it was
        b.editor.change(b.uri, SHOP)
    before = list(b.editor.docs[b.uri])
    name = args.get("anchor") if tool == "insert_symbol" else args.get("symbol")
    may = tokens(before[1], name) if isinstance(name, str) else set()
    if args.get("token") == S.OWN_TOKEN:
        args = {**args, "token": min(may) if may else "0" * 12}
    block = await b.calls.call(tool, args)
    if block is None:
        return
    after = b.editor.docs[b.uri]
    said = result_text(block)
    b.calls.check((b.tmp / "outside.py").read_text() == OUTSIDE and (b.root / "shop.py").read_text() == SHOP,
                  f"{tool} {args!r:.300}: a file on disk was written: {said[:200]}")
    b.calls.check(compiles(after[1]), f"{tool} {args!r:.300}: shop.py no longer compiles: {said[:200]}")
    if block.get("is_error"):
        b.refused += 1
        b.calls.check(after == before, f"{tool} {args!r:.300}: refused ({said[:200]}) yet edited")
        b.calls.check(bool(said.strip()), f"{tool} {args!r:.300}: an error that says nothing")
        return
    if after != before:
        b.edited += 1
        b.calls.check(tool in ("replace_symbol", "insert_symbol", "delete_symbol"),
                      f"{tool} {args!r:.300}: a tool that does not edit edited")
        token = args.get("token")
        b.calls.check(tool == "insert_symbol" or (isinstance(token, str) and token.strip() in may),
                      f"{tool} {args!r:.300}: edited with a token that is not the symbol's: {said[:200]}")
    if tool == "read_symbol":
        b.calls.check(said.startswith("shop.py:") and said.rsplit("\n", 1)[-1].startswith("index: "),
                      f"read_symbol {args!r:.300}: {said[:300]}")


@FUZZ
@given(call=S.symbol_call(all_tokens(SHOP)))
def test_inputs_fuzzed(bench, call):
    bench.run(one_fuzzed(bench, *call))
    assert bench.server.proc.returncode is None, bench.server.stderr.decode(errors="replace")[-3000:]
    assert not bench.calls.problems, bench.calls.problems[:5]


def test_the_fuzzed_calls_edited_and_refused(bench):
    """The fuzz both edited (valid calls among the hostile ones) and refused: neither side was empty."""
    print(f"symbol tools fuzzed: {bench.calls.n} calls, {bench.edited} edited, {bench.refused} refused")
    assert bench.refused > 0
    named = [("read_symbol", {"path": "shop.py", "symbol": "price"}),
             ("replace_symbol", {"path": "shop.py", "symbol": "Cart/total", "token": next(iter(tokens(SHOP, "total"))),
                                 "body": "@property\ndef total(self):\n    return 0\n"}),
             ("insert_symbol", {"path": "shop.py", "anchor": "helper", "where": "after",
                                "text": "def \ud800x():\n    return '\x00'\n"}),
             ("replace_symbol", {"path": "link.py", "symbol": "SECRET", "token": "0" * 12, "body": "SECRET = 2"}),
             ("replace_symbol", {"path": "shop.py", "symbol": "price", "token": next(iter(tokens(SHOP, "helper"))),
                                 "body": "def price(item):\n    return 2\n"})]
    edited = bench.edited
    for tool, args in named:
        bench.run(one_fuzzed(bench, tool, args))
    assert not bench.calls.problems, bench.calls.problems[:5]
    assert bench.edited >= edited + 1  # the valid replace went through


# ---- the user typing inside the symbol between read and edit ----------------------------------------------

TYPED = {  # where the user types: (the line as it was, as typed), and whether it lies inside `price`
    "in its body": (("    return 1\n", "    return 1  # the user's\n"), True),
    "in its decorator": (("@functools.lru_cache\n", "@functools.lru_cache(maxsize=8)\n"), True),
    "elsewhere": (('    return price("h")\n', '    return price("hh")\n'), False),
}
EDITS = {
    "replace_symbol": ({"body": "@functools.lru_cache\ndef price(item):\n    return 2\n"},
                       SHOP.replace("    return 1\n", "    return 2\n")),
    "delete_symbol": ({"force": True}, SHOP.replace(
        "# prices are cached\n@functools.lru_cache\ndef price(item):\n    return 1\n\n\n", "")),
}


def typing_model(edit_tool: str, edit_args: dict, asked: threading.Event, typed: threading.Event) -> Callable:
    """The model: read_symbol price; once read, it waits (the user types meanwhile) and then edits with the
    token it read; then it is done."""
    def reply(body: dict) -> dict:
        last = body["messages"][-1]["content"]
        results = [b for b in last if isinstance(b, dict) and b.get("type") == "tool_result"] \
            if isinstance(last, list) else []
        if not results:
            return tool_use("read_symbol", {"path": "shop.py", "symbol": "price"}, id="toolu_read")
        if results[0]["tool_use_id"] == "toolu_read":
            token = re.search(r"token=(\w+)", result_text(results[0])).group(1)
            asked.set()
            typed.wait(ANSWER_CEILING)
            return tool_use(edit_tool, {"path": "shop.py", "symbol": "price", "token": token, **edit_args},
                            id="toolu_edit")
        return text("Done.")
    return reply


async def test_the_user_typing_inside_the_symbol_between_read_and_edit(tmp_path, long_run):
    model = FakeMessagesAPI().start()
    root = workspace_for(tmp_path)
    server = await start(tmp_path, root, model)
    problems: list[str] = []
    try:
        editor = Editor(server, root)
        rounds = 5 if long_run else 1
        for n in range(rounds):
            for moment in ("while the model thinks", "as the edit arrives"):
                for where, ((was, now), inside) in TYPED.items():
                    for tool, (args, agent_text) in EDITS.items():
                        case = f"{tool}, typing {where} {moment} (round {n})"
                        tally(AREA_TYPING, cases=1)
                        problems += await one_typing(server, model, editor, case, tool, args, agent_text,
                                                     (was, now), inside, moment)
        alive = server.proc.returncode is None
        tally(AREA_TYPING, crashes=int(not alive), wrong=len(server.tracebacks))
        assert alive and not server.tracebacks, (server.tracebacks[:2], server.stderr[-2000:])
        assert not problems, problems[:5]
    finally:
        await server.stop()
        model.stop()


async def one_typing(server: WatchedServer, model: FakeMessagesAPI, editor: Editor, case: str, tool: str,
                     args: dict, agent_text: str, typing: tuple[str, str], inside: bool, moment: str) -> list[str]:
    """One chat: read price, the user types, the model edits with the token it read. The user's keystroke is
    always kept; inside the symbol the edit is refused; elsewhere the agent's edit is applied beside it."""
    uri = (editor.root / "shop.py").as_uri()
    if uri in editor.docs:
        editor.change(uri, SHOP)
    else:
        editor.open("shop.py", SHOP)
    asked, typed = threading.Event(), threading.Event()
    model.default = typing_model(tool, args, asked, typed)
    was, now = typing

    def keystroke() -> None:
        editor.change(uri, editor.text(uri).replace(was, now, 1))

    future = server.request_future("agent/chat", {"message": case, **BYPASS})
    try:
        await until(asked.is_set, ANSWER_CEILING, "the model to read the symbol")
        if moment == "while the model thinks":
            keystroke()
            await server.request("agent/completionStats", {})  # the didChange is read before this answers
        else:
            editor.before_apply = keystroke
        typed.set()
        answer = await asyncio.wait_for(future, ANSWER_CEILING)
    except (TimeoutError, asyncio.TimeoutError):
        typed.set()
        tally(AREA_TYPING, hangs=1)
        return [f"{case}: no answer"]
    finally:
        model.default = None
    found = results_of(model, "toolu_edit")
    if len(found) != 1 or (answer.get("result") or {}).get("finalMessage") != "Done.":
        tally(AREA_TYPING, lost=1)
        return [f"{case}: {answer}, results {found}"]
    said, refused = result_text(found[0]), bool(found[0].get("is_error"))
    buffer = editor.text(uri)
    editor.before_apply = None
    user_kept = now in buffer
    if moment == "while the model thinks" and inside:
        ok = refused and buffer == SHOP.replace(was, now, 1) and "changed since it was read" in said
    elif moment == "while the model thinks":  # the token still holds: applied to the text with the user's edit
        ok = not refused and buffer == agent_text.replace(was, now, 1)
    elif refused:  # refused (the editor held a newer version): nothing of the agent's, the user's text kept
        ok = buffer == SHOP.replace(was, now, 1)
    else:  # applied: to the user's current text, which it kept
        ok = not inside and user_kept and buffer == agent_text.replace(was, now, 1)
    if not ok:
        tally(AREA_TYPING, wrong=1)
        return [f"{case}: refused={refused} {said[:300]!r}; buffer {buffer!r}"]
    return []


# ---- a language server killed mid-call -------------------------------------------------------------------

KILLS = [  # (the tool called, its arguments but the token, the method held and killed in, read first)
    ("read_symbol", {"symbol": "price"}, "textDocument/documentSymbol", False),
    ("replace_symbol", {"symbol": "price", "body": "@functools.lru_cache\ndef price(item):\n    return 2\n"},
     "textDocument/documentSymbol", True),
    ("insert_symbol", {"anchor": "helper", "where": "after", "text": "def extra():\n    return 3\n"},
     "textDocument/documentSymbol", False),
    ("delete_symbol", {"symbol": "helper"}, "textDocument/references", True),
    ("impact", {"targets": [{"path": "shop.py", "symbol": "price"}]}, "textDocument/references", False),
]


def log_lines(out: Path) -> list[str]:
    try:
        return (out / "log").read_text().splitlines()
    except OSError:
        return []


@pytest.mark.parametrize("tool,args,method,read_first", KILLS, ids=[k[0] for k in KILLS])
async def test_a_language_server_killed_mid_call(tmp_path, tool, args, method, read_first):
    model = FakeMessagesAPI().start()
    root = workspace_for(tmp_path)
    out = tmp_path / "ls"
    server = await start(tmp_path, root, model)
    calls = Calls(server, model, AREA_KILLED)
    try:
        editor = Editor(server, root)
        uri = editor.open("shop.py", SHOP)
        if read_first:
            read = await calls.call("read_symbol", {"path": "shop.py", "symbol": args["symbol"]})
            args = {**args, "token": re.search(r"token=(\w+)", result_text(read or {}) or "token=x").group(1)}
        args = args if tool == "impact" else {"path": "shop.py", **args}
        asked_before = sum(line.startswith(method + " ") for line in log_lines(out))
        out.mkdir(exist_ok=True)
        (out / "hold").write_text(method)
        message, tool_id, future = calls.send(tool, args)
        await until(lambda: sum(line.startswith(method + " ") for line in log_lines(out)) > asked_before,
                    ANSWER_CEILING, f"{method} sent to the language server")
        pid = int([line for line in log_lines(out) if line.startswith("start ")][-1].split()[1])
        os.kill(pid, signal.SIGKILL)
        (out / "hold").unlink()
        block = await calls.finish(message, tool_id, future)
        said = result_text(block or {})
        # impact names the section it could not give (its other sections stand); the others fail whole
        calls.check(block is not None and bool(block.get("is_error")) == (tool != "impact")
                    and "`py` stopped while answering" in said and "references: 0" not in said,
                    f"{tool} killed in {method}: {block}")
        calls.check(editor.docs[uri] == [1, SHOP], f"{tool} killed in {method}: edited {editor.docs[uri]}")
        again = await calls.call(tool, args)  # the language server started again answers it
        calls.check(again is not None and not again.get("is_error"), f"{tool} after the restart: {again}")
        starts = [line for line in log_lines(out) if line.startswith("start ")]
        calls.check(len(starts) == 2, f"{tool}: started {starts}")
        alive = server.proc.returncode is None
        tally(AREA_KILLED, crashes=int(not alive), wrong=len(server.tracebacks))
        assert alive and not server.tracebacks, server.tracebacks[:2]
        assert not calls.problems, calls.problems
    finally:
        await server.stop()
        model.stop()


# ---- an index not ready ----------------------------------------------------------------------------------

async def test_an_index_not_ready_is_said_and_proves_nothing(tmp_path):
    """Three ways: a language server whose `$/progress` never ends; the editor's own servers said `loading` by
    agent/languageStatus (then `ready`); a closed file changed on disk between two reads."""
    model = FakeMessagesAPI().start()
    problems: list[str] = []
    try:
        for route in ("a language server still indexing", "the editor's servers loading"):
            sub = tmp_path / route.split()[1]
            root = workspace_for(sub)
            (sub / "ls").mkdir()
            (sub / "ls" / "loading").write_text("")
            sidecar = route.startswith("a language")
            server = await start(sub, root, model, sidecar=sidecar)
            editor = Editor(server, root)
            uri = editor.open("shop.py", SHOP)
            if not sidecar:
                server.handlers["agent/languageFeature"] = lambda p: editor_feature(editor, p)
                server.notify("agent/languageStatus", {"server": "pyls", "state": "loading"})
            calls = Calls(server, model, AREA_INDEX)
            read = await calls.call("read_symbol", {"path": "shop.py", "symbol": "helper"})
            token = re.search(r"token=(\w+)", result_text(read or {}) or "token=x").group(1)
            last = result_text(read or {}).rsplit("\n", 1)[-1]
            calls.check(last.startswith("index: loading"), f"{route}: read says {last!r}")
            missing = await calls.call("read_symbol", {"path": "shop.py", "symbol": "nothing"})
            calls.check(bool(missing and missing.get("is_error")) and "index: loading" in result_text(missing),
                        f"{route}: an unknown symbol: {missing}")
            gone = await calls.call("delete_symbol", {"path": "shop.py", "symbol": "helper", "token": token})
            calls.check(bool(gone and gone.get("is_error")) and "proves nothing" in result_text(gone)
                        and editor.docs[uri] == [1, SHOP], f"{route}: delete while loading: {gone}")
            if not sidecar:  # the editor says ready: now the delete is proved
                server.notify("agent/languageStatus", {"server": "pyls", "state": "ready"})
                gone = await calls.call("delete_symbol", {"path": "shop.py", "symbol": "helper", "token": token})
                calls.check(bool(gone and not gone.get("is_error")) and "def helper" not in editor.text(uri),
                            f"{route}: delete once ready: {gone}")
            else:  # a closed file changed on disk between two reads is read as it is now
                (root / "tools.py").write_text("def tool():\n    return 1\n")
                first = await calls.call("read_symbol", {"path": "tools.py", "symbol": "tool"})
                (root / "tools.py").write_text("# moved\n\n\ndef tool(x):\n    return x\n")
                second = await calls.call("read_symbol", {"path": "tools.py", "symbol": "tool"})
                calls.check("1\tdef tool():" in result_text(first or {}) and
                            "4\tdef tool(x):" in result_text(second or {}) and
                            "5\t    return x" in result_text(second or {}),
                            f"{route}: a file changed on disk: {first} then {second}")
            alive = server.proc.returncode is None
            tally(AREA_INDEX, crashes=int(not alive), wrong=len(server.tracebacks))
            problems += calls.problems + server.tracebacks[:2]
            await server.stop()
        assert not problems, problems
    finally:
        model.stop()


def editor_feature(editor: Editor, params: dict) -> Any:
    """The editor's own language servers (agent/languageFeature): symbols of its buffer, references by word."""
    uri = params["params"]["textDocument"]["uri"]
    text_now = editor.docs[uri][1] if uri in editor.docs else Path(unquote(urlparse(uri).path)).read_text()
    if params["method"] == "textDocument/documentSymbol":
        return document_symbols(text_now)
    if params["method"] == "textDocument/references":
        position = params["params"]["position"]
        line = re.split(r"\r\n|\r|\n", text_now)[position["line"]]
        word = re.match(r"\w*", line[position["character"]:]).group()
        return [{"uri": uri, "range": {"start": {"line": n, "character": m.start()},
                                       "end": {"line": n, "character": m.end()}}}
                for n, row in enumerate(re.split(r"\r\n|\r|\n", text_now))
                for m in re.finditer(rf"\b{re.escape(word)}\b", row) if (n, m.start()) != (
                    position["line"], position["character"])]
    return None
