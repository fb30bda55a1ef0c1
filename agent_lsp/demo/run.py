"""The demo session: open a sample workspace with an unsaved buffer, ask the demo model, print what streams; then
type on in the buffer, ask for a suggestion as an editor does, show it as ghost text and accept it; then rename a
parameter and take the next edit that carries the rename on."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, Optional, TextIO

from agent_lsp.demo.client import LspClient

WORKSPACE = Path(__file__).parent / "workspace"
UNSAVED_LINES = '\n\ndef low_stock(items, limit=3):\n    """Items with fewer than `limit` left (not saved yet)."""\n' \
                '    return [item for item in items if item["quantity"] < limit]\n'
QUESTION = "What am I working on, and is anything wrong with it?"
TYPED = "\n\ndef find(items, name):\n    for item in items:\n        if item"
"""What the editor types after the chat: the last line's beginning is one the demo model completes from the buffer
(restock's `if item["name"] == name:`)."""
RENAMED = ("items", "stock")
"""The parameter of `find` the editor renames; the demo model carries the rename on to the next line."""
SUGGESTIONS = {"enabled": True, "model": "demo"}
"""The demo's `completions` setting, over any the user's settings file has (as `--model demo` is over its model)."""
NEXT_EDITS = {"enabled": True, "model": "demo"}
"""The demo's `nextEdits` setting, likewise."""
DIM, PLAIN = "\033[2m", "\033[0m"


class Printer:
    """Renders agent/update and $/progress the way a chat panel would, as plain text."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.names: dict[str, str] = {}
        self.in_text = False

    def write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()

    def line(self, text: str) -> None:
        if self.in_text:
            self.write("\n")
            self.in_text = False
        self.write(text + "\n")

    def update(self, params: dict[str, Any]) -> None:
        update = params["update"]
        kind = update["kind"]
        if kind == "text_delta":
            if not self.in_text:
                self.write("assistant │ ")
                self.in_text = True
            self.write(update["text"].replace("\n", "\n          │ "))
        elif kind == "thinking_delta":
            self.line(f"thinking │ {update['text']}")
        elif kind == "turn_start":
            self.line(f"── turn {update['turn']} of at most {update['maxTurns']}")
        elif kind == "tool_call":
            self.names[update["toolCallId"]] = update["title"]
            self.line(f"   tool  │ {update['title']}  ({update['name']}, {update['toolKind']})")
        elif kind == "tool_call_update" and update["status"] in ("completed", "failed", "rejected", "cancelled"):
            first = (update.get("output") or update.get("error") or "").splitlines()[:1]
            self.line(f"   tool  │ {self.names.get(update['toolCallId'])} → {update['status']}"
                      + (f": {first[0][:70]}" if first else ""))
        elif kind == "usage":
            self.line(f"  usage  │ {update['inputTokens']} in, {update['outputTokens']} out")
        elif kind == "notice":
            self.line(f" notice  │ {update['message']}")

    def progress(self, params: dict[str, Any]) -> None:
        value = params["value"]
        self.line(f"progress │ {value['kind']}: {value.get('title') or value.get('message') or ''}")


async def demo(out: TextIO = sys.stdout) -> int:
    """Run the demo; 0 when the chat ended normally."""
    with tempfile.TemporaryDirectory(prefix="agent-lsp-demo-") as tmp:
        root = Path(tmp) / "workspace"
        shutil.copytree(WORKSPACE, root)
        target = root / "inventory.py"
        printer = Printer(out)
        env = {**os.environ, "AGENT_LSP_OFFLINE": "1"}
        client = await LspClient.spawn(sys.executable, "-m", "agent_lsp", "--model", "demo",
                                       "--data-dir", str(Path(tmp) / "state"), env=env)
        client.on_notification["agent/update"] = printer.update
        client.on_notification["$/progress"] = printer.progress
        client.on_notification["window/showMessage"] = lambda p: printer.line(f"message  │ {p['message']}")
        client.on_request["workspace/configuration"] = lambda p: [None for _ in p["items"]]
        init = await client.request("initialize", {
            "processId": os.getpid(), "rootUri": root.as_uri(),
            "workspaceFolders": [{"uri": root.as_uri(), "name": "workspace"}],
            "capabilities": {"window": {"workDoneProgress": True}, "workspace": {"configuration": True},
                             "experimental": {"agent": {"confirmTool": True}}},
            "initializationOptions": {"completions": SUGGESTIONS, "nextEdits": NEXT_EDITS}})
        server = init["serverInfo"]
        printer.line(f"agent-lsp demo: {server['name']} {server['version']} over stdio, workspace {root}")
        printer.line(f"tools    │ {', '.join(init['capabilities']['experimental']['agent']['tools'])}")
        client.notify("initialized", {})
        text = target.read_text() + UNSAVED_LINES
        client.notify("textDocument/didOpen", {"textDocument": {
            "uri": target.as_uri(), "languageId": "python", "version": 1, "text": text}})
        printer.line("editor   │ opened inventory.py with an unsaved new function (low_stock)")
        printer.line(f"user     │ {QUESTION}")
        result = await client.request("agent/chat", {"message": QUESTION, "context": {"activeUri": target.as_uri()}})
        meta = result["metadata"]
        printer.line(f"result   │ stopReason={result['stopReason']} turns={meta['turnsCount']} "
                     f"toolCalls={meta['toolCallsCount']} durationMs={meta['durationMs']}")
        text = await suggestion(client, printer, target.as_uri(), text)
        carried = text is not None and await next_edit(client, printer, target.as_uri(), text)
        code = await client.close()
        printer.line(f"server   │ exited with code {code}")
        return 0 if result["stopReason"] == "end_turn" and carried and code == 0 else 1


async def suggestion(client: LspClient, printer: Printer, uri: str, text: str) -> Optional[str]:
    """Type TYPED at the end of the buffer `text` (version 1), ask for a suggestion at the cursor as an editor
    does, show it as ghost text, accept it (its edit, then its command) and print the line and the stats; the
    buffer's text then (version 3), None when there was no suggestion."""
    end = _position(text, len(text))
    text += TYPED
    cursor = _position(text, len(text))
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                             "contentChanges": [{"range": {"start": end, "end": end}, "text": TYPED}]})
    lines = TYPED.strip("\n").splitlines()
    printer.line("editor   │ types on, under low_stock (the cursor is at ▏):")
    for line in lines[:-1]:
        printer.line(f"         │ {line}")
    printer.line(f"         │ {lines[-1]}▏")
    answer = await client.request("textDocument/inlineCompletion", {
        "textDocument": {"uri": uri}, "position": cursor, "context": {"triggerKind": 2}})
    if not answer["items"]:
        printer.line("suggest  │ no suggestion")
        return None
    item = answer["items"][0]
    client.notify("textDocument/didShowCompletion", {"item": item})
    dim, plain = (DIM, PLAIN) if printer.out.isatty() else ("", "")
    printer.line(f"ghost    │ {lines[-1]}▏{dim}{item['insertText']}{plain}   ← the suggestion "
                 "(textDocument/inlineCompletion); Tab accepts")
    start, end = (_offset(text, item["range"][side]) for side in ("start", "end"))
    text = text[:start] + item["insertText"] + text[end:]
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 3}, "contentChanges": [
        {"range": item["range"], "text": item["insertText"]}]})
    command = item.get("command")
    if command:
        await client.request("workspace/executeCommand", {"command": command["command"],
                                                          "arguments": command.get("arguments", [])})
    then = f", then {command['command']}" if command else ""
    printer.line(f"accepted │ {text.splitlines()[cursor['line']]}   ← didChange{then}")
    stats = await client.request("agent/completionStats", {})
    printer.line("stats    │ " + " ".join(f"{name}={value}" for name, value in stats.items() if name != "nextEdits"))
    return text


async def next_edit(client: LspClient, printer: Printer, uri: str, text: str) -> bool:
    """Rename RENAMED's parameter in the buffer `text` (version 3), ask for the next edit as copilot-lsp does,
    show it, apply it (a didChange, as copilot-lsp does) and print the line and the stats; whether one was
    applied."""
    old, new = RENAMED
    line = text.rindex(f"def find({old}, ")
    start = line + len("def find(")
    text = text[:start] + new + text[start + len(old):]
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 4}, "contentChanges": [
        {"range": {"start": _position(text, start), "end": _position(text, start + len(old))}, "text": new}]})
    cursor = _position(text, start + len(new))
    lines = text.splitlines()
    printer.line(f"editor   │ renames {old} to {new} in find's signature:")
    printer.line(f"         │ {lines[cursor['line']][:cursor['character']]}▏{lines[cursor['line']][cursor['character']:]}")
    answer = await client.request("textDocument/copilotInlineEdit", {
        "textDocument": {"uri": uri, "version": 4}, "position": cursor})
    if not answer["edits"]:
        printer.line("next     │ no next edit")
        return False
    (offered,) = answer["edits"]
    client.notify("textDocument/didShowInlineEdit", {"item": {"command": offered["command"]}})
    where = offered["range"]["start"]["line"]
    start, end = (_offset(text, offered["range"][side]) for side in ("start", "end"))
    text = text[:start] + offered["text"] + text[end:]
    printer.line(f"next     │ {lines[where]}  →  {text.splitlines()[where].strip()}   ← the next edit "
                 "(textDocument/copilotInlineEdit); Tab applies")
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 5}, "contentChanges": [
        {"range": offered["range"], "text": offered["text"]}]})
    printer.line(f"applied  │ {text.splitlines()[where]}   ← didChange")
    stats = (await client.request("agent/completionStats", {}))["nextEdits"]
    printer.line("stats    │ next edits: " + " ".join(f"{name}={value}" for name, value in stats.items()))
    return stats["accepted"] == 1


def _position(text: str, offset: int) -> dict[str, int]:
    """The LSP position of `offset` in `text` (the demo's text is ASCII: characters are UTF-16 units)."""
    before = text[:offset]
    return {"line": before.count("\n"), "character": offset - (before.rfind("\n") + 1)}


def _offset(text: str, position: dict[str, int]) -> int:
    """The offset in `text` of an LSP `position` (ASCII text)."""
    lines = text.split("\n")
    return sum(len(line) + 1 for line in lines[:position["line"]]) + position["character"]


def main() -> int:
    return asyncio.run(demo())
