"""The demo session: open a sample workspace with an unsaved buffer, ask the demo model, print what streams."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, TextIO

from agent_lsp.demo.client import LspClient

WORKSPACE = Path(__file__).parent / "workspace"
UNSAVED_LINES = '\n\ndef low_stock(items, limit=3):\n    """Items with fewer than `limit` left (not saved yet)."""\n' \
                '    return [item for item in items if item["quantity"] < limit]\n'
QUESTION = "What am I working on, and is anything wrong with it?"


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
                             "experimental": {"agent": {"confirmTool": True}}}})
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
        code = await client.close()
        printer.line(f"server   │ exited with code {code}")
        return 0 if result["stopReason"] == "end_turn" and code == 0 else 1


def main() -> int:
    return asyncio.run(demo())
