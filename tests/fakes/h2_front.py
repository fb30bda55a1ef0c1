"""An HTTP/2 endpoint over TLS, as api.anthropic.com and api.openai.com are: a front on 127.0.0.1 that negotiates
h2 by ALPN (with the run's certificate, tests/fakes/certificate.py), ends TLS and HTTP/2, and sends each stream to
an HTTP/1.1 fake model on 127.0.0.1 as a request of its own, the answer back as that stream's DATA as it comes. A
stream the client resets (RST_STREAM) closes its request to the fake (which sees the client gone). It counts the
connections it accepted and the streams the client reset, and sends the HTTP/2 fault, GOAWAY: between requests
(`goaway()`) or in the middle of a stream's answer (`goaway_after_data`), the stream then left unfinished. After
its GOAWAY a connection takes no new stream; it is closed when the client closes it. Needs the `h2` package."""

from __future__ import annotations

import asyncio
import threading
from typing import Optional

import h11
import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions

from tests.fakes.certificate import Certificate


class _Connection:
    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.h2 = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding=None))
        self.writer = writer
        self.requests: dict[int, tuple[list, bytearray]] = {}
        self.answering: dict[int, asyncio.Task] = {}
        self.gone = False
        """GOAWAY sent: what the client sends next is read and dropped."""

    def flush(self) -> None:
        if not self.writer.is_closing():
            self.writer.write(self.h2.data_to_send())

    def go_away(self) -> None:
        if not self.gone:
            self.gone = True
            self.h2.close_connection(h2.errors.ErrorCodes.NO_ERROR, last_stream_id=self.h2.highest_inbound_stream_id)
            self.flush()


class H2Front:
    def __init__(self, target_port: int, cert: Certificate) -> None:
        self.target_port = target_port
        self.connections = 0
        self.streams = 0
        """Streams answered or begun (requests sent to the fake)."""
        self.resets = 0
        """Streams the client reset."""
        self.goaway_after_data: Optional[int] = None
        """The next stream to get this many DATA frames gets a GOAWAY after them, and no more (once)."""
        self.port = 0
        self._tls = cert.server_context()
        self._tls.set_alpn_protocols(["h2"])
        self._open: set[_Connection] = set()
        self._loop = asyncio.new_event_loop()
        ready = threading.Event()
        threading.Thread(target=self._run, args=(ready,), daemon=True).start()
        ready.wait()

    def url(self, path: str = "") -> str:
        return f"https://127.0.0.1:{self.port}{path}"

    def _run(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self._loop)

        async def start() -> None:
            self._server = await asyncio.start_server(self._accepted, "127.0.0.1", 0, ssl=self._tls)
            self.port = self._server.sockets[0].getsockname()[1]
            ready.set()

        self._loop.run_until_complete(start())
        self._loop.run_forever()

    def goaway(self) -> None:
        """GOAWAY on every open connection (a stream still being answered is left unfinished), returning once it
        is written."""
        async def send() -> None:
            for connection in self._open:
                connection.go_away()

        asyncio.run_coroutine_threadsafe(send(), self._loop).result()

    def stop(self) -> None:
        async def close() -> None:
            self._server.close()
            for connection in self._open:
                connection.writer.transport.abort()
            open_ones = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            await asyncio.gather(*open_ones, return_exceptions=True)
            self._loop.stop()

        asyncio.run_coroutine_threadsafe(close(), self._loop)

    async def _accepted(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        connection = _Connection(writer)
        self._open.add(connection)
        connection.h2.initiate_connection()
        connection.flush()
        try:
            while data := await reader.read(65536):
                if not connection.gone:
                    for event in connection.h2.receive_data(data):
                        self._received(connection, event)
                    connection.flush()
        except (OSError, h2.exceptions.ProtocolError):  # the client went away, or broke the protocol: closed below
            pass
        finally:
            self._open.discard(connection)
            for task in connection.answering.values():
                task.cancel()
            writer.transport.abort()

    def _received(self, connection: _Connection, event: h2.events.Event) -> None:
        if isinstance(event, h2.events.RequestReceived):
            connection.requests[event.stream_id] = (event.headers, bytearray())
        elif isinstance(event, h2.events.DataReceived):
            connection.requests[event.stream_id][1].extend(event.data)
            connection.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, h2.events.StreamEnded):
            headers, body = connection.requests.pop(event.stream_id)
            self.streams += 1
            connection.answering[event.stream_id] = asyncio.ensure_future(
                self._answer(connection, event.stream_id, headers, bytes(body)))
        elif isinstance(event, h2.events.StreamReset):
            self.resets += 1
            connection.requests.pop(event.stream_id, None)
            if task := connection.answering.pop(event.stream_id, None):
                task.cancel()  # its request to the fake closed: the model stops

    async def _answer(self, connection: _Connection, stream_id: int, headers: list, body: bytes) -> None:
        """The stream's request sent to the fake over HTTP/1.1, its answer sent back as it comes."""
        fields = dict(headers)
        kept = [(k, v) for k, v in headers if not k.startswith(b":") and k not in (b"content-length", b"host")]
        http = h11.Connection(h11.CLIENT)
        reader, writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        sent_data = 0
        try:
            writer.write(http.send(h11.Request(method=fields[b":method"], target=fields[b":path"], headers=[
                (b"host", fields[b":authority"]), (b"content-length", str(len(body)).encode()), *kept])))
            writer.write(http.send(h11.Data(data=body)) + http.send(h11.EndOfMessage()))
            while True:
                event = http.next_event()
                if event is h11.NEED_DATA:
                    http.receive_data(await reader.read(65536))
                elif isinstance(event, h11.Response):
                    connection.h2.send_headers(stream_id, [(b":status", str(event.status_code).encode()), *[
                        (k, v) for k, v in event.headers if k not in (b"connection", b"keep-alive",
                                                                      b"transfer-encoding")]])
                    connection.flush()
                elif isinstance(event, h11.Data):
                    data, most = bytes(event.data), connection.h2.max_outbound_frame_size
                    for at in range(0, len(data), most):
                        connection.h2.send_data(stream_id, data[at:at + most])
                    connection.flush()
                    sent_data += 1
                    if sent_data == self.goaway_after_data:
                        self.goaway_after_data = None
                        connection.go_away()  # the stream left unfinished: a server going away mid-answer
                        return
                elif isinstance(event, h11.EndOfMessage):
                    connection.h2.end_stream(stream_id)
                    connection.flush()
                    return
                elif isinstance(event, h11.ConnectionClosed):
                    raise ConnectionResetError
        except h2.exceptions.ProtocolError:  # GOAWAY sent meanwhile: this stream is left unfinished
            pass
        except (OSError, h11.RemoteProtocolError):  # the fake reset or cut its answer: so is the stream
            if not connection.gone:
                connection.h2.reset_stream(stream_id, h2.errors.ErrorCodes.INTERNAL_ERROR)
                connection.flush()
        finally:
            connection.answering.pop(stream_id, None)
            writer.transport.abort()
