"""impact: what a change may break (PROTOCOL §11 "The impact of a change"): for the symbols a change touched since
the chat began (or since the files were saved), or the targets named, their callers (call hierarchy, else references
grouped by the symbol holding them), implementations, reference counts and files, and the diagnostics of the changed
files and the callers' files. A section a server cannot give is named with why; the whole is bounded."""

from __future__ import annotations

import ast
import asyncio
import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal, Optional, Union

from pydantic import WithJsonSchema
from pydantic.json_schema import SkipJsonSchema

from agent_lsp.core.ports import LanguageFeatures
from agent_lsp.core.tool import ToolContext, ToolError, ToolInput, ToolOutput, bound
from agent_lsp.tools.editing import current
from agent_lsp.tools.get_diagnostics import format_diagnostics
from agent_lsp.tools.language_tool import (
    LanguageTool,
    Places,
    ask,
    index_line,
    locations,
    numbers,
    reference_limit_note,
    whole_word,
)
from agent_lsp.core.paths import display, is_inside, uri_to_path
from agent_lsp.tools.symbols import PYTHON, SYMBOLS, Lines, Symbol, compiles, find, symbols_of

MAX_FILES = 20
"""Changed files looked at (the rest counted)."""
MAX_TARGETS = 12
"""Symbols reported on (the rest named)."""
MAX_CALLERS = 15
"""Callers or referencing symbols shown per symbol (the rest counted)."""
MAX_DIAGNOSTICS = 40

REFERENCES = "textDocument/references"
IMPLEMENTATION = "textDocument/implementation"
PREPARE_CALLS = "textDocument/prepareCallHierarchy"
INCOMING = "callHierarchy/incomingCalls"


class Target(ToolInput):
    path: str
    symbol: str


TARGETS_SCHEMA = {"type": "array", "description": "Default: what changed.", "items": {
    "type": "object", "properties": {"path": {"type": "string"}, "symbol": {"type": "string"}},
    "required": ["path", "symbol"]}}
"""The schema of `targets`, written out: pydantic's would name and title the item model (characters every chat)."""


class ImpactInput(ToolInput):
    targets: Annotated[Union[list[Target], SkipJsonSchema[None]], WithJsonSchema(TARGETS_SCHEMA)] = None
    since: Literal["chat", "saved"] = "chat"


@dataclass(frozen=True)
class Touched:
    """A symbol a change touched (or a target), in the live text of its file."""

    path: Path
    name: str
    symbol: Optional[Symbol]
    """None: the symbol was removed."""
    name_path: str
    how: str
    """"changed", "added", "removed" or "named"."""


def changed_lines(before: str, after: str) -> tuple[set[int], set[int]]:
    """(0-based lines of `after` written or rewritten, lines of `after` next to which lines were only deleted)."""
    a, b = before.splitlines(), after.splitlines()
    written, cut = set(), set()
    for tag, _, _, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag in ("replace", "insert"):
            written.update(range(j1, j2))
        elif tag == "delete":
            cut.update({max(j1 - 1, 0), j1})
    return written, cut


def python_names(text: str) -> Optional[set[str]]:
    """The name paths of a Python text's classes and functions (None: it does not parse)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    found: set[str] = set()

    def walk(body: list, prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                path = f"{prefix}{node.name}"
                found.add(path)
                walk(node.body, f"{path}/")

    walk(tree.body, "")
    return found


def section(title: str, rows: list[str]) -> str:
    """`title: none`, or the title and its rows indented, at most MAX_CALLERS of them."""
    if not rows:
        return f"{title}: none"
    more = [f"… and {len(rows) - MAX_CALLERS} more"] if len(rows) > MAX_CALLERS else []
    return f"{title}:\n" + "\n".join(f"  {row}" for row in [*rows[:MAX_CALLERS], *more])


CALLABLE = {"function", "method", "constructor"}
DEFINED = CALLABLE | {"class", "interface", "struct", "enum"}
"""Symbol kinds `python_names` knows (what "added" and "removed" are told by)."""


def outside_callables(symbols: list[Symbol]) -> list[Symbol]:
    """The symbols that are not a parameter or local of a function (some servers report those as its children):
    a change to them is a change to the function."""
    kinds = {s.path: s.kind for s in symbols}
    return [s for s in symbols if s.kind in DEFINED or kinds.get(s.parent) not in CALLABLE]


def innermost(symbols: list[Symbol], lines: set[int]) -> list[Symbol]:
    """The symbols whose span holds one of `lines` and that hold no other such symbol."""
    hit = [s for s in symbols if any(s.start <= n <= s.end for n in lines)]
    return [s for s in hit if not any(o is not s and o.path[:len(s.path)] == s.path and len(o.path) > len(s.path)
                                      for o in hit)]


class Impact(LanguageTool):
    name = "impact"
    needs = (SYMBOLS,)
    description = (
        "Callers, implementations, references and diagnostics of the symbols changed this chat. Call it after "
        "changing a signature, before deleting."
    )
    Input = ImpactInput

    def title(self, input: ImpactInput) -> str:
        return "Impact of the change" if not input.targets else f"Impact of {len(input.targets)} symbol(s)"

    async def run(self, ctx: ToolContext, input: ImpactInput) -> ToolOutput:
        language = ctx.language
        if language is None:
            raise ToolError("No language server answers here; use search and get_diagnostics.")
        notes: list[str] = []
        if input.targets:
            touched = [await self._named(ctx, t) for t in input.targets[:MAX_TARGETS]]
            files = sorted({t.path for t in touched})
        else:
            touched, files = await self._touched(ctx, input.since, notes)
        if not touched:
            since = "the chat began" if input.since == "chat" else "the files were saved"
            return ToolOutput(f"No symbol changed since {since}{' (' + '; '.join(notes) + ')' if notes else ''}.\n"
                              f"{index_line(ctx)}")
        out: list[str] = []
        callers_files: set[Path] = set()
        for t in touched[:MAX_TARGETS]:
            out += await self._one(ctx, language, t, callers_files)
        if len(touched) > MAX_TARGETS:
            out.append(f"… and {len(touched) - MAX_TARGETS} more symbols: "
                       + ", ".join(t.name_path for t in touched[MAX_TARGETS:MAX_TARGETS + 30]))
        out += await self._diagnostics(ctx, files, sorted(callers_files - set(files)), input.since)
        out += notes
        out.append(index_line(ctx, files[0] if files else None))
        return ToolOutput(bound("\n".join(out)))

    # ---- which symbols ---------------------------------------------------------------------------------------

    async def _named(self, ctx: ToolContext, target: Target) -> Touched:
        found = await find(ctx, target.path, target.symbol, None)
        return Touched(found.path, found.name, found.symbol, found.symbol.name_path, "named")

    async def _touched(self, ctx: ToolContext, since: str, notes: list[str]) -> tuple[list[Touched], list[Path]]:
        roots = ctx.editor.roots
        if since == "saved":
            docs = [d for d in ctx.editor.open_documents() if d.path is not None]
            befores: dict[Path, Optional[str]] = await asyncio.to_thread(  # telling unsaved reads the files
                lambda: {d.path: _disk_text(d.path) for d in docs if d.unsaved})
        else:
            befores = ctx.baseline.texts()
        changed = []
        for path, before in sorted(befores.items()):
            if not any(is_inside(path, r) for r in roots):
                continue
            now = current(ctx, path)
            if now.exists and now.text != before and ctx.language is not None \
                    and SYMBOLS in ctx.language.methods(path):
                changed.append((path, before, now.text))
        if len(changed) > MAX_FILES:
            notes.append(f"{len(changed) - MAX_FILES} more changed files not looked at")
        touched: list[Touched] = []
        for path, before, after in changed[:MAX_FILES]:
            touched += await self._in_file(ctx, path, before, after, notes)
        return touched, [p for p, _, _ in changed[:MAX_FILES]]

    async def _in_file(self, ctx: ToolContext, path: Path, before: Optional[str], after: str,
                       notes: list[str]) -> list[Touched]:
        name = display(ctx.editor.roots, path)
        answer = await ask(ctx, SYMBOLS, {"textDocument": {"uri": path.as_uri()}}, path)
        python = path.suffix in PYTHON
        lines = Lines.of(after)
        symbols = await asyncio.to_thread(symbols_of, answer if isinstance(answer, list) else [], lines, python)
        written, cut = await asyncio.to_thread(changed_lines, before or "", after)
        old_names = await asyncio.to_thread(python_names, before) if python and before is not None else None
        new_names = {s.name_path for s in symbols if s.kind in DEFINED}
        out = []
        for s in innermost(outside_callables(symbols), written | cut):
            added = before is None or (old_names is not None and s.kind in DEFINED and s.name_path not in old_names)
            out.append(Touched(path, name, s, s.name_path, "added" if added else "changed"))
        if old_names is not None:
            out += [Touched(path, name, None, gone, "removed") for gone in sorted(old_names - new_names)
                    if not any(n.startswith(gone + "/") for n in new_names)]
        elif before is not None:
            notes.append(f"removed symbols of {name}: not known (the language server sees only the live text)")
        return out

    # ---- one symbol ------------------------------------------------------------------------------------------

    async def _one(self, ctx: ToolContext, language: LanguageFeatures, t: Touched, callers: set[Path]) -> list[str]:
        if t.symbol is None:
            word = t.name_path.rsplit("/", 1)[-1]
            return [f"## {t.name_path} ({t.name}): removed",
                    f"references: the language server cannot find references to removed code; run search with "
                    f"pattern `{whole_word(word)}` for what still uses it"]
        s = t.symbol
        out = [f"## {t.name_path} ({t.name}:{s.name_line + 1}): {t.how} {s.kind}"]
        methods = language.methods(t.path)
        origin = next(iter(methods.values()), "the language server")
        server = origin.removeprefix("languageServer:")
        position = {"textDocument": {"uri": t.path.as_uri()},
                    "position": {"line": s.name_line, "character": s.name_column}}
        refs: Optional[list[tuple[str, dict]]] = None
        if REFERENCES in methods:
            try:
                answer = await ask(ctx, REFERENCES, {**position, "context": {"includeDeclaration": False}}, t.path)
                refs = [(u, p) for u, p in locations(answer)
                        if not (uri_to_path(u) == t.path and s.start <= numbers(p)[0] <= s.end)]
            except ToolError as e:
                out.append(f"references: {e}")
        else:
            out.append(f"references: {server} does not offer {REFERENCES}")
        if refs is not None:
            names = sorted({display(ctx.editor.roots, p) for p in (uri_to_path(u) for u, _ in refs) if p is not None})
            callers.update(p for p in (uri_to_path(u) for u, _ in refs) if p is not None)
            shown = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
            out.append(f"references: {len(refs)} in {len(names)} file{'s' * (len(names) != 1)}"
                       + (f": {shown}" if names else ""))
            note = await reference_limit_note(ctx, t.path, t.name_path.rsplit("/", 1)[-1])
            if note:
                out.append(note)
        out += await self._callers(ctx, t, methods, server, position, refs, callers)
        if IMPLEMENTATION in methods:
            try:
                found = locations(await ask(ctx, IMPLEMENTATION, position, t.path))
                out.append(section("implementations", await Places(ctx).lines(found, sort=True)))
            except ToolError as e:
                out.append(f"implementations: {e}")
        else:
            out.append(f"implementations: {server} does not offer {IMPLEMENTATION}")
        return out

    async def _callers(self, ctx: ToolContext, t: Touched, methods: dict, server: str, position: dict,
                       refs: Optional[list[tuple[str, dict]]], callers: set[Path]) -> list[str]:
        if PREPARE_CALLS in methods and INCOMING in methods:
            try:
                items = await ask(ctx, PREPARE_CALLS, position, t.path)
                found: list[tuple[str, dict, str]] = []
                for item in items if isinstance(items, list) else []:
                    answer = await ask(ctx, INCOMING, {"item": item}, t.path)
                    for call in answer if isinstance(answer, list) else []:
                        caller = call.get("from") if isinstance(call, dict) else None
                        where = caller.get("selectionRange", caller.get("range")) if isinstance(caller, dict) else None
                        if isinstance(where, dict) and isinstance(caller.get("uri"), str):
                            found.append((caller["uri"], where.get("start") or {}, str(caller.get("name", "?"))))
                places = Places(ctx)
                callers.update(p for p in (uri_to_path(u) for u, _, _ in found) if p is not None)
                return [section("callers", sorted({f"{places.where(u, p)}: {n}" for u, p, n in found}))]
            except ToolError as e:
                return [f"callers: {e}"]
        why = f"{server} has no call hierarchy"
        if refs is None:
            return [f"callers: {why}, and no references to group"]
        holders = await self._holders(ctx, refs, t.name_path.rsplit("/", 1)[-1])
        rows = sorted(f"{name}: {holder} ({count})" for (name, holder), count in holders.items())
        return [section(f"callers (from references; {why})", rows)]

    async def _holders(self, ctx: ToolContext, refs: list[tuple[str, dict]], word: str) -> dict[tuple[str, str], int]:
        """(file, the innermost definition holding the reference, or "module level") → how many references. The
        definition of `word` itself, and a symbol that is not a definition (an imported name, which some servers list
        as a symbol), hold nothing."""
        by_file: dict[Path, list[int]] = {}
        for uri, at in refs:
            path = uri_to_path(uri)
            if path is not None:
                by_file.setdefault(path, []).append(numbers(at)[0])
        counts: dict[tuple[str, str], int] = {}
        for path, rows in sorted(by_file.items())[:MAX_CALLERS * 2]:
            name = display(ctx.editor.roots, path)
            symbols: list[Symbol] = []
            if any(is_inside(path, r) for r in ctx.editor.roots) and ctx.language is not None \
                    and SYMBOLS in ctx.language.methods(path):
                now = current(ctx, path)
                try:
                    answer = await ask(ctx, SYMBOLS, {"textDocument": {"uri": path.as_uri()}}, path)
                    symbols = await asyncio.to_thread(symbols_of, answer if isinstance(answer, list) else [],
                                                      Lines.of(now.text), path.suffix in PYTHON)
                except ToolError:
                    symbols = []
            # only a definition holds a call: jedi lists the names an import brings as symbols, and
            # `from shop import Cart, price` was reported as `price` called from `Cart`
            holding = [s for s in outside_callables(symbols) if s.kind in DEFINED]
            for row in rows:
                held = innermost([s for s in holding if not (s.path[-1] == word and s.name_line == row)], {row})
                holder = held[0].name_path if held else "module level"
                counts[(name, holder)] = counts.get((name, holder), 0) + 1
        return counts

    # ---- diagnostics -----------------------------------------------------------------------------------------

    async def _diagnostics(self, ctx: ToolContext, changed: list[Path], callers: list[Path], since: str) -> list[str]:
        paths = [*changed, *callers[:MAX_FILES]]
        if not paths:
            return []
        report = await ctx.editor.diagnostics(paths)
        out = []
        if report.from_editor:
            found = format_diagnostics(ctx.editor.roots, report.items[:MAX_DIAGNOSTICS])
            more = f"\n… and {len(report.items) - MAX_DIAGNOSTICS} more" if len(report.items) > MAX_DIAGNOSTICS else ""
            out.append("diagnostics now in the changed files and the callers' files: "
                       + (f"\n{found}{more}" if found else "none"))
            out.append("diagnostics before the change: not known (the editor gives only today's); the list above "
                       "is all of them now")
        else:
            out.append(f"diagnostics: {report.unavailable}")
        syntax = []
        befores = ctx.baseline.texts() if since == "chat" else {}
        for path in changed:
            if path.suffix not in PYTHON:
                continue
            name = display(ctx.editor.roots, path)
            before = befores.get(path) if since == "chat" else await asyncio.to_thread(_disk_text, path)
            then = await asyncio.to_thread(compiles, before, name) if before is not None else None
            now = await asyncio.to_thread(compiles, current(ctx, path).text, name)
            if now and now != then:
                syntax.append(f"{name}: new: {now}")
            if then and now != then:
                syntax.append(f"{name}: resolved: {then}")
        if syntax:
            out.append("syntax errors since the baseline (compile()):\n" + "\n".join(syntax))
        return out


def _disk_text(path: Path) -> Optional[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
