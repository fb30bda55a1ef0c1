"""A misbehaving MCP server over stdio, in plain JSON-RPC (no SDK, so that it can break the protocol at will).

`python -m tests.fakes.mcp_raw MODE DIR`: writes DIR/pid once serving. Tools: `good` (answers "fine") and `act`,
whose call does what MODE says:
  hang     never answers the call (writes DIR/started)
  big      answers a text of BIG_BYTES (env, default 50 MB)
  die      exits in the middle of the call, answering nothing
  schema   answers "fine", but tools/list also offers `bad`, whose input schema is not a valid JSON Schema
  refused  answers "fine", but tools/list also offers `odd`, whose entry the MCP SDK's own types refuse
  silent   never answers `initialize`
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

OBJECT = {"type": "object", "properties": {}}


def main() -> None:
    mode, out = sys.argv[1], Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    (out / "pid").write_text(str(os.getpid()))
    for line in sys.stdin:
        message = json.loads(line)
        method, msg_id = message.get("method"), message.get("id")
        if msg_id is None or method is None:
            continue  # notifications, responses
        if method == "initialize" and mode == "silent":
            continue
        if method == "initialize":
            result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                      "serverInfo": {"name": f"raw-{mode}", "version": "0"}}
        elif method == "tools/list":
            tools = [{"name": "good", "description": "Fine.", "inputSchema": OBJECT},
                     {"name": "act", "description": f"Does {mode}.", "inputSchema": OBJECT}]
            if mode == "schema":
                tools.append({"name": "bad", "description": "Broken schema.", "inputSchema": {
                    "type": "object", "properties": {"x": {"type": "strin"}}}})
            if mode == "refused":
                tools.append({"name": "odd", "description": "Refused by the SDK's types.", "inputSchema": {
                    "type": "object", "properties": {}, "required": "x"}})
            result = {"tools": tools}
        elif method == "tools/call":
            name = message["params"]["name"]
            if name == "act" and mode == "hang":
                (out / "started").write_text("1")
                continue
            if name == "act" and mode == "die":
                os._exit(3)
            size = int(os.environ.get("BIG_BYTES", 50 * 1024 * 1024)) if name == "act" and mode == "big" else 0
            text = "y" * size if size else "fine"
            result = {"content": [{"type": "text", "text": text}], "isError": False}
        elif method == "ping":
            result = {}
        else:
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg_id, "error": {
                "code": -32601, "message": f"Method not found: {method}"}}) + "\n")
            sys.stdout.flush()
            continue
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": result}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
