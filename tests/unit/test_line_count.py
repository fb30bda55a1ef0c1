"""Big files' lines counted by `wc -l`, the counts of one loop turn sharing processes; without wc, readers count."""

from __future__ import annotations

import asyncio
import os

import pytest

from agent_lsp.core.tool import ToolContext
from agent_lsp.tools import line_count, read_file
from tests.fakes.editor import FakeEditor

pytestmark = pytest.mark.skipif(os.name == "nt", reason="wc and /dev/fd are POSIX")


async def test_counts_asked_for_together_are_each_files_own(tmp_path):
    sizes = [0, 1, 7, 300_000, 5, 2, 40_000, 1, 9]  # newlines; some files end without one
    paths = []
    for n, lines in enumerate(sizes):
        path = tmp_path / f"f {n}.txt"  # a space: the name never reaches wc
        path.write_bytes(b"line\n" * lines + (b"tail" if n % 2 else b""))
        paths.append(path)
    counter = line_count.LineCounter()
    answers = await asyncio.gather(*(counter.count(p) for p in paths))
    assert [await asyncio.wrap_future(a) for a in answers] == sizes
    assert await counter.count(tmp_path / "missing") is None  # the reader says it does not exist


def test_shares_are_one_a_core_balanced_by_size():
    requests = [line_count._Request(fd, size, None) for fd, size in enumerate([10, 90, 30, 30, 20, 20])]
    shares = line_count._shares(requests, 2)
    assert [[r.size for r in share] for share in shares] == [[90, 10], [30, 30, 20, 20]]
    assert [[r.size for r in share] for share in line_count._shares(requests[:1], 8)] == [[10]]


def test_wc_lines_are_read_by_name_and_the_total_left_out():
    out = b"      3 /dev/fd/5\n 120000 /dev/fd/12\n 120003 total\n"
    assert line_count._parse(out) == {"/dev/fd/5": 3, "/dev/fd/12": 120_000}
    assert line_count._parse(b"wc: /dev/fd/5: Is a directory\n") == {}


async def test_without_wc_a_big_file_is_counted_by_its_reader(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))  # no wc to be found
    (tmp_path / "big.txt").write_bytes(b"x\n" * (read_file.BIG_FILE // 2 + 10) + b"end")
    out = await read_file.TOOL.run(ToolContext(editor=FakeEditor(root=tmp_path)),
                                   read_file.ReadFileInput(path="big.txt", offset=read_file.BIG_FILE // 2 + 11))
    assert out.text == f"big.txt ({read_file.BIG_FILE // 2 + 11} lines)\n{read_file.BIG_FILE // 2 + 11:>6}\tend"


def test_a_batch_left_by_a_closed_loop_does_not_hold_up_the_next(tmp_path):
    path = tmp_path / "a.txt"
    path.write_bytes(b"x\n" * 3)
    counter = line_count.LineCounter()

    async def ask_and_leave():  # the loop closes before its flush runs
        asyncio.ensure_future(counter.count(path))

    loop = asyncio.new_event_loop()
    loop.set_exception_handler(lambda loop, context: None)  # the request left pending is the point
    loop.run_until_complete(ask_and_leave())
    loop.close()

    async def ask():
        return await asyncio.wrap_future(await counter.count(path))

    assert asyncio.run(ask()) == 3
