"""find_references on a real code base: the source tree of `click` (pinned in the [test] extra) copied to a
scratch workspace, 20 of its functions, classes and methods picked with a fixed seed.

For each symbol, jedi-language-server asked directly (its own answer, and its own answer time) beside
agent-lsp's `find_references` through the sidecar (the `languageServers` setting) and through an editor
stand-in (a client that declares `experimental.agent.languageFeatures` and forwards `agent/languageFeature` to
its own jedi-language-server), and beside `search` for the name (a word-boundary regex) as the baseline. The
tools run in a real agent-lsp driven by the fake Messages API; what the model read is taken from the fake's
recorded request.
"""

from __future__ import annotations

import ast
import asyncio
import os
import random
import re
import shutil
import sys
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from agent_lsp.core.paths import uri_to_path
from agent_lsp.demo.client import LspClient
from bench.figures import DONE, Driven, Row, env_for, median, ratio_row, recorded, tool_use
from tests.fakes.messages_api import FakeMessagesAPI

CODEBASE = "click"
JEDI = str(Path(sys.executable).parent / "jedi-language-server")
SERVERS = {"jedi": {"command": [JEDI], "languages": ["python"]}}
SEED = 20
PLACE = re.compile(r"^(.+?):(\d+):(\d+): ", re.M)
"""A find_references line: `path:line:col: text`."""
HIT = re.compile(r"^(.+?):(\d+): ", re.M)
"""A search line: `path:line: text`."""


@dataclass(frozen=True)
class Symbol:
    path: str
    """Workspace-relative, as the model names it."""
    line: int
    column: int
    """1-based, on the name."""
    name: str

    @property
    def where(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "column": self.column}


def copy_codebase(root: Path) -> str:
    """The installed package's source tree copied under `root`; its name and version."""
    import click

    source = Path(click.__file__).parent
    shutil.copytree(source, root / CODEBASE, ignore=shutil.ignore_patterns("__pycache__"))
    return f"{CODEBASE} {metadata.version(CODEBASE)}"


def candidates(root: Path) -> list[Symbol]:
    """Every module-level function and class, and every method of a module-level class (dunders left out), in
    file order."""
    found = []
    for file in sorted((root / CODEBASE).rglob("*.py")):
        source = file.read_text()
        lines = source.splitlines()
        tree = ast.parse(source)
        nodes = list(tree.body)
        nodes += [n for c in tree.body if isinstance(c, ast.ClassDef) for n in c.body]
        for node in nodes:
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if node.name.startswith("__"):
                continue
            line = node.lineno  # decorators come before it in 3.8+: lineno is the `def`/`class` line
            match = re.search(rf"\b(?:def|class)\s+({re.escape(node.name)})\b", lines[line - 1])
            if match:
                found.append(Symbol(file.relative_to(root).as_posix(), line, match.start(1) + 1, node.name))
    return found


# ---- jedi-language-server asked directly -----------------------------------------------------------------


async def start_jedi(root: Path) -> LspClient:
    client = await LspClient.spawn(JEDI, env=env_for(None), stderr=asyncio.subprocess.DEVNULL)
    await client.request("initialize", {"processId": os.getpid(), "rootUri": root.as_uri(),
                                        "workspaceFolders": [{"uri": root.as_uri(), "name": "ws"}],
                                        "capabilities": {}})
    client.notify("initialized", {})
    return client


def shown(root: Path, uri: str) -> str:
    """A location's file as agent-lsp shows it to the model."""
    path = uri_to_path(uri)
    return path.relative_to(root).as_posix() if path and path.is_relative_to(root) else str(path or uri)


Place = tuple[str, int, int]
"""(file as the model reads it, 1-based line, 1-based column)"""


async def jedi_references(client: LspClient, root: Path, s: Symbol) -> tuple[set[Place], float]:
    """The references jedi-language-server gives (less the declaration, which it lists whatever
    includeDeclaration says), 1-based; and its answer time."""
    started = time.perf_counter()
    answer = await client.request("textDocument/references", {
        "textDocument": {"uri": (root / s.path).as_uri()},
        "position": {"line": s.line - 1, "character": s.column - 1},
        "context": {"includeDeclaration": False}})
    elapsed = time.perf_counter() - started
    places = {(shown(root, a["uri"]), a["range"]["start"]["line"] + 1, a["range"]["start"]["character"] + 1)
              for a in answer or []}
    return places - {(s.path, s.line, s.column)}, elapsed


# ---- agent-lsp: the model's tool calls -------------------------------------------------------------------


def last_result(api: FakeMessagesAPI) -> tuple[str, bool]:
    """The tool result the model read in the last request: its text, and whether it is an error."""
    (block,) = [b for b in api.requests[-1]["messages"][-1]["content"] if b.get("type") == "tool_result"]
    content = block["content"]
    text = content if isinstance(content, str) else "".join(c.get("text", "") for c in content)
    return text, bool(block.get("is_error"))


async def ask(d: Driven, name: str, args: dict) -> tuple[str, bool, float]:
    """One chat calling tool `name`: what the model read, whether it is an error, the tool span."""
    await d.chat(tool_use((name, args)), DONE)
    text, error = last_result(d.api)
    return text, error, d.tool_span()


EDITOR_CAPS = {"experimental": {"agent": {
    "languageFeatures": ["textDocument/references", "textDocument/definition"]}}}
"""The editor stand-in's: it answers agent/languageFeature by forwarding to its own jedi-language-server."""


# ---- the figures -----------------------------------------------------------------------------------------


@dataclass
class Tally:
    hits: int = 0
    returned: int = 0
    expected: int = 0

    def add(self, got: set, truth: set) -> None:
        self.hits += len(got & truth)
        self.returned += len(got)
        self.expected += len(truth)

    @property
    def precision(self) -> float:
        return self.hits / self.returned if self.returned else 1.0

    @property
    def recall(self) -> float:
        return self.hits / self.expected if self.expected else 1.0


async def find_references(symbols: int, rounds: int, root: Path) -> list[Row]:
    """`symbols` questions, asked `rounds` times on each path: the first round gives the answers (and warms
    each jedi up on every symbol), the others the times."""
    workspace = root.parent / "lang"
    workspace.mkdir()
    workspace = Path(os.path.realpath(workspace))
    codebase = copy_codebase(workspace)
    pool = candidates(workspace)
    random.Random(SEED).shuffle(pool)
    api = FakeMessagesAPI().start()
    direct, forwarded = await start_jedi(workspace), await start_jedi(workspace)
    try:
        picked: list[tuple[Symbol, set]] = []  # symbols with at least one reference, in the seeded order
        for s in pool:
            truth, _ = await jedi_references(direct, workspace, s)
            if truth:
                picked.append((s, truth))
            if len(picked) == symbols:
                break
        sidecar = Driven(api, workspace, options={"languageServers": SERVERS}, state="sidecar-state")
        in_editor = Driven(api, workspace, EDITOR_CAPS, state="editor-state")
        async with sidecar, in_editor:
            in_editor.client.on_request["agent/languageFeature"] = \
                lambda p: forwarded.request(p["method"], p["params"])
            times: dict[str, list[float]] = {"direct": [], "sidecar": [], "editor": []}
            refs, search = Tally(), Tally()
            chars = {"refs": 0, "search": 0}
            misses = []
            for n in range(rounds):  # the first round is the answers, and the warm-up of each path (untimed)
                for s, truth in picked:
                    _, took = await jedi_references(direct, workspace, s)
                    text, error, span = await ask(sidecar, "find_references", s.where)
                    _, _, editor_span = await ask(in_editor, "find_references", s.where)
                    if n:
                        times["direct"].append(took)
                        times["sidecar"].append(span)
                        times["editor"].append(editor_span)
                        continue
                    got = set() if error else {(p, int(y), int(x)) for p, y, x in PLACE.findall(text)}
                    refs.add(got, truth)
                    if got != truth:
                        misses.append(f"{s.name}: {len(got - truth)} extra, {len(truth - got)} missing")
                    chars["refs"] += len(text)
                    found, _, _ = await ask(sidecar, "search", {"pattern": rf"\b{s.name}\b"})
                    lines = {(p, int(y)) for p, y in HIT.findall(found)}
                    search.add(lines, {(p, y) for p, y, _ in truth})
                    chars["search"] += len(found)
    finally:
        api.stop()
        for client in (direct, forwarded):
            client.process.kill()
            await client.process.wait()
    n = len(picked)
    met = refs.precision == 1 and refs.recall == 1
    share = chars["refs"] / chars["search"]
    return [
        Row(f"find_references on {n} symbols of {codebase}, vs jedi-language-server's answer: "
            "precision / recall", f"{refs.precision:.2f} / {refs.recall:.2f}",
            f"`search` for the name: precision {search.precision:.2f}", None, "1.00 / 1.00", met,
            "" if met else "; ".join(misses)),
        Row("characters returned to the model per question: find_references vs search",
            f"{chars['refs'] / n:.0f}", f"{chars['search'] / n:.0f}", share, "≤ 0.30×", share <= 0.3),
        latency("find_references through the sidecar (languageServers), vs jedi asked directly",
                times["sidecar"], times["direct"]),
        latency("find_references through the editor (agent/languageFeature), vs jedi asked directly",
                times["editor"], times["direct"]),
    ]


def latency(figure: str, agent: list[float], direct: list[float]) -> Row:
    row = recorded(ratio_row(figure, agent, direct, 1.2))
    row.agent += f", +{(median(agent) - median(direct)) * 1000:.0f} ms"
    return row

