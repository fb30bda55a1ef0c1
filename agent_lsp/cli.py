"""The `agent-lsp` command: serve LSP on stdio or TCP (or ACP), run one chat headless (`agent-lsp run`), check the
installation, or run the offline demo. The composition root."""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import sys
from pathlib import Path
from typing import Optional

from agent_lsp import DISTRIBUTION, __version__
from agent_lsp.capabilities import PROTOCOL_VERSION


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="agent-lsp",
        description="A coding agent served over the Language Server Protocol. "
        "`agent-lsp` serves on stdio; `agent-lsp run [PROMPT]` runs one chat without an editor (scripts, CI; "
        "`agent-lsp run --help` lists its options); `agent-lsp demo` runs an offline session and prints it; "
        "`agent-lsp doctor` checks the installation and says how to fix what fails; "
        "`agent-lsp model` says which model chats and suggestions would use.",
    )
    p.add_argument("command", nargs="?", choices=["run", "demo", "doctor", "model"],
                   help="run: one chat without an editor (it comes first: `agent-lsp run [OPTIONS] [PROMPT]`); "
                   "demo: run the offline demo session (a chat, then a suggestion accepted); doctor: check the "
                   "installation (exit 1 on a problem); model: which provider, model, base URL and key chats and "
                   "suggestions would use (exit 1 when no chat can be had)")
    p.add_argument("--version", action="version", version=f"{DISTRIBUTION} {__version__} (protocol {PROTOCOL_VERSION})")
    p.add_argument("--stdio", action="store_true", help="serve on stdio (the default)")
    p.add_argument("--acp", action="store_true", help="serve the Agent Client Protocol on stdio instead of LSP")
    p.add_argument("--tcp", action="store_true", help="serve on TCP instead of stdio")
    p.add_argument("--host", help="TCP host (default 127.0.0.1)")
    p.add_argument("--port", type=int, help="TCP port (default 2087)")
    p.add_argument("--model", help='model name; "demo" for the offline demo model, "script:FILE" for a scripted one')
    p.add_argument("--data-dir", type=Path, help="where sessions are stored (default $XDG_STATE_HOME/agent-lsp)")
    p.add_argument("--log-file", type=Path, help="write logs to this file (never to stdout: it is the wire)")
    p.add_argument("--log-level", choices=["DEBUG", "INFO", "WARNING", "ERROR"], help="default WARNING")
    p.add_argument("--json", action="store_true", help="doctor, model: print the report as one JSON object")
    p.add_argument("--settings", help="model: an editor's settings (its initializationOptions) as a JSON object, "
                   "over the environment and the user settings file")
    return p


SERVE_ONLY = ("stdio", "tcp", "host", "port", "model", "data_dir", "log_file", "log_level")
"""Options of serving; the demo runs its own server (stdio, demo model, a scratch store) and takes none."""
DOCTOR_TAKES = ("model", "data_dir")
"""Serving options doctor checks with (which provider, which data directory); it refuses the others."""


def main(argv: Optional[list[str]] = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["run"]:  # its own options (headless/options.py); its output is stdout, its logs stderr
        from agent_lsp.headless.run import main as run

        status = run(argv[1:])
        logging.shutdown()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # a reader gone (`| head`): nothing more to say
                pass
        os._exit(status)  # the chat is saved: skip the interpreter's slow teardown of the SDK modules
    p = parser()
    args, unknown = p.parse_known_args(argv)
    if args.command == "run":
        p.error("`run` comes first, with its own options: agent-lsp run [OPTIONS] [PROMPT]")
    if unknown:
        p.error(f"unrecognized arguments: {' '.join(unknown)}")
    if args.settings is not None and args.command != "model":
        p.error("--settings applies only to `agent-lsp model`")
    if args.command == "demo":
        given = [f"--{name.replace('_', '-')}" for name in SERVE_ONLY if getattr(args, name) not in (None, False)]
        if given:
            p.error(f"demo takes no options ({', '.join(given)} given): it starts its own server over stdio "
                    "with the demo model; run `agent-lsp` without `demo` to serve.")
        from agent_lsp.demo.run import main as demo

        sys.exit(demo())
    if args.command == "doctor":
        given = [f"--{name.replace('_', '-')}" for name in SERVE_ONLY
                 if name not in DOCTOR_TAKES and getattr(args, name) not in (None, False)]
        if given:
            p.error(f"doctor takes only --json, --model and --data-dir ({', '.join(given)} given).")
        from agent_lsp.doctor import main as doctor

        sys.exit(doctor(args.data_dir, args.model, args.json))
    if args.command == "model":
        given = [f"--{name.replace('_', '-')}" for name in SERVE_ONLY
                 if name != "model" and getattr(args, name) not in (None, False)]
        if given:
            p.error(f"model takes only --json, --model and --settings ({', '.join(given)} given).")
        try:
            editor = json.loads(args.settings) if args.settings is not None else None
        except ValueError as e:
            p.error(f"--settings is not JSON ({e}).")
        from agent_lsp.doctor import which_model

        sys.exit(which_model(args.model, editor, args.json))
    if args.json:
        p.error("--json applies only to `agent-lsp doctor` and `agent-lsp model`")
    if args.tcp and args.stdio:
        p.error("--tcp and --stdio exclude each other")
    if not args.tcp and (args.host is not None or args.port is not None):
        p.error("--host and --port apply only with --tcp")
    args.log_level = args.log_level or "WARNING"
    target = {"filename": args.log_file} if args.log_file else {"stream": sys.stderr}
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", **target)
    if args.log_level != "DEBUG":  # pygls logs every message sent at INFO: that much only when debugging
        logging.getLogger("pygls").setLevel(max(logging.WARNING, logging.getLevelName(args.log_level)))
    from agent_lsp.config import default_data_dir, environment_layer

    if args.acp:  # the ACP SDK is imported on this path only: LSP start-up does not pay for it
        from agent_lsp.acp.serve import serve

        serve(environment_layer(args.model), args.data_dir or default_data_dir())
        return
    from agent_lsp.lsp.server import create_server

    # What is imported by now lives as long as the process: kept out of every later collection. Without it, the
    # collections during pygls's converter set-up scan all of lsprotocol's classes again (~30 ms of start-up).
    gc.freeze()
    server = create_server(environment_layer(args.model), args.data_dir or default_data_dir())
    if args.tcp:
        server.start_tcp(args.host or "127.0.0.1", args.port or 2087)
    else:
        server.start_io()
    # The loop has closed (exit, or the client went away) and every chat has been cancelled and saved. End now:
    # the interpreter's own teardown of the SDK modules takes seconds on a busy machine and has nothing to save.
    if server.protocol.exit_code is None:
        logging.getLogger(__name__).info("the client closed the connection without exit; stopping")
    logging.shutdown()
    sys.stderr.flush()
    os._exit(server.protocol.exit_code or 0)
