"""The stdio writer: what one turn of the event loop sends goes out as one write, in order, and nothing is lost."""

from __future__ import annotations

import asyncio

from agent_lsp.lsp.server import _Writer


class Stdout:
    """A stdout that records each write; `broken` makes every write fail as a closed pipe does."""

    def __init__(self, broken: bool = False) -> None:
        self.writes: list[bytes] = []
        self.closed = False
        self.broken = broken

    def write(self, data: bytes) -> None:
        if self.broken:
            raise BrokenPipeError(32, "Broken pipe")
        self.writes.append(data)

    def close(self) -> None:
        self.closed = True


class Protocol:
    def __init__(self) -> None:
        self.gone: list[str] = []

    def client_gone(self, why: str) -> None:
        self.gone.append(why)


def test_one_turn_of_the_loop_is_one_write_in_order():
    stdout = Stdout()
    writer = _Writer(stdout, Protocol(), batched=True)

    async def turn() -> list[list[bytes]]:
        for n in range(3):
            writer.write(f"m{n};".encode())
        before = list(stdout.writes)
        await asyncio.sleep(0)  # one turn of the loop: the flush was scheduled first
        after_first = list(stdout.writes)
        writer.write(b"m3;")
        await asyncio.sleep(0)
        return [before, after_first, list(stdout.writes)]

    assert asyncio.run(turn()) == [[], [b"m0;m1;m2;"], [b"m0;m1;m2;", b"m3;"]]


def test_off_the_loop_and_unbatched_writes_go_out_at_once():
    stdout = Stdout()
    _Writer(stdout, Protocol(), batched=True).write(b"a")
    _Writer(stdout, Protocol()).write(b"b")
    assert stdout.writes == [b"a", b"b"]


def test_close_and_flush_write_what_is_pending():
    stdout = Stdout()
    writer = _Writer(stdout, Protocol(), batched=True)

    async def send_then_close() -> None:
        writer.write(b"last")
        writer.close()

    asyncio.run(send_then_close())
    assert (stdout.writes, stdout.closed) == ([b"last"], True)


def test_a_broken_pipe_in_the_deferred_write_is_the_client_gone():
    protocol = Protocol()
    writer = _Writer(Stdout(broken=True), protocol, batched=True)

    async def send() -> None:
        writer.write(b"x")
        await asyncio.sleep(0)

    asyncio.run(send())
    assert len(protocol.gone) == 1 and "BrokenPipeError" in protocol.gone[0]
