"""A misbehaving MCP server over stdio or HTTP, in plain JSON-RPC (no SDK, so that it can break the protocol at will).

`python -m tests.fakes.mcp_raw MODE DIR [--http]`: writes DIR/pid once serving (with --http, streamable HTTP on
127.0.0.1, its port in DIR/port). Tools: `good` (answers "fine") and `act`,
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
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Optional

OBJECT = {"type": "object", "properties": {}}


def answer(mode: str, message: dict, out: Path) -> Optional[dict]:
    """The answer to one message, or None: no answer (a notification, a response, or MODE says so)."""
    method, msg_id = message.get("method"), message.get("id")
    if msg_id is None or method is None:
        return None  # notifications, responses
    if method == "initialize" and mode == "silent":
        return None
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
            return None
        if name == "act" and mode == "die":
            os._exit(3)
        size = int(os.environ.get("BIG_BYTES", 50 * 1024 * 1024)) if name == "act" and mode == "big" else 0
        text = "y" * size if size else "fine"
        result = {"content": [{"type": "text", "text": text}], "isError": False}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32601, "message": f"Method not found: {method}"}}
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def serve_stdio(mode: str, out: Path) -> None:
    for line in sys.stdin:
        reply = answer(mode, json.loads(line), out)
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


def serve_http(mode: str, out: Path) -> None:
    """Streamable HTTP in its plainest form: each POSTed request answered as application/json, notifications
    202, no GET stream (405)."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            reply = answer(mode, json.loads(body), out)
            if reply is None:
                self.send_response(202)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self.send_error(405)

        def do_DELETE(self) -> None:
            self.send_error(405)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    (out / "port").write_text(str(server.server_address[1]))
    server.serve_forever()


def main() -> None:
    mode, out = sys.argv[1], Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    (out / "pid").write_text(str(os.getpid()))
    (serve_http if "--http" in sys.argv else serve_stdio)(mode, out)


if __name__ == "__main__":
    main()
