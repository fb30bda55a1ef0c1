"""A small web server on 127.0.0.1 for web_fetch: an HTML page, redirects, a 6 MB page, a page that never ends,
a chunked and an unsized body, a 404 and an image. Runs in a thread of the test process (`WebServer`), or standalone:
`python -m tests.fakes.web_server` prints its URL and serves until killed."""

from __future__ import annotations

import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Optional
from urllib.parse import parse_qs, urlsplit

PAGE = b"""<!doctype html><html><head><title>Fetch me</title><style>p {color: red}</style>
<script>var secret = "not text";</script></head>
<body><h1>Widgets</h1><p>The <b>widget</b> API has <a href="/docs">docs</a>.</p>
<ul><li>one</li><li>two</li></ul><pre>x = 1
y = 2</pre></body></html>"""
BIG_BYTES = 6 * 1024 * 1024


class _Handler(BaseHTTPRequestHandler):
    server: "_Server"

    def log_message(self, *args) -> None:  # quiet
        pass

    def _send(self, status: int, body: bytes, kind: str = "text/html; charset=utf-8", **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        try:
            if parts.path == "/page.html":
                self._send(200, PAGE)
            elif parts.path == "/plain.txt":
                self._send(200, b"just text\n", "text/plain")
            elif parts.path.startswith("/hops/"):
                left = int(parts.path.rsplit("/", 1)[1])
                self._send(302, b"", Location="/page.html" if left == 0 else f"/hops/{left - 1}")
            elif parts.path == "/to":
                self._send(302, b"", Location=query["url"][0])
            elif parts.path == "/big":
                self._big()
            elif parts.path == "/slow":
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                self.wfile.write(b"the start")
                self.wfile.flush()
                self.server.stopping.wait(60)  # never finishes while the test runs
            elif parts.path.startswith("/echo"):
                self._send(200, self.path.encode(), "text/plain")
            elif parts.path == "/chunked":
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; charset=utf-8")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for piece in ("caf\u00e9 ".encode(), b"in ", b"chunks"):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                self.wfile.write(b"0\r\n\r\n")
            elif parts.path == "/unsized":  # no length: the body ends when the connection closes
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                self.wfile.write(b"until the end")
                self.close_connection = True
            elif parts.path == "/image.png":
                self._send(200, b"\x89PNG\r\n\x1a\n" + bytes(64), "image/png")
            else:
                self._send(404, b"no such page", "text/plain")
        except (BrokenPipeError, ConnectionResetError):  # the client stopped reading (the size cap): expected
            pass

    def _big(self) -> None:
        line = b"<p>" + b"lorem ipsum dolor sit amet " * 37 + b"</p>\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(BIG_BYTES))
        self.end_headers()
        sent = 0
        while sent < BIG_BYTES:
            piece = line[:BIG_BYTES - sent]
            self.wfile.write(piece)
            sent += len(piece)
        self.server.served_big.set()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    stopping: threading.Event
    served_big: threading.Event


class WebServer:
    """The server in a background thread: `url(path)`; `close()` stops it."""

    def __init__(self, cert: Optional[tuple[str, str]] = None) -> None:
        """`cert`: (certificate file, key file) to serve https."""
        self.httpd = _Server(("127.0.0.1", 0), _Handler)
        if cert:
            tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            tls.load_cert_chain(*cert)
            self.httpd.socket = tls.wrap_socket(self.httpd.socket, server_side=True)
        self.scheme = "https" if cert else "http"
        self.httpd.stopping = threading.Event()
        self.httpd.served_big = threading.Event()
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str = "/", host: str = "127.0.0.1") -> str:
        return f"{self.scheme}://{host}:{self.port}{path}"

    def close(self) -> None:
        self.httpd.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()


if __name__ == "__main__":
    server = WebServer()
    print(server.url(), flush=True)
    server.thread.join()
