"""A TCP proxy on 127.0.0.1 that adds a round trip: every byte is delivered `delay` seconds after it arrived, each
way (default 20 ms: a 40 ms round trip, a model in another region's data centre), in order. It forwards TLS as it
is (the handshake's round trips pay the delay too) and counts the connections it accepted. Everything stays local."""

from __future__ import annotations

import asyncio
import threading
from typing import Optional


class SlowLink:
    def __init__(self, target_port: int, delay: float = 0.020) -> None:
        self.target_port = target_port
        self.delay = delay
        self.connections = 0
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._server: Optional[asyncio.AbstractServer] = None
        self._open: set[asyncio.StreamWriter] = set()
        ready = threading.Event()
        threading.Thread(target=self._run, args=(ready,), daemon=True).start()
        ready.wait()

    def url(self, scheme: str = "https", path: str = "") -> str:
        return f"{scheme}://127.0.0.1:{self.port}{path}"

    def _run(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self._loop)

        async def start() -> None:
            self._server = await asyncio.start_server(self._accepted, "127.0.0.1", 0)
            self.port = self._server.sockets[0].getsockname()[1]
            ready.set()

        self._loop.run_until_complete(start())
        self._loop.run_forever()

    def stop(self) -> None:
        async def close() -> None:
            if self._server is not None:
                self._server.close()
            # Connections still open are reset, not cancelled: their tasks then end by themselves (asyncio logs an
            # "Exception in callback" for a cancelled connection handler of start_server), none left pending.
            for writer in self._open:
                writer.transport.abort()
            open_ones = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            await asyncio.gather(*open_ones, return_exceptions=True)
            self._loop.stop()

        asyncio.run_coroutine_threadsafe(close(), self._loop)

    async def _accepted(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            model_r, model_w = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            client_w.transport.abort()
            return
        self._open |= {client_w, model_w}
        try:
            await asyncio.gather(self._pipe(client_r, model_w), self._pipe(model_r, client_w))
        finally:
            self._open -= {client_w, model_w}

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue = asyncio.Queue()

        async def deliver() -> None:
            while True:
                at, data = await queue.get()
                if (wait := at - loop.time()) > 0:
                    await asyncio.sleep(wait)
                if data is None:  # the sender closed: close this side too
                    writer.close()
                    return
                if data is False:  # the sender reset: reset this side
                    writer.transport.abort()
                    return
                writer.write(data)

        delivering = loop.create_task(deliver())
        try:
            while data := await reader.read(65536):
                queue.put_nowait((loop.time() + self.delay, data))
            queue.put_nowait((loop.time() + self.delay, None))
        except OSError:
            queue.put_nowait((loop.time() + self.delay, False))
        await delivering
