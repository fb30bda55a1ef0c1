"""`agent-lsp run`'s command line: the options checked (a bad one exits 2 with a message naming it, before anything
is written), and the prompt read: the argument, else standard input."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Optional

from agent_lsp.config import HARD_MAX_TURNS, PERMISSION_MODES, default_data_dir
from agent_lsp.core.paths import real

OUTPUT_FORMATS = ("text", "json", "stream-json")


@dataclass(frozen=True)
class RunOptions:
    """One headless run as its command line asked for it, checked."""

    prompt: Optional[str]
    """The PROMPT argument; None: read standard input."""
    output_format: str
    permission_mode: str
    allowed_tools: frozenset[str]
    session: Optional[str]
    max_turns: Optional[int]
    model: Optional[str]
    data_dir: Path
    cwd: Path


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="agent-lsp run", allow_abbrev=False,
        description="Run one chat without an editor (scripts, git hooks, CI) and print its answer. The workspace is "
        "--cwd; settings, sessions, tools, hooks and MCP servers are an editor's. Nobody can be asked: in the "
        "default permission mode a tool that would ask is refused unless --allowed-tools names it. Exit status: "
        "0 answered, 1 the chat failed, 2 bad arguments, 130 stopped by SIGINT or SIGTERM.")
    p.add_argument("prompt", nargs="*", metavar="PROMPT",
                   help="what to ask, as one argument (quote it); without it, standard input is read to its end")
    p.add_argument("--output-format", choices=OUTPUT_FORMATS, default="text",
                   help="text: the final answer (default); json: one result object; stream-json: one JSON object "
                   "per line as the chat happens (init, each update, the result)")
    p.add_argument("--permission-mode", choices=PERMISSION_MODES, default="default",
                   help="default (the default): tools that would ask are refused; acceptEdits: edits run, commands "
                   "and fetches are refused; plan: read-only; bypassPermissions: everything runs")
    p.add_argument("--allowed-tools", metavar="NAME,...", default="",
                   help="tools that run without asking, by name (e.g. edit_file,run_command)")
    p.add_argument("--session", metavar="ID", help="continue that session (an editor's or an earlier run's)")
    p.add_argument("--max-turns", metavar="N", type=int,
                   help=f"model calls at most (-1: up to {HARD_MAX_TURNS}; default: the maxTurns setting)")
    p.add_argument("--model", metavar="NAME", help='the model; "demo" for the offline demo model')
    p.add_argument("--data-dir", metavar="D", type=Path,
                   help="where sessions are stored (default $XDG_STATE_HOME/agent-lsp, as for editors)")
    p.add_argument("--cwd", metavar="DIR", type=Path, help="the workspace folder (default: the current directory)")
    return p


def parse(argv: list[str]) -> RunOptions:
    """The checked options; a bad one exits 2 with a message naming it (argparse's way)."""
    p = parser()
    args = p.parse_args(argv)
    if len(args.prompt) > 1:
        p.error(f"PROMPT is one argument: quote it (got {len(args.prompt)} words: {' '.join(args.prompt)[:80]!r})")
    if args.max_turns is not None and args.max_turns < -1:
        p.error(f"--max-turns {args.max_turns}: must be -1 (up to {HARD_MAX_TURNS}), 0 (no model call) or more")
    cwd = (args.cwd or Path.cwd()).absolute()
    if not cwd.is_dir():
        p.error(f"--cwd {cwd}: {'not a folder' if cwd.exists() else 'no such folder'}")
    data_dir = (args.data_dir or default_data_dir()).absolute()
    if data_dir.exists() and not data_dir.is_dir():
        p.error(f"--data-dir {data_dir}: not a folder")
    allowed = frozenset(name.strip() for name in args.allowed_tools.split(",") if name.strip())
    unknown = sorted(name for name in allowed if name not in tool_names() and not name.startswith("mcp__"))
    if unknown:
        p.error(f"--allowed-tools: no tool is named {', '.join(unknown)} (tools: {', '.join(sorted(tool_names()))}; "
                "an MCP server's tools are mcp__<server>__<tool>)")
    if args.session is not None and not session_exists(data_dir, args.session):
        p.error(f"--session {args.session}: no session has this id in {data_dir}")
    return RunOptions(prompt=args.prompt[0] if args.prompt else None, output_format=args.output_format,
                      permission_mode=args.permission_mode, allowed_tools=allowed, session=args.session,
                      max_turns=args.max_turns, model=args.model, data_dir=data_dir, cwd=real(cwd))


def tool_names() -> set[str]:
    """The names of the tools a chat may be offered, MCP servers' aside."""
    from agent_lsp import tools
    from agent_lsp.tools.forget import Forget
    from agent_lsp.tools.remember import Remember

    return {*tools.BY_NAME, *(cls.name for cls in tools.LANGUAGE_TOOLS), Remember.name, Forget.name}


def session_exists(data_dir: Path, session_id: str) -> bool:
    """Whether the store under `data_dir` has that session (no store is made to find out)."""
    if not (data_dir / "sessions.db").is_file():
        return False
    from agent_lsp.sessions.store import open_store

    store, _ = open_store(data_dir)
    return store is not None and store.session(session_id) is not None


def read_prompt(given: Optional[str], stdin: Optional[IO[bytes]]) -> str:
    """The prompt: `given`, else all of standard input (UTF-8); ValueError saying why there is none."""
    if given is None:
        if stdin is None:
            raise ValueError("no prompt: give PROMPT, or pipe it on standard input (standard input is closed)")
        try:
            given = stdin.read().decode("utf-8", errors="replace")
        except (OSError, ValueError) as e:
            raise ValueError(f"no prompt: standard input cannot be read ({e}); give PROMPT instead") from None
        if not given.strip():
            raise ValueError("the prompt read from standard input is empty: give PROMPT, or pipe it in")
    elif not given.strip():
        raise ValueError("PROMPT is empty: say what to do")
    return given
