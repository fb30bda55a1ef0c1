"""Language servers of agent-lsp's own (the `languageServers` setting) through the LanguageFeatures port: a real
jedi-language-server on a small Python workspace, and tests/fakes/language_server.py where a fault must be made
to happen (a server that never answers, one that speaks UTF-16)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agent_lsp.config import clean
from agent_lsp.core.ports import LANGUAGE_METHODS, IndexStatus, LanguageFeatureError
from agent_lsp.sidecar import SidecarLanguageFeatures
from tests.waiting import until
from tests.fakes.editor import FakeEditor

JEDI = str(Path(sys.executable).parent / "jedi-language-server")
BASEDPYRIGHT = str(Path(sys.executable).parent / "basedpyright-langserver")
FAKE = str(Path(__file__).parents[1] / "fakes" / "language_server.py")

LIB = textwrap.dedent('''\
    def load(name):
        """Load a thing by name."""
        return name


    class Store:
        def get(self, key):
            return load(key)
''')
APP = textwrap.dedent('''\
    from lib import Store, load

    label = "😀 café"; value = load(label)
    Store().get("k")
''')
LOAD_IN_APP = (2, 27)
"""(line, character) of `load` after the emoji on APP's third line, 0-based, in characters."""


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    (root / "lib.py").write_text(LIB)
    (root / "app.py").write_text(APP)
    (root / "notes.txt").write_text("load\n")
    return root


def language_servers(value: dict) -> dict:
    """The `languageServers` setting's servers as a settings layer keeps them (config.clean)."""
    return clean({"languageServers": value}, "the test")[0]["language_servers"]


class Sidecar:
    """A SidecarLanguageFeatures on `root` with a FakeEditor, and the warnings it gave."""

    def __init__(self, root: Path, servers: dict, timeout: float = 30.0, **options) -> None:
        self.root = root
        self.editor = FakeEditor(root)
        self.warnings: list[str] = []
        self.port = SidecarLanguageFeatures(language_servers(servers), [root], lambda: self.editor,
                                            self.warnings.append, timeout, **options)

    def at(self, name: str, line: int, character: int, **extra) -> dict:
        return {"textDocument": {"uri": (self.root / name).as_uri()},
                "position": {"line": line, "character": character}, **extra}

    async def references(self, name: str, line: int, character: int) -> list[tuple[str, int, int]]:
        found = await self.port.request("textDocument/references",
                                         self.at(name, line, character, context={"includeDeclaration": True}),
                                         self.root / name)
        return sorted((Path(r["uri"][7:]).name, r["range"]["start"]["line"], r["range"]["start"]["character"])
                      for r in found)


@pytest.fixture
async def jedi(workspace: Path):
    sidecar = Sidecar(workspace, {"jedi": {"command": [JEDI], "languages": ["python"]}})
    yield sidecar
    await sidecar.port.close()


def rng(line: int, start: int, end: int) -> dict:
    return {"start": {"line": line, "character": start}, "end": {"line": line, "character": end}}


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


# ---- answers ------------------------------------------------------------------------------------------------


async def test_tools_are_offered_before_start_and_narrowed_to_what_the_server_supports(jedi):
    app = jedi.root / "app.py"
    assert jedi.port.methods(app) == {m: "languageServer:jedi" for m in LANGUAGE_METHODS}
    assert jedi.port.methods(None) == {m: "languageServer:jedi" for m in LANGUAGE_METHODS}
    assert jedi.port.methods(jedi.root / "notes.txt") == {}
    assert jedi.port.running() == {}

    with pytest.raises(LanguageFeatureError) as caught:
        await jedi.port.request("textDocument/prepareCallHierarchy", jedi.at("app.py", *LOAD_IN_APP), app)
    assert str(caught.value) == "language server `jedi` does not support textDocument/prepareCallHierarchy"
    supported = {"textDocument/definition", "textDocument/typeDefinition", "textDocument/references",
                 "textDocument/hover", "textDocument/documentSymbol", "workspace/symbol", "textDocument/rename"}
    assert jedi.port.methods(app) == {m: "languageServer:jedi" for m in LANGUAGE_METHODS if m in supported}
    assert list(jedi.port.running()) == [(jedi.root, "jedi")]


async def test_definition_references_and_hover_in_characters_after_an_emoji(jedi):
    app = jedi.root / "app.py"
    assert await jedi.port.request("textDocument/definition", jedi.at("app.py", *LOAD_IN_APP), app) == [
        {"uri": (jedi.root / "lib.py").as_uri(), "range": rng(0, 4, 8)}]
    assert await jedi.references("app.py", *LOAD_IN_APP) == [
        ("app.py", 0, 23), ("app.py", 2, 26), ("lib.py", 0, 4), ("lib.py", 7, 15)]
    hover = await jedi.port.request("textDocument/hover", jedi.at("app.py", *LOAD_IN_APP), app)
    assert hover["range"] == rng(2, 26, 30)
    assert "def load(name)" in hover["contents"]["value"] and "Load a thing by name." in hover["contents"]["value"]


async def test_symbols_of_a_document_and_of_the_workspace(jedi):
    lib = jedi.root / "lib.py"
    outline = await jedi.port.request("textDocument/documentSymbol", {"textDocument": {"uri": lib.as_uri()}}, lib)
    assert [(s["name"], s["kind"], [c["name"] for c in s["children"]]) for s in outline] == [
        ("load", 12, []), ("Store", 5, ["get"])]
    found = await jedi.port.request("workspace/symbol", {"query": "Store"})
    assert [(s["name"], s["location"]["uri"], s["location"]["range"]) for s in found] == [
        ("Store", lib.as_uri(), rng(5, 6, 11))]


async def test_rename_answers_the_servers_workspace_edit_in_characters(jedi):
    edit = await jedi.port.request("textDocument/rename", jedi.at("app.py", *LOAD_IN_APP, newName="fetch"),
                                   jedi.root / "app.py")
    assert sorted((Path(c["textDocument"]["uri"][7:]).name, e["range"]["start"]["line"],
                   e["range"]["start"]["character"], e["newText"])
                  for c in edit["documentChanges"] for e in c["edits"]) == [
        ("app.py", 0, 23, "fetch"), ("app.py", 2, 26, "fetch"), ("lib.py", 0, 4, "fetch"), ("lib.py", 7, 15, "fetch")]
    assert (jedi.root / "lib.py").read_text() == LIB  # the port applies nothing
    assert [c["textDocument"]["version"] for c in edit["documentChanges"]] == [None, None]  # neither is open

    jedi.editor.open("lib.py", LIB, version=7)
    edit = await jedi.port.request("textDocument/rename", jedi.at("lib.py", 0, 5, newName="fetch"),
                                   jedi.root / "lib.py")
    assert sorted((Path(c["textDocument"]["uri"][7:]).name, c["textDocument"]["version"])
                  for c in edit["documentChanges"]) == [("app.py", None), ("lib.py", 7)]


async def test_the_editors_unsaved_text_is_what_the_server_sees(jedi):
    lib = jedi.root / "lib.py"
    jedi.editor.open("lib.py", LIB + "\n\nload(1)\n")
    assert ("lib.py", 10, 0) in await jedi.references("lib.py", 0, 5)

    jedi.editor.buffers[lib] = LIB + "\n\n\nload(2)\n"  # typed on: didChange
    jedi.editor.versions[lib] += 1
    refs = await jedi.references("lib.py", 0, 5)
    assert ("lib.py", 11, 0) in refs and ("lib.py", 10, 0) not in refs

    del jedi.editor.buffers[lib]  # closed unsaved: the file on disk again
    assert await jedi.references("lib.py", 0, 5) == [
        ("app.py", 0, 23), ("app.py", 2, 26), ("lib.py", 0, 4), ("lib.py", 7, 15)]


async def test_a_file_changed_on_disk_is_seen_changed(jedi):
    assert len(await jedi.references("lib.py", 0, 5)) == 4
    (jedi.root / "lib.py").write_text(LIB + "\n\nload(3)\nload(4)\n")
    assert [r for r in await jedi.references("lib.py", 0, 5) if r[1] >= 10] == [("lib.py", 10, 0), ("lib.py", 11, 0)]


async def test_call_hierarchy_in_characters_from_a_server_that_speaks_only_utf16(workspace):
    sidecar = Sidecar(workspace, {"basedpyright": {"command": [BASEDPYRIGHT, "--stdio"], "languages": ["python"]}})
    try:
        lib = workspace / "lib.py"
        items = await sidecar.port.request("textDocument/prepareCallHierarchy", sidecar.at("lib.py", 0, 5), lib)
        assert [(i["name"], i["uri"], i["selectionRange"]) for i in items] == [("load", lib.as_uri(), rng(0, 4, 8))]
        calls = await sidecar.port.request("callHierarchy/incomingCalls", {"item": items[0]})
        assert sorted((Path(c["from"]["uri"]).name, c["from"]["name"], c["fromRanges"]) for c in calls) == [
            ("app.py", "(module) app.py", [rng(2, 26, 30)]), ("lib.py", "get", [rng(7, 15, 19)])]
        assert await sidecar.port.request("textDocument/definition", sidecar.at("app.py", *LOAD_IN_APP)) == [
            {"uri": lib.as_uri(), "range": rng(0, 4, 8)}]
        assert sidecar.port.methods(lib)["callHierarchy/incomingCalls"] == "languageServer:basedpyright"
    finally:
        await sidecar.port.close()


async def test_positions_convert_from_utf16_when_the_server_speaks_it(workspace):
    (workspace / "emoji.py").write_text('x = "😀😀"; fn()\n\ndef fn():\n    pass\n\n"😀"; fn\n')
    sidecar = Sidecar(workspace, {"fake": {"command": [sys.executable, FAKE], "languages": [".py"]}},
                      encodings=("utf-16",))
    try:
        path = workspace / "emoji.py"
        assert await sidecar.port.request("textDocument/definition", sidecar.at("emoji.py", 5, 6), path) == {
            "uri": path.as_uri(), "range": rng(2, 4, 6)}
        sidecar.editor.open("emoji.py", '"😀😀😀"; fn\n\n\ndef fn(): ...\n')
        assert await sidecar.port.request("textDocument/definition", sidecar.at("emoji.py", 0, 7), path) == {
            "uri": path.as_uri(), "range": rng(3, 4, 6)}
    finally:
        await sidecar.port.close()


# ---- faults -------------------------------------------------------------------------------------------------


async def test_a_missing_command_is_a_warning_and_offers_nothing(workspace):
    sidecar = Sidecar(workspace, {"ghost": {"command": ["no-such-language-server", "--stdio"],
                                            "languages": ["python"]}})
    assert sidecar.warnings == ["agent-lsp: language server `ghost`: command `no-such-language-server` was not "
                                "found; its tools are not offered."]
    assert sidecar.port.methods(workspace / "app.py") == {} and sidecar.port.methods() == {}
    with pytest.raises(LanguageFeatureError) as caught:
        await sidecar.port.request("textDocument/definition", sidecar.at("app.py", *LOAD_IN_APP))
    assert str(caught.value) == "language server `ghost`: command `no-such-language-server` was not found"
    with pytest.raises(LanguageFeatureError, match="no language server is configured for notes.txt"):
        await sidecar.port.request("textDocument/definition", sidecar.at("notes.txt", 0, 0))
    await sidecar.port.close()


async def test_a_killed_server_restarts_once_then_is_withdrawn_with_a_warning(jedi):
    app = jedi.root / "app.py"
    await jedi.references("app.py", *LOAD_IN_APP)
    first = jedi.port.running()[(jedi.root, "jedi")]
    os.kill(first, signal.SIGKILL)
    await until(lambda: jedi.port.running().get((jedi.root, "jedi")) not in (None, first))
    second = jedi.port.running()[(jedi.root, "jedi")]
    assert len(await jedi.references("app.py", *LOAD_IN_APP)) == 4
    assert jedi.warnings == []

    os.kill(second, signal.SIGKILL)
    await until(lambda: jedi.warnings)
    assert jedi.warnings == [f"agent-lsp: language server `jedi` ({JEDI}) stopped again (exit code -9) in "
                             f"{jedi.root}; its tools are withdrawn."]
    assert jedi.port.methods(app) == {} and jedi.port.running() == {}
    with pytest.raises(LanguageFeatureError, match="language server `jedi` stopped twice and was withdrawn"):
        await jedi.port.request("textDocument/definition", jedi.at("app.py", *LOAD_IN_APP), app)


async def test_a_server_that_cannot_start_is_tried_twice_then_withdrawn(workspace):
    crash = [sys.executable, "-c", "import sys; print('no config here', file=sys.stderr); sys.exit(3)"]
    sidecar = Sidecar(workspace, {"broken": {"command": crash, "languages": ["python"]}})
    with pytest.raises(LanguageFeatureError) as caught:
        await sidecar.port.request("textDocument/definition", sidecar.at("app.py", 0, 0))
    assert str(caught.value) == ("language server `broken` stopped while answering initialize "
                                 "(it said: no config here)")
    await until(lambda: sidecar.warnings)
    assert sidecar.warnings == [f"agent-lsp: language server `broken` ({' '.join(crash)}) stopped again (exit code "
                                f"3) in {workspace}; its tools are withdrawn."]
    assert sidecar.port.methods(workspace / "app.py") == {} and sidecar.port.running() == {}
    await sidecar.port.close()


async def test_a_silent_server_times_out_and_a_cancelled_caller_leaves_nothing_pending(workspace):
    sidecar = Sidecar(workspace, {"fake": {"command": [sys.executable, FAKE], "languages": ["python"]}})
    port, path = sidecar.port, workspace / "app.py"

    async def records() -> list[str]:
        return [s["name"] for s in await port.request("workspace/symbol", {"query": ""})]

    try:
        await records()  # started
        port.timeout = 1.0  # the timeout must fire here; a ceiling again afterwards
        with pytest.raises(LanguageFeatureError) as caught:
            await port.request("textDocument/hover", sidecar.at("app.py", 0, 0), path)
        port.timeout = 30.0
        assert str(caught.value) == "language server `fake` did not answer textDocument/hover within 1 s"
        assert port.pending() == 0

        asking = asyncio.ensure_future(port.request("textDocument/hover", sidecar.at("app.py", 0, 0), path))
        seen: list[str] = []
        while "hover:2" not in seen:
            seen = await records()
        asking.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asking
        assert port.pending() == 0
        while "cancelled:2" not in seen:
            seen = await records()
        assert seen == ["hover:1", "cancelled:1", "hover:2", "cancelled:2"]
    finally:
        await port.close()


async def test_close_stops_every_server(jedi):
    await jedi.references("app.py", *LOAD_IN_APP)
    pid = jedi.port.running()[(jedi.root, "jedi")]
    await jedi.port.close()
    assert not alive(pid) and jedi.port.running() == {} and jedi.port.methods() == {}
    with pytest.raises(LanguageFeatureError, match="language servers are stopped"):
        await jedi.references("app.py", *LOAD_IN_APP)


DRIVER = textwrap.dedent('''\
    import asyncio, json, sys
    from pathlib import Path
    from agent_lsp.config import clean
    from agent_lsp.sidecar import SidecarLanguageFeatures

    async def main():
        root = Path(sys.argv[1])
        servers, _ = clean({"languageServers": {"it": {"command": json.loads(sys.argv[2]), "languages": ["python"]}}},
                           "the driver")
        port = SidecarLanguageFeatures(servers["language_servers"], [root], lambda: None, print, 30.0)
        await port.request("textDocument/definition", {"textDocument": {"uri": (root / "lib.py").as_uri()},
                                                       "position": {"line": 0, "character": 5}})
        print(*port.running().values(), flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())
''')


@pytest.mark.parametrize("command", [[JEDI], [sys.executable, FAKE, "--stubborn"]], ids=["jedi", "stubborn"])
async def test_a_sigkilled_agent_lsp_leaves_no_language_server_behind(workspace, command):
    """A process of our own stands for agent-lsp: it starts a server through the sidecar, prints its pid, and is
    SIGKILLed; the kernel's parent-death signal takes the server down, even one that outlives its stdin."""
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, str(workspace), json.dumps(command)],
                              stdout=subprocess.PIPE, text=True)
    try:
        child = int(await asyncio.to_thread(driver.stdout.readline))
        assert alive(child)
    finally:
        driver.kill()
        driver.wait()
    await until(lambda: not alive(child))


async def test_the_pool_keeps_the_sidecar_while_the_settings_stay_and_replaces_it_when_they_change(workspace):
    from agent_lsp.sidecar import SidecarPool

    warnings: list[str] = []
    pool = SidecarPool(lambda: None, warnings.append)
    jedi = language_servers({"jedi": {"command": [JEDI], "languages": ["python"]}})
    first = await pool.get(jedi, [workspace], 5.0)
    assert first is not None and await pool.get(dict(jedi), [workspace], 9.0) is first and first.timeout == 9.0
    await first.request("textDocument/definition", {"textDocument": {"uri": (workspace / "app.py").as_uri()},
                                                    "position": {"line": 0, "character": 24}})
    pid = first.running()[(workspace, "jedi")]

    ghost = language_servers({"ghost": {"command": ["no-such-language-server"], "languages": ["python"]}})
    second = await pool.get(ghost, [workspace], 9.0)
    assert second is not first and second.methods() == {}
    assert warnings == ["agent-lsp: language server `ghost`: command `no-such-language-server` was not found; "
                        "its tools are not offered."]
    assert await pool.get({}, [workspace], 9.0) is None
    await pool.close()
    assert not alive(pid)


async def test_tools_are_offered_for_the_languages_the_workspace_has(tmp_path):
    root = tmp_path.resolve()
    (root / "src").mkdir()
    (root / "src" / "main.go").write_text("package main\n")
    servers = {"jedi": {"command": [JEDI], "languages": ["python"]},
               "gopls-ish": {"command": [JEDI], "languages": [".go"]}}
    sidecar = Sidecar(root, servers)
    await sidecar.port.prepare()
    assert set(sidecar.port.methods().values()) == {"languageServer:gopls-ish"}  # no Python file here
    assert set(sidecar.port.methods(root / "new.py").values()) == {"languageServer:jedi"}
    sidecar.editor.open("scratch.py", "x = 1\n")  # a Python buffer: Python's tools for the workspace too
    assert set(sidecar.port.methods().values()) == {"languageServer:jedi"}  # per method, the first configured
    await sidecar.port.close()

    unknown = Sidecar(root, {"other": {"command": [JEDI], "languages": ["some-language"]}})
    await unknown.port.prepare()
    assert set(unknown.port.methods().values()) == {"languageServer:other"}  # no extension known: offered
    await unknown.port.close()


async def test_the_workspace_is_looked_at_in_a_thread_once_while_the_loop_goes_on(tmp_path):
    root = tmp_path.resolve()
    for n in range(50):  # a folder of 5,000 entries, none of them Python
        (root / f"d{n}").mkdir()
        for m in range(99):
            (root / f"d{n}" / f"f{m}.txt").touch()
    sidecar = Sidecar(root, {"jedi": {"command": [JEDI], "languages": ["python"]}})
    # methods() never scans: before prepare() the server counts (as before it starts)
    assert set(sidecar.port.methods().values()) == {"languageServer:jedi"}
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0)
            ticks += 1

    ticking = asyncio.ensure_future(ticker())
    await asyncio.sleep(0)
    before = ticks
    await sidecar.port.prepare()  # a synchronous scan would return without the ticker running once
    looked = ticks
    ticking.cancel()
    assert looked > before and sidecar.port.methods() == {}
    (root / "late.py").touch()  # looked at once: the answer stays (a server offered for it per file)
    await sidecar.port.prepare()
    assert sidecar.port.methods() == {} and set(sidecar.port.methods(root / "late.py").values()) == {
        "languageServer:jedi"}
    await sidecar.port.close()


async def test_the_server_is_told_its_initialization_options_and_asks_for_its_settings(workspace):
    sidecar = Sidecar(workspace, {"fake": {
        "command": [sys.executable, FAKE], "languages": ["python"], "initializationOptions": {"fast": True},
        "settings": {"python": {"analysis": {"mode": "strict"}}, "fake.flat": 1}}})

    async def ask(query: str):
        return json.loads((await sidecar.port.request("workspace/symbol", {"query": query}))[0]["name"])

    try:
        assert await ask("init") == {"fast": True}
        assert await ask("config:python.analysis") == [{"mode": "strict"}]
        assert await ask("config:fake.flat") == [1]
        assert await ask("config:nothing.here") == [None]
        assert await ask("config:") == [{"python": {"analysis": {"mode": "strict"}}, "fake.flat": 1}]
    finally:
        await sidecar.port.close()


async def test_a_server_gets_no_credentials(workspace, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret")
    monkeypatch.setenv("SIDECAR_PLAIN", "kept")
    sidecar = Sidecar(workspace, {"fake": {"command": [sys.executable, FAKE], "languages": ["python"]}})
    try:
        await sidecar.port.request("textDocument/definition", sidecar.at("app.py", 0, 0))
        pid = sidecar.port.running()[(workspace, "fake")]
        environ = dict(item.split("=", 1) for item in Path(f"/proc/{pid}/environ").read_text().split("\0") if item)
        assert "ANTHROPIC_API_KEY" not in environ and environ["SIDECAR_PLAIN"] == "kept"
    finally:
        await sidecar.port.close()


# ---- how much the index knows -------------------------------------------------------------------------------


async def test_the_index_is_loading_while_progress_or_server_status_says_so_and_ready_once_done(workspace):
    sidecar = Sidecar(workspace, {"fake": {"command": [sys.executable, FAKE], "languages": ["python"]}})
    port, lib = sidecar.port, workspace / "lib.py"
    try:
        assert port.index(lib).state == "loading"  # not started: it has not answered initialize
        await port.request("workspace/symbol", {"query": "nothing"})
        assert port.index(lib) == IndexStatus("unknown", "`fake` reports nothing of its indexing")
        await port.request("workspace/symbol", {"query": "progress:begin"})
        await until(lambda: port.index(lib).state == "loading")
        assert port.index(lib).why == "`fake` reports work under way: Indexing"
        await port.request("workspace/symbol", {"query": "progress:end"})
        await until(lambda: port.index(lib).state == "ready")
        assert port.index(lib).why == "`fake` reported its work done"
        await port.request("workspace/symbol", {"query": "status:busy"})
        await until(lambda: port.index(lib).state == "loading")
        assert port.index(lib).why == "`fake` is busy: Fetching metadata"
        await port.request("workspace/symbol", {"query": "status:quiescent"})
        await until(lambda: port.index(lib).state == "ready")
    finally:
        await port.close()


async def test_files_changed_on_disk_are_told_before_the_next_request_and_stale_until_then(workspace):
    sidecar = Sidecar(workspace, {"fake": {"command": [sys.executable, FAKE], "languages": ["python"]}})
    port = sidecar.port

    async def watched() -> list:
        return json.loads((await port.request("workspace/symbol", {"query": "watched"}))[0]["name"])

    try:
        assert await watched() == []
        (workspace / "new.py").write_text("x = 1\n")
        (workspace / "notes.txt").write_text("not python\n")
        port.disk_changed(None)  # a command ran: which files it wrote is not known
        assert port.index(workspace / "lib.py") == IndexStatus("stale", "files changed on disk that `fake` was not "
                                                                         "told of yet")
        assert await watched() == [[["new.py", 2]]]
        (workspace / "app.py").unlink()
        port.disk_changed([workspace / "app.py"])  # a revert, a write to a closed file: the file is known
        assert await watched() == [[["new.py", 2]], [["app.py", 3]]]
        assert port.index(workspace / "lib.py").state == "unknown"
    finally:
        await port.close()


async def test_jedi_reports_nothing_of_its_index(jedi):
    await jedi.references("lib.py", 0, 5)
    assert jedi.port.index(jedi.root / "lib.py") == IndexStatus("unknown", "`jedi` reports nothing of its indexing",
                                                                reference_files=30)
