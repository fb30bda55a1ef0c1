"""Tools at scale (issue 21): `search` with every file of a workspace open in the editor, beside `rg -n` on the
same files; 8 `read_file` calls on 8 big files in one turn, beside a turn with one."""

from __future__ import annotations

import asyncio
import random
import subprocess
import time
from pathlib import Path

from agent_lsp.tools.read_file import BIG_FILE
from agent_lsp.tools.ripgrep import rg_binary
from bench.figures import DONE, Driven, Row, _wall, median, ratio_row, round_trip, tool_use
from tests.fakes.messages_api import FakeMessagesAPI

WORDS = "alpha beta gamma delta epsilon zeta theta iota kappa lambda".split()
PATTERN = r"return 4242\d"


def _lines(rng: random.Random, count: int) -> str:
    return "".join(f"def f{i}({rng.choice(WORDS)}): return {rng.randint(0, 99999)}  # "
                   f"{' '.join(rng.choices(WORDS, k=5))}\n" for i in range(count))


def make_files(root: Path, files: int, lines: int) -> list[Path]:
    """`files` Python files of `lines` lines (~80 bytes each) under `root`, 100 a folder."""
    rng = random.Random(3)
    made = []
    for n in range(files):
        folder = root / f"pkg{n // 100:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"m{n % 100:03d}.py"
        path.write_text(_lines(rng, lines))
        made.append(path)
    return made


async def _open_all(d: Driven, files: list[Path], edited: bool) -> None:
    """didOpen every file: its text as on disk, or (`edited`) with one line more at the end, unsaved."""
    for version, path in enumerate(files, 1):
        text = path.read_text()
        if edited:
            text += "# edited\n"
        d.client.notify("textDocument/didOpen", {"textDocument": {
            "uri": path.as_uri(), "languageId": "python", "version": version, "text": text}})
    await round_trip(d.client)


async def search_open_buffers(runs: int, files: int, root: Path) -> list[Row]:
    """`files` files of ~36 KB (580 lines), all open in the editor: equal to disk, then all unsaved; one `search`
    call (first tool_call → completed) against `rg -n PATTERN` over the same tree, interleaved."""
    ws = root.parent / "open-buffers"
    paths = await asyncio.to_thread(make_files, ws, files, 580)
    megabytes = sum(p.stat().st_size for p in paths) / 1e6
    api = FakeMessagesAPI().start()
    rg = rg_binary()
    rows = []
    for edited in (False, True):
        agent, ref = [], []
        async with Driven(api, ws, state="state-open-buffers") as d:
            await _open_all(d, paths, edited)
            await d.chat(tool_use(("search", {"pattern": PATTERN})), DONE)  # warm: the first look at the buffers
            for _ in range(runs):
                await d.chat(tool_use(("search", {"pattern": PATTERN})), DONE)
                agent.append(d.tool_span())
                ref.append(await _wall(rg, "-n", PATTERN, cwd=ws))
        state = "all unsaved" if edited else "all equal to disk"
        rows.append(ratio_row(f"search over {files:,} open buffers ({megabytes:.0f} MB, {state}), vs `rg -n` on "
                              "the same files", agent, ref, 3.0))
    api.stop()
    return rows


async def parallel_reads(runs: int, lines: int, root: Path) -> list[Row]:
    """One turn with 8 `read_file` calls on 8 different files of `lines` lines, against a turn with one (on a
    ninth file, so no call reads what the one before it just read); first tool_call → last completed."""
    ws = root.parent / "big-files"
    paths = await asyncio.to_thread(make_files, ws, 9, lines)
    megabytes = paths[0].stat().st_size / 1e6
    names = [p.relative_to(ws).as_posix() for p in paths]
    api = FakeMessagesAPI().start()
    one, eight, wc_one, wc_eight = [], [], [], []
    async with Driven(api, ws, state="state-big-files") as d:
        await d.chat(tool_use(("read_file", {"path": names[8]})), DONE)  # warm: the tool's code loaded
        for _ in range(runs):
            await d.chat(tool_use(("read_file", {"path": names[8]})), DONE)
            one.append(d.tool_span())
            await d.chat(tool_use(*[("read_file", {"path": name}) for name in names[:8]]), DONE)
            eight.append(d.tool_span())
            wc_one.append(await _wc_lines(ws, names[8:]))
            wc_eight.append(await _wc_lines(ws, names[:8]))
    api.stop()
    row = ratio_row(f"parallel reads: 8 `read_file` of {megabytes:.3g} MB files in one turn, vs 1", eight, one, 4.4)
    row.goal += " (2 cores: 4× is the floor)"
    floor = median(wc_eight) / median(wc_one)
    row.reference += f"; `wc -l` alone, a process a file, 8 files at once vs 1: {floor:.2f}×"
    if not row.met and paths[0].stat().st_size > BIG_FILE:
        row.why = (f"the reads' lines are counted by `wc -l` (processes: no GIL), one process a core; the kernel "
                   f"copies each {megabytes:.3g} MB file out of the page cache, 8 copies on 2 cores, and `wc -l` "
                   f"alone, a process a file, takes {floor:.2f}× one")
    return [row]


async def _wc_lines(ws: Path, names: list[str]) -> float:
    """Wall time of `wc -l` on each of `names` at once, a process a file, each started from a thread of its own."""
    def count(name: str) -> None:
        with open(ws / name, "rb") as stdin:
            subprocess.run(["wc", "-l"], stdin=stdin, stdout=subprocess.DEVNULL, check=True)

    started = time.perf_counter()
    await asyncio.gather(*[asyncio.to_thread(count, name) for name in names])
    return time.perf_counter() - started
