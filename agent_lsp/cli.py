"""The `agent-lsp` command: serve LSP on stdio or TCP, or run the offline demo. The composition root."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Optional

from agent_lsp import DISTRIBUTION, __version__
from agent_lsp.capabilities import PROTOCOL_VERSION


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="agent-lsp",
        description="A coding agent served over the Language Server Protocol. "
        "`agent-lsp` serves on stdio; `agent-lsp demo` runs an offline session and prints it.",
    )
    p.add_argument("command", nargs="?", choices=["demo"], help="demo: run the offline demo session")
    p.add_argument("--version", action="version", version=f"{DISTRIBUTION} {__version__} (protocol {PROTOCOL_VERSION})")
    p.add_argument("--stdio", action="store_true", help="serve on stdio (the default)")
    p.add_argument("--tcp", action="store_true", help="serve on TCP instead of stdio")
    p.add_argument("--host", default="127.0.0.1", help="TCP host (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=2087, help="TCP port (default 2087)")
    p.add_argument("--model", help='model name; "demo" for the offline demo model, "script:FILE" for a scripted one')
    p.add_argument("--data-dir", type=Path, help="where sessions are stored (default $XDG_STATE_HOME/agent-lsp)")
    p.add_argument("--log-file", type=Path, help="write logs to this file (never to stdout: it is the wire)")
    p.add_argument("--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    return p


def main(argv: Optional[list[str]] = None) -> None:
    args = parser().parse_args(argv)
    if args.command == "demo":
        from agent_lsp.demo.run import main as demo

        sys.exit(demo())
    target = {"filename": args.log_file} if args.log_file else {"stream": sys.stderr}
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", **target)
    from agent_lsp.config import default_data_dir, environment_layer
    from agent_lsp.lsp.server import create_server

    server = create_server(environment_layer(args.model), args.data_dir or default_data_dir())
    if args.tcp:
        server.start_tcp(args.host, args.port)
    else:
        server.start_io()
