"""The offline demo model: deterministic, no key needed, and it really works the tools.

It looks at what the editor has open and at the diagnostics, reads the active file (unsaved text included) and
searches it for TODOs, then answers from what the tools returned. It is chosen explicitly (`--model demo`).
"""

from __future__ import annotations

import asyncio
import re
from typing import AsyncIterator, Optional

from agent_lsp.core.events import Usage
from agent_lsp.core.messages import AssistantMessage, TextPart, ToolResultsMessage, ToolUsePart, UserMessage
from agent_lsp.core.ports import ModelEvent, ModelReply, ModelRequest, TextChunk, ThinkingChunk

CHUNK_DELAY = 0.005


class DemoModel:
    """A model that plans with rules instead of weights."""

    name = "demo"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        step, results = _progress(request)
        tools = {t.name for t in request.tools}
        if request.tool_choice == "none":
            step = 99
        if step == 0 and {"list_open_buffers", "get_diagnostics"} <= tools:
            thought = "First, what does the editor have open, and what do its diagnostics say?"
            text, calls = "I'll look at what you have open and at the diagnostics.", [
                ("list_open_buffers", {}), ("get_diagnostics", {})]
        elif step == 1 and {"read_file", "search"} <= tools and (target := _target(request, results)):
            thought = f"{target} is the active file; read it as the buffer has it, and look for TODOs."
            text, calls = f"Reading {target} and searching it for TODOs.", [
                ("read_file", {"path": target}), ("search", {"pattern": r"TODO|FIXME", "path": target})]
        else:
            thought = "I have what I need; answer from what the tools returned."
            text, calls = _answer(request, results), []
        yield ThinkingChunk(thought)
        for word in re.findall(r"\s*\S+\s*", text):
            await asyncio.sleep(CHUNK_DELAY)
            yield TextChunk(word)
        parts = [TextPart(text=text)] + [
            ToolUsePart(id=f"demo_{step}_{n}", name=name, input=args) for n, (name, args) in enumerate(calls)]
        yield ModelReply(parts=parts, stop_reason="tool_use" if calls else "end_turn",
                         usage=Usage(input_tokens=sum(len(str(m)) for m in request.messages) // 4,
                                     output_tokens=len(text) // 4))


def _progress(request: ModelRequest) -> tuple[int, dict[str, str]]:
    """How many tool rounds ran since the user's message, and their results by tool name."""
    names: dict[str, str] = {}
    results: dict[str, str] = {}
    step = 0
    for message in request.messages:
        if isinstance(message, UserMessage) and message.origin == "user":
            step, results = 0, {}
        elif isinstance(message, AssistantMessage):
            names.update({p.id: p.name for p in message.parts if isinstance(p, ToolUsePart)})
        elif isinstance(message, ToolResultsMessage):
            step += 1
            results.update({names.get(r.tool_use_id, "?"): r.content for r in message.results})
    return step, results


def _target(request: ModelRequest, results: dict[str, str]) -> Optional[str]:
    """The active file from the environment, else the first open buffer."""
    context = next((m.context for m in reversed(request.messages) if isinstance(m, UserMessage) and m.context), "")
    active = re.search(r"^Active file: (\S+)", context, re.MULTILINE)
    if active:
        return active.group(1)
    first = re.search(r"^(file://\S+)", results.get("list_open_buffers", ""), re.MULTILINE)
    if first:
        from agent_lsp.core.paths import uri_to_path

        path = uri_to_path(first.group(1))
        return str(path) if path is not None else None
    return None


def _answer(request: ModelRequest, results: dict[str, str]) -> str:
    question = next(
        (m.text for m in reversed(request.messages) if isinstance(m, UserMessage) and m.origin == "user"), "")
    lines = [f"You asked: “{question.strip()}”. Here is what I found in your editor (demo model, no API call)."]
    buffers = results.get("list_open_buffers", "")
    if buffers:
        count = len([b for b in buffers.splitlines() if b.startswith("file:")])
        unsaved = buffers.count("unsaved changes")
        lines.append(f"- **Open buffers:** {count}, {unsaved} with unsaved changes.")
    read = results.get("read_file", "")
    if read:
        header, _, body = read.partition("\n")
        code = [re.sub(r"^\s*\d+\t", "", line) for line in body.splitlines()]
        defs = [m.group(2) for line in code if (m := re.match(r"\s*(def|class|function|fn)\s+(\w+)", line))]
        lines.append(f"- **{header}**" + (f": defines {', '.join(f'`{d}`' for d in defs)}." if defs else "."))
    todos = results.get("search", "")
    if todos and todos != "No matches.":
        lines.append(f"- **TODOs:** {len(todos.splitlines())} — " + "; ".join(
            line.split(": ", 1)[-1] for line in todos.splitlines()[:3]))
    diagnostics = results.get("get_diagnostics", "")
    if diagnostics:
        found = [line for line in diagnostics.splitlines() if re.match(r"\S+:\d+:\d+: ", line)]
        lines.append(f"- **Diagnostics:** {len(found)}" + (f" — first: `{found[0]}`" if found else "") + ".")
    if len(lines) == 1:
        lines.append("- Nothing to look at: no buffers are open and no tools were available.")
    return "\n".join(lines)
