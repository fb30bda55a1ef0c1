"""Tools at scale (issue 21): `search` with every file of a workspace open in the editor, beside `rg -n` on the
same files."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

from agent_lsp.tools.ripgrep import rg_binary
from bench.figures import DONE, Driven, Row, _wall, ratio_row, round_trip, tool_use
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
