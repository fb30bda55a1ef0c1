"""The HTTP side every fake model shares (tests/fakes/messages_api.py, chat_completions.py, legacy_completions.py,
bench/oracle_model.py): HTTP/1.1 with keep-alive as real endpoints speak it, event streams in chunked transfer
encoding, optionally over TLS (tests/fakes/certificate.py), and the faults a script can ask of a stream.

Standard library only: the editors' tests run the fakes with the system's python3 (`python3 -m tests.fakes...`).

Stream options a reply can carry (`stream_reply`): "delay" (seconds between events), "cut_after": N (the body ends
cleanly after N events: a stream the server ended before its stop reason), "reset_after": N (the connection is
reset after N events: a TCP RST mid-stream), "silent_after" + "silent_for" (nothing at all for that many seconds
after N events), "hang" (after the events, heartbeats until the client goes away), in-process only "pause_at": N
with "resume": a threading.Event (after N events, wait until it is set or the client goes away).
"""

from __future__ import annotations

import select
import socket
import ssl
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Optional


class ModelServer(ThreadingHTTPServer):
    """A thread per connection on 127.0.0.1, over TLS when given a server `tls` context. `connections` counts the
    connections accepted (each a TCP and, over TLS, a TLS handshake); `handshake_stall` seconds pass before a TLS
    handshake is answered (a handshake that stalls)."""

    daemon_threads = True

    def __init__(self, handler: type[BaseHTTPRequestHandler], tls: Optional[ssl.SSLContext] = None) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self.tls = tls
        self.connections = 0
        self.handshake_stall = 0.0

    @property
    def base_url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.server_address[1]}"

    def process_request(self, request: Any, client_address: Any) -> None:
        self.connections += 1
        super().process_request(request, client_address)

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up on a handshake or a connection: the fault a test made, not the fake's

    def start(self) -> "ModelServer":
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


class Disconnected(Exception):
    """The client closed or reset the connection while the fake was answering."""


class ModelHandler(BaseHTTPRequestHandler):
    """One connection: requests one after another (keep-alive); the writers of JSON answers and event streams."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # as model servers do (uvicorn, Go): else each event on a kept-alive connection
    # waits for the ACK of the one before, which the client delays up to 40 ms
    server: ModelServer
    arrived = 0.0
    """time.perf_counter() when the current request's line was read."""

    def setup(self) -> None:
        if self.server.tls is not None:
            time.sleep(self.server.handshake_stall)
            # the handshake in this connection's thread, not in the accepting one: a stalled client stalls only itself
            self.request = self.server.tls.wrap_socket(self.request, server_side=True)
        super().setup()

    def parse_request(self) -> bool:
        self.arrived = time.perf_counter()
        return super().parse_request()

    def log_message(self, *args: Any) -> None:
        pass

    def read_body(self) -> Optional[bytes]:
        """The request's body; None when the client went away before sending all of it (an aborted call)."""
        length = int(self.headers.get("content-length", 0))
        raw = self.rfile.read(length)
        if len(raw) < length:
            self.close_connection = True
            return None
        return raw

    def json(self, status: int, body: Any, headers: Optional[dict[str, str]] = None) -> None:
        import json

        self.raw(status, json.dumps(body).encode(), "application/json", headers)

    def raw(self, status: int, data: bytes, content_type: str, headers: Optional[dict[str, str]] = None) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def stream_reply(self, frames: list[str], reply: dict[str, Any], heartbeat: str, content_type: str,
                     status: int = 200, last: str = "") -> bool:
        """Stream `frames` (each a whole SSE event, blank line included) as one chunked body with `reply`'s stream
        options (module docstring), then `last` (an API's own end marker); False when the client went away before
        its end."""
        try:
            time.sleep(reply.get("stall", 0))
            if reply.get("hold"):
                self.hold()
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("transfer-encoding", "chunked")
            if "cut_after" in reply:  # it closes the connection after this body: said, so none is sent on it again
                self.send_header("connection", "close")  # (a request sent as it closes waited for a readTimeout)
            self.end_headers()
            for n, frame in enumerate(frames):
                if n == reply.get("cut_after"):
                    self._end()
                    self.close_connection = True
                    return True
                if n == reply.get("reset_after"):
                    self.reset()
                    return True
                if n == reply.get("pause_at"):
                    self.hold(reply["resume"])
                self.chunk(frame.encode())
                if reply.get("delay"):
                    time.sleep(reply["delay"])
                if n + 1 == reply.get("silent_after"):  # a stall mid-stream: nothing, not even comments
                    time.sleep(reply.get("silent_for", 30))
            while reply.get("hang"):  # keep the stream open until the client goes away
                self.chunk(heartbeat.encode())
                time.sleep(0.05)
            self.chunk(last.encode())
            self._end()
            return True
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, Disconnected):
            self.close_connection = True
            return False

    def chunk(self, data: bytes) -> None:
        if data:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

    def _end(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def reset(self) -> None:
        """Reset the connection (an RST, as a dropped link or a crashed proxy sends)."""
        self.close_connection = True
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()

    def hold(self, until: Optional[threading.Event] = None) -> None:
        """Answer nothing until the client closes the connection (Disconnected), or until `until` is set."""
        while not (until is not None and until.is_set()):
            if self.closed_within(0.05):
                raise Disconnected

    def closed_within(self, seconds: float) -> bool:
        """Wait up to `seconds`, watching the socket: True as soon as the client closes it."""
        deadline = time.perf_counter() + seconds
        while (left := deadline - time.perf_counter()) > 0:
            readable, _, _ = select.select([self.connection], [], [], min(left, 0.002))
            if readable and self._gone():
                return True
        return False

    def _gone(self) -> bool:
        try:
            if isinstance(self.connection, ssl.SSLSocket):  # no MSG_PEEK over TLS: mid-request, a client sends
                self.connection.settimeout(0.05)  # nothing but its close
                try:
                    return not self.connection.recv(1)
                except (socket.timeout, ssl.SSLWantReadError):
                    return False
                finally:
                    self.connection.settimeout(None)
            return not self.connection.recv(1, socket.MSG_PEEK)
        except OSError:
            return True


def sse(data: str, event: Optional[str] = None) -> str:
    """One SSE event."""
    return (f"event: {event}\n" if event else "") + f"data: {data}\n\n"


def serve_script(make: Callable[[list[dict[str, Any]]], Any], url: Callable[[Any], str], doc: str) -> None:
    """Serve the script file named on the command line with the fake `make` builds from it, its URL (`url`) on
    the first line of stdout, until killed."""
    import argparse
    import json
    from pathlib import Path

    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("script", type=Path)
    parser.add_argument("--record", type=Path, help="write every request body received to this JSON file")
    args = parser.parse_args()
    fake = make(json.loads(args.script.read_text()))
    if args.record:
        fake.record = args.record
    print(url(fake), flush=True)
    try:
        fake.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
