"""Edits by symbol beside edit_file, and `impact` at scale.

The task set of symbol_tasks.py played twice by a scripted model through a real agent-lsp whose language server is
jedi-language-server or pyright (the `languageServers` setting): once with the symbol tools, once with edit_file only,
in an editor stand-in that applies workspace/applyEdit to its buffers. Counted per task: the characters of every
request body the fake Messages API receives (system prompt and tool definitions included; the conversation alone
beside it), the characters the model wrote (tool names, their input JSON, text), and the tool calls; both paths must
leave the buffers alike. Then `impact` on a symbol of a generated 3,000-file workspace, through jedi, against the
`languageTimeout` default; and the characters of every tool's definition against the 14k budget.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from agent_lsp.config import Settings
from agent_lsp.core.positions import offset_of
from bench.figures import DONE, Driven, Row, median, npm_package, tool_use
from bench.language import JEDI, last_result
from bench.symbol_tasks import FILES, TASKS, Player
from tests.fakes.messages_api import FakeMessagesAPI

BUDGET = 14_000
"""Characters every tool's definition may take together (the house rule)."""
EDITOR_CAPS = {"workspace": {"applyEdit": True, "workspaceEdit": {"documentChanges": True}},
               "general": {"positionEncodings": ["utf-16"]}}


def every_tool_definition() -> tuple[int, int]:
    """(characters of every tool's definition as sent: name, description, input schema; those of the symbol
    tools and `impact` among them), with every language feature answered and a skill and memory offered."""
    from agent_lsp.core.ports import LANGUAGE_METHODS
    from agent_lsp.tools import ALL, language_tools
    from agent_lsp.tools.forget import Forget
    from agent_lsp.tools.remember import Remember
    from agent_lsp.tools.skill import Skill, SkillTool
    from tests.fakes.language import FakeLanguageFeatures

    skill = SkillTool([Skill("review", "Review.", "user", Path("/s"), "Body.")])
    tools = [*ALL, *language_tools(FakeLanguageFeatures({m: None for m in LANGUAGE_METHODS})), Remember(None),
             Forget(None), skill]
    size = {t.name: len(json.dumps({"name": s.name, "description": s.description, "input_schema": s.input_schema}))
            for t, s in ((t, t.spec()) for t in tools)}
    symbol_tools = ("read_symbol", "replace_symbol", "insert_symbol", "delete_symbol", "impact")
    return sum(size.values()), sum(size[name] for name in symbol_tools)


def pyright_command() -> list[str]:
    """pyright's language server, installed from npm on demand into a cache outside the repository."""
    return [str(npm_package("pyright", "pyright") / ".bin" / "pyright-langserver"), "--stdio"]


# ---- the editor stand-in -------------------------------------------------------------------------------------


class Buffers:
    """An editor with the workspace's files open: it applies workspace/applyEdit to its buffers and says so with
    didChange, as an editor does."""

    def __init__(self, driven: Driven) -> None:
        self.client, self.root = driven.client, driven.root
        self.docs: dict[str, list[Any]] = {}  # uri → [version, text]
        self.client.on_request["workspace/applyEdit"] = self.apply

    def uri(self, path: str) -> str:
        return (self.root / path).as_uri()

    def open(self, files: dict[str, str]) -> None:
        for path, text in files.items():
            self.docs[self.uri(path)] = [1, text]
            self.client.notify("textDocument/didOpen", {"textDocument": {
                "uri": self.uri(path), "languageId": "python", "version": 1, "text": text}})

    def set(self, uri: str, text: str) -> None:
        version = self.docs[uri][0] + 1
        self.docs[uri] = [version, text]
        self.client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                      "contentChanges": [{"text": text}]})

    def reset(self, files: dict[str, str]) -> None:
        for path, text in files.items():
            if self.docs[self.uri(path)][1] != text:
                self.set(self.uri(path), text)

    def text(self, path: str) -> str:
        return self.docs[self.uri(path)][1]

    async def apply(self, params: dict) -> dict:
        for change in params["edit"].get("documentChanges", []):
            uri = change["textDocument"]["uri"]
            text = before = self.docs[uri][1]
            spans = [(offset_of(before, e["range"]["start"]["line"], e["range"]["start"]["character"], "utf-16"),
                      offset_of(before, e["range"]["end"]["line"], e["range"]["end"]["character"], "utf-16"),
                      e["newText"]) for e in change["edits"]]
            for start, end, new in sorted(spans, reverse=True):  # from the end: the offsets before stay true
                text = text[:start] + new + text[end:]
            self.set(uri, text)
        return {"applied": True}


# ---- the scripted model --------------------------------------------------------------------------------------


@dataclass
class Tally:
    """One path of one task: what crossed to and from the model."""

    sent: int = 0
    """Characters of every request body."""
    conversation: int = 0
    """Of which the messages (the rest: system prompt and tool definitions, again in each request)."""
    written: int = 0
    calls: int = 0

    def __iadd__(self, other: "Tally") -> "Tally":
        for name in ("sent", "conversation", "written", "calls"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        return self

    @property
    def both(self) -> int:
        return self.sent + self.written

    def __str__(self) -> str:
        return (f"{self.sent / 1000:.1f}k ({self.conversation / 1000:.1f}k conversation) / {self.written:,} chars, "
                f"{self.calls} calls")


@dataclass
class Script:
    """The fake's answer to each request: the player's next calls, made from the tool results the request holds."""

    player: Player
    tally: Tally = field(default_factory=Tally)
    started: bool = False

    def __call__(self, body: dict) -> dict:
        compact = lambda value: len(json.dumps(value, separators=(",", ":"), ensure_ascii=False))  # noqa: E731
        self.tally.sent += compact(body)
        self.tally.conversation += compact(body["messages"])
        blocks = body["messages"][-1]["content"]
        results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        texts = [b["content"] if isinstance(b["content"], str) else "".join(c.get("text", "") for c in b["content"])
                 for b in results]
        try:
            calls = self.player.send(texts if self.started else None)
        except StopIteration:
            calls = None
        self.started = True
        if not calls:
            self.tally.written += len(DONE["content"][0]["text"])
            return DONE
        self.tally.calls += len(calls)
        self.tally.written += sum(len(name) + len(json.dumps(args)) for name, args in calls)
        return tool_use(*calls)


async def play(d: Driven, buffers: Buffers, message: str, player: Player) -> Tally:
    script = Script(player)
    d.api.default = script
    answer = await d.chat(message=message, permissionMode="bypassPermissions")
    d.api.default = None
    if (answer["stopReason"], answer["finalMessage"]) != ("end_turn", DONE["content"][0]["text"]):
        raise RuntimeError(f"the chat ended with {answer}")
    return script.tally


async def tasks(server: str, command: list[str], api: FakeMessagesAPI, root: Path) -> list[tuple[Tally, Tally]]:
    """Each task, with the symbol tools and with edit_file only: their tallies; RuntimeError when a path leaves
    other text than the task's."""
    workspace = Path(os.path.realpath(root.parent / f"symbols-{server}"))
    for path, text in FILES.items():
        (workspace / path).parent.mkdir(parents=True, exist_ok=True)
        (workspace / path).write_text(text)
    # a ceiling, not a figure: a first answer of pyright under load can pass the 5 s default
    options = {"languageServers": {server: {"command": command, "languages": ["python"]}}, "languageTimeout": 120}
    out = []
    async with Driven(api, workspace, EDITOR_CAPS, options, state=f"symbols-{server}-state") as d:
        buffers = Buffers(d)
        buffers.open(FILES)
        for task in TASKS:
            tallies = []
            for way, player in (("symbol tools", task.symbols), ("edit_file only", task.edit_only)):
                buffers.reset(FILES)
                await settled(d)
                tallies.append(await play(d, buffers, task.message, player()))
                for path, text in FILES.items():
                    if buffers.text(path) != task.after.get(path, text):
                        raise RuntimeError(f"{task.name} with {way} through {server}: {path} is not as expected:\n"
                                           f"{buffers.text(path)}")
            out.append((tallies[0], tallies[1]))
    return out


async def settled(d: Driven) -> None:
    """Until the language server has done the work it reports (pyright analyses again after each change of the
    buffers): a task starts as a model's would, seconds after the last edit, never on a `loading` index."""
    for _ in range(600):
        await d.chat(tool_use(("document_symbols", {"path": "shop/pricing.py"})), DONE, permissionMode="plan")
        text, _ = last_result(d.api)
        if not text.splitlines()[-1].startswith("index: loading"):
            return
    raise RuntimeError(f"the language server is still loading: {text.splitlines()[-1]}")


def task_rows(server: str, results: Optional[list[tuple[Tally, Tally]]], why: str = "") -> list[Row]:
    """A row per task and one for them all; each saying `why` there are no figures when `results` is None."""
    names = [*(task.name for task in TASKS), f"the {len(TASKS)} tasks"]
    if results is None:
        return [Row(f"symbol tools, {name} ({server})", why, "", None, "(recorded)", None) for name in names]
    total, reference = Tally(), Tally()
    for symbols, edit_only in results:
        total += symbols
        reference += edit_only
    return [Row(f"symbol tools, {name} ({server}): to / from the model, calls; vs edit_file only", str(symbols),
                str(edit_only), symbols.both / edit_only.both, "(recorded)", None)
            for name, (symbols, edit_only) in zip(names, [*results, (total, reference)], strict=True)]


# ---- impact at scale ---------------------------------------------------------------------------------------------


def make_workspace(root: Path, files: int, every: int) -> int:
    """`files` modules in folders of 100; every `every`-th calls pkg/units.py's `convert`; the files calling it."""
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "units.py").write_text('def convert(value, unit):\n    """`value` in metres."""\n'
                                           '    return value * {"m": 1, "km": 1000}[unit]\n')
    callers = 0
    for n in range(files - 1):
        folder = root / "pkg" / f"part{n // 100:02d}"
        if not folder.exists():
            folder.mkdir()
            (folder / "__init__.py").write_text("")
        head, body = [], [f"def step{n}_{i}(x):\n    return x * {i} + {n}\n" for i in range(20)]
        if n % every == 0:
            callers += 1
            head = ["from pkg.units import convert\n"]
            body.append(f"def distance{n}(x):\n    return convert(x, 'km') + {n}\n")
        (folder / f"m{n % 100:02d}.py").write_text("".join(head) + "\n\n" + "\n\n".join(body))
    return callers


async def impact_at_scale(files: int, runs: int, root: Path) -> Row:
    """`impact` on `convert` `runs` times, jedi started first (its start has a timeout of its own)."""
    workspace = Path(os.path.realpath(root.parent / "impact-scale"))
    callers = make_workspace(workspace, files, 10)
    timeout = Settings().language_timeout
    api = FakeMessagesAPI().start()
    spans, answers = [], []
    try:
        options = {"languageServers": {"jedi": {"command": [JEDI], "languages": ["python"]}}}
        async with Driven(api, workspace, {}, options, state="impact-scale-state") as d:
            await d.chat(tool_use(("document_symbols", {"path": "pkg/units.py"})), DONE, permissionMode="plan")
            for _ in range(runs):  # the first asks jedi for references in this workspace for the first time
                await d.chat(tool_use(("impact", {"targets": [{"path": "pkg/units.py", "symbol": "convert"}]})), DONE,
                             permissionMode="plan")
                answers.append(last_result(api))
                spans.append(d.tool_span())
    finally:
        api.stop()
    text, error = answers[0]
    found = re.search(r"^references: \d+ in (\d+) file", text, re.M)
    failed = error or not found
    short = bool(found) and int(found.group(1)) < callers
    said = "These may be incomplete" in text  # what the answer tells the model when jedi stopped at its limit
    met = not failed and max(spans) <= timeout and said == short
    return Row(f"impact on a symbol of a {files:,}-file workspace, {callers} files calling it, through jedi: first "
               f"answer, median of {runs}; calling files found (and whether the answer says it may be incomplete)",
               f"{spans[0]:.1f} s, {median(spans):.1f} s; {found.group(1) if found else 0} of {callers}"
               f"{' (said)' if said else ' (not said)' if short else ''}",
               f"languageTimeout {timeout:g} s (default)", max(spans) / timeout, "within the language timeout", met,
               text.splitlines()[1] if failed else "" if met else "slower than the timeout" if said == short
               else "the answer does not say it may be incomplete")


# ---- the figures -------------------------------------------------------------------------------------------------


async def symbol_tools(quick: bool, root: Path) -> list[Row]:
    api = FakeMessagesAPI().start()
    rows = []
    try:
        rows += task_rows("jedi", await tasks("jedi", [JEDI], api, root))
        try:
            if quick:  # as copilot-language-server: nothing installed for a smoke run
                raise FileNotFoundError("skipped (quick)")
            command = pyright_command()
        except (subprocess.SubprocessError, OSError) as e:
            rows += task_rows("pyright", None, str(e) if quick else f"pyright unavailable: {type(e).__name__}")
        else:
            rows += task_rows("pyright", await tasks("pyright", command, api, root))
    finally:
        api.stop()
    rows.append(await impact_at_scale(300 if quick else 3000, 1 if quick else 3, root))
    size, symbol_part = every_tool_definition()
    rows.append(Row("tool definitions, every tool offered (language tools, a skill, memory): characters "
                    f"(the symbol tools and impact: {symbol_part:,})", f"{size:,}", f"{BUDGET:,} budget",
                    size / BUDGET, f"< {BUDGET:,}", size < BUDGET))
    return rows
