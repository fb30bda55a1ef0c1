"""The transport's writer: each message goes out as written, in order; once the client has gone, nothing raises."""

from __future__ import annotations

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


def test_writes_go_out_in_order_and_close_closes():
    stdout, protocol = Stdout(), Protocol()
    writer = _Writer(stdout, protocol)
    for n in range(3):
        writer.write(f"m{n};".encode())
    writer.close()
    assert (stdout.writes, stdout.closed, protocol.gone) == ([b"m0;", b"m1;", b"m2;"], True, [])


def test_a_broken_pipe_is_the_client_gone():
    protocol = Protocol()
    assert _Writer(Stdout(broken=True), protocol).write(b"x") is None
    assert len(protocol.gone) == 1 and "BrokenPipeError" in protocol.gone[0]
