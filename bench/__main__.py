"""`python -m bench [--quick]`: every figure, one table (figure | agent-lsp | reference | ratio | goal | met),
and docs/benchmarks.md rewritten with it, the machine and the command. `--quick` is CI's smoke run: few
iterations, small trees, no figure judged by CI (a crash is the failure)."""

from __future__ import annotations

import argparse
import asyncio
import compileall
import os
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))
from bench import figures, language  # noqa: E402
from bench.figures import Row  # noqa: E402
from bench import chat_cost, next_edits, remote, suggestions, symbol_tools, tools_scale, workflow  # noqa: E402

DOC = Path(__file__).parents[1] / "docs" / "benchmarks.md"
ROWS = 85
"""Every run prints this many rows; fewer means a figure went missing (a failure, in CI too)."""


async def run(quick: bool, only: frozenset[str] = frozenset()) -> list[Row]:
    root = figures.scratch()
    try:
        rows: list[Row] = []
        steps = [
            ("start-up", lambda: figures.startup(3 if quick else 7, quick)),
            ("first chat and stream", lambda: figures.first_chat_and_stream(1 if quick else 2, quick, root)),
            ("chat cost", lambda: chat_cost.chat_cost(5 if quick else 30, 10 if quick else 100,
                                                      1 if quick else 3, root)),
            ("parallel tools", lambda: figures.parallel_tools(1 if quick else 5, root)),
            ("search and list_files", lambda: figures.search_and_list(1 if quick else 5, quick, root)),
            ("editor scale", lambda: figures.editor_scale(20 if quick else 300, 50 if quick else 1000,
                                                          100 if quick else 1000, root)),
            ("prompt cache", lambda: figures.prompt_cache(6 if quick else 20, root)),
            ("memory", lambda: figures.memory_over_time((1, 5, 10) if quick else (1, 100, 300), root)),
            ("abort", lambda: figures.abort(2 if quick else 5)),
            ("subagents", lambda: workflow.parallel_tasks(1 if quick else 5, root)),
            ("plan update", lambda: workflow.plan_update(20 if quick else 500)),
            ("find_references", lambda: language.find_references(3 if quick else 20, 2 if quick else 4,
                                                                   root)),
            ("symbol tools", lambda: symbol_tools.symbol_tools(quick, root)),
            ("web_fetch", lambda: figures.web_fetch(1 if quick else 3, root)),
            ("search open buffers", lambda: tools_scale.search_open_buffers(1 if quick else 7, 50 if quick else 1000,
                                                                           root)),
            ("suggestions replay", lambda: suggestions.replay(quick, root)),
            ("suggestions accepting", lambda: suggestions.accepting(quick, root)),
            ("suggestions closing", lambda: suggestions.closing(quick, root)),
            ("suggestions scale", lambda: suggestions.scale(quick, root)),
            ("remote model", lambda: remote.remote(quick, root)),
            ("remote accepting", lambda: remote.accepting(quick, root)),
            ("remote cancelling", lambda: remote.cancelling(quick, root)),
            ("next edits replay", lambda: next_edits.replay(quick, root)),
            ("next edits scale", lambda: next_edits.scale(quick, root)),
        ]
        unknown = only - {name for name, _ in steps}
        if unknown:
            sys.exit(f"no such figure: {', '.join(sorted(unknown))} (figures: {', '.join(n for n, _ in steps)})")
        for name, step in steps:
            if only and name not in only:
                continue
            started = time.perf_counter()
            print(f"-- {name}", file=sys.stderr, flush=True)
            rows += await step()
            print(f"   {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
        return rows
    finally:
        figures.cleanup(root)


def table(rows: list[Row]) -> str:
    lines = ["| figure | agent-lsp | reference | ratio | goal | met |", "|---|---|---|---:|---|---|"]
    for r in rows:
        ratio = f"{r.ratio:.2f}×" if r.ratio is not None else ""
        met = "" if r.met is None else ("yes" if r.met else "**no**" + (f": {r.why}" if r.why else ""))
        lines.append(f"| {r.figure} | {r.agent} | {r.reference} | {ratio} | {r.goal} | {met} |")
    return "\n".join(lines)


def machine() -> str:
    import anthropic
    import pygls

    from agent_lsp.tools.ripgrep import rg_binary

    mem = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
               if line.startswith("MemTotal:"))
    rg = os.popen(f"{rg_binary()} --version").readline().strip()
    return (f"{os.cpu_count()} CPUs, {mem / 1024 / 1024:.0f} GiB, {platform.platform()}, CPython "
            f"{platform.python_version()}, pygls {getattr(pygls, '__version__', '2.x')}, anthropic "
            f"{anthropic.__version__}, {rg}; load average {os.getloadavg()[0]:.1f} at the start")


def write_doc(rows: list[Row], command: str, about: str, took: float) -> None:
    notes = DOC.read_text().split("<!-- notes -->", 1)[1] if "<!-- notes -->" in DOC.read_text() else ""
    DOC.write_text(f"""# Benchmarks

The latest figures, from one run of `{command}` ({took / 60:.1f} min) on {datetime.now(timezone.utc):%Y-%m-%d}.
Machine: {about}. Each ratio is against a reference started the same way in the same run, runs interleaved;
times are medians with p99. The machine is shared: figures move by about ±10 % between runs.

{table(rows)}
<!-- notes -->{notes}""")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: few iterations, docs left alone")
    parser.add_argument("--only", action="append", default=[], metavar="FIGURE",
                        help="run just this figure (its step name, e.g. 'abort'; repeatable); docs left alone")
    args = parser.parse_args()
    # agent-lsp as pip installs it: compiled to bytecode, as pygls, the SDKs and the references already are (pip
    # compiles at install). Where PYTHONDONTWRITEBYTECODE is set (this machine's sandbox sets it), an editable
    # checkout would otherwise compile its ~120 modules at every spawn: ~150 ms no installed agent-lsp spends.
    compileall.compile_dir(Path(__file__).parents[1] / "agent_lsp", quiet=1)
    about = machine()
    started = time.perf_counter()
    rows = asyncio.run(run(args.quick, frozenset(args.only)))
    print(table(rows))
    print(f"\n{about}")
    if args.only:
        return
    if not args.quick:
        write_doc(rows, "python -m bench", about, time.perf_counter() - started)
        print(f"wrote {DOC}")
    if len(rows) != ROWS:
        sys.exit(f"{len(rows)} rows instead of {ROWS}")
    print(f"1 passed ({len(rows)} rows; --quick judges no figure)" if args.quick else f"{len(rows)} rows")


if __name__ == "__main__":
    main()
