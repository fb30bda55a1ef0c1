"""web_fetch: a web page as text for the model (PROTOCOL §9 "Workflow"), bounded in size and time.

The host is resolved once and the connection goes to that address (no DNS rebinding between the check and the
connection); loopback, link-local, private and unique-local addresses are refused unless the `webFetch` setting
allows them, and so is every redirect that leads there.
"""

from __future__ import annotations

import asyncio
import codecs
import functools
import ipaddress
import os
import socket
import ssl
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Iterable, Optional, Union
from urllib.parse import quote, urljoin, urlsplit

from pydantic import Field

from agent_lsp.core.tool import MAX_OUTPUT_CHARS, Preview, Tool, ToolContext, ToolError, ToolInput, ToolOutput, bound

MAX_BYTES = 5 * 1024 * 1024
"""The most of a page read; reading stops past it."""
MAX_REDIRECTS = 5
TIMEOUT = 30.0
MAX_HEADER_BYTES = 64 * 1024
CHUNK = 64 * 1024
PARSED = 8 * 1024
"""HTML is parsed this much at a time, so parsing stops soon after the text is long enough."""
USER_AGENT = "agent-lsp web_fetch"
URL_SAFE = "!#$%&'()*+,/:;=?@[]~"
"""Characters kept as they are in the request target (letters, digits and `_.-~` always are)."""
TEXT_TYPES = ("text/", "application/json", "application/xml", "application/xhtml+xml", "application/javascript",
              "application/ld+json", "application/rss+xml", "application/atom+xml")


@dataclass(frozen=True)
class FetchPolicy:
    """Where web_fetch may go: the `webFetch` setting."""

    allow_private: bool = False
    allowed_domains: tuple[str, ...] = ()
    """When set, only these hosts (and their subdomains)."""
    timeout: float = TIMEOUT
    """Seconds for the whole fetch, redirects included."""


class WebFetchInput(ToolInput):
    url: str = Field(description="The http(s) URL of the page.")
    prompt: Optional[str] = Field(None, description="What you are looking for in the page (kept with the result).")


class Refused(ToolError):
    """A URL or address web_fetch will not go to."""


def refusal(address: str, allow_private: bool) -> Optional[str]:
    """Why web_fetch will not connect to `address`, or None. Unspecified, multicast and reserved addresses are
    never fetched; loopback, link-local, private and unique-local ones only with allowPrivate."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_unspecified or ip.is_multicast:
        return f"{ip} is not an address web_fetch connects to"
    if ip.is_global:
        return None
    local = ("a loopback" if ip.is_loopback else "a link-local" if ip.is_link_local
             else "a unique-local" if ip in _UNIQUE_LOCAL else "a private" if ip.is_private else None)
    if local is None:
        return f"{ip} is not an address web_fetch connects to"
    return None if allow_private else f"{ip} is {local} address (the webFetch setting's allowPrivate permits it)"


_UNIQUE_LOCAL = ipaddress.ip_network("fc00::/7")


def domain_allowed(host: str, domains: tuple[str, ...]) -> bool:
    """Whether `host` is one of `domains` or under one of them (no list: every host)."""
    host = host.lower().rstrip(".")
    return not domains or any(host == d or host.endswith("." + d) for d in (d.lower().strip(".") for d in domains))


@dataclass
class Response:
    status: int
    reason: str
    headers: dict[str, str]
    body: bytearray = field(default_factory=bytearray)
    cut: bool = False
    """The body was longer than the size cap; only the start was read."""


class WebFetch(Tool):
    name = "web_fetch"
    kind = "fetch"
    description = (
        "Fetch a web page (http or https) and read it as text: HTML comes back as Markdown-like text, other text "
        f"as it is. Redirects are followed (at most {MAX_REDIRECTS}); the first line names the final URL when it "
        "differs. Long pages are cut. Local and private network addresses are refused."
    )
    Input = WebFetchInput

    def __init__(self, policy: FetchPolicy = FetchPolicy(), max_bytes: int = MAX_BYTES) -> None:
        self.policy = policy
        self.max_bytes = max_bytes

    def title(self, input: WebFetchInput) -> str:
        return f"Fetch {input.url}"

    async def preview(self, ctx: ToolContext, input: WebFetchInput) -> Preview:
        return Preview(command=input.url)

    async def run(self, ctx: ToolContext, input: WebFetchInput) -> ToolOutput:
        try:
            async with asyncio.timeout(self.policy.timeout):
                url, response = await self._follow(input.url.strip())
        except TimeoutError:
            raise ToolError(f"Fetching {input.url} took longer than {self.policy.timeout:g} s (the webFetch "
                            "setting's timeout).") from None
        except OSError as e:  # refused, reset, TLS (ssl.SSLError is one)
            raise ToolError(f"Fetching {input.url} failed: {e.strerror or e}") from None
        except ValueError as e:  # a header line past the reader's limit, a certificate for another name
            raise ToolError(f"Fetching {input.url} failed: {e}") from None
        kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if response.status >= 400:
            raise ToolError(f"{url} answered {response.status} {response.reason}".rstrip()
                            + (f":\n{_snippet(response)}" if response.body else "."))
        if kind and not kind.startswith(TEXT_TYPES) and not kind.endswith(("+json", "+xml")):
            raise ToolError(f"{url} is {kind}, not text; web_fetch reads text and HTML pages only.")
        text = await asyncio.to_thread(_render, response, kind)  # parsing megabytes of HTML: off the loop
        head = [f"URL: {url}"] if url != input.url.strip() else []
        if input.prompt:
            head.append(f"Looking for: {input.prompt}")
        if response.cut:
            head.append(f"[only the first {self.max_bytes // (1024 * 1024)} MB of the page were read]")
        return ToolOutput(bound("\n".join([*head, *([""] if head else []), text or "(the page has no text)"])))

    async def _follow(self, url: str) -> tuple[str, Response]:
        """The last response of the redirect chain from `url`, each hop checked."""
        for hop in range(MAX_REDIRECTS + 1):
            response = await self._get(url)
            location = response.headers.get("location")
            if response.status not in (301, 302, 303, 307, 308) or not location:
                return url, response
            if hop == MAX_REDIRECTS:
                raise ToolError(f"{url} redirects more than {MAX_REDIRECTS} times; stopped.")
            url = urljoin(url, location.strip())
        raise AssertionError("unreachable")

    async def _get(self, url: str) -> Response:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            raise Refused(f"{url}: only http and https URLs can be fetched.")
        host = parts.hostname
        if not host:
            raise Refused(f"{url}: the URL names no host.")
        if not domain_allowed(host, self.policy.allowed_domains):
            raise Refused(f"{url}: {host} is not in the webFetch setting's allowedDomains.")
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            raise Refused(f"{url}: the port is not a number from 0 to 65535.") from None
        address = await _resolve(host, port)
        why = refusal(address, self.policy.allow_private)
        if why:
            raise Refused(f"{url}: refused, {host} resolves to {why}." if address != host
                          else f"{url}: refused, {why}.")
        try:
            name = host.encode("idna").decode("ascii")
        except UnicodeError:
            raise Refused(f"{url}: {host} is not a valid host name.") from None
        tls = await asyncio.to_thread(_tls_context, os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")
                                      ) if parts.scheme == "https" else None  # loading CA certificates: off the loop
        reader, writer = await asyncio.open_connection(address, port, ssl=tls,
                                                       server_hostname=name if tls else None)
        try:
            # spaces and non-ASCII percent-encoded, what is already encoded kept: one request line, always
            target = quote((parts.path or "/") + (f"?{parts.query}" if parts.query else ""), safe=URL_SAFE)
            authority = f"[{name}]" if ":" in name else name
            authority += f":{parts.port}" if parts.port else ""
            writer.write((f"GET {target} HTTP/1.1\r\nHost: {authority}\r\nUser-Agent: {USER_AGENT}\r\n"
                          "Accept: text/html, text/markdown, text/plain, */*;q=0.5\r\nAccept-Encoding: identity\r\n"
                          "Connection: close\r\n\r\n").encode("ascii", "strict"))
            await writer.drain()
            response = await _read_head(reader, url)
            if response.status in (301, 302, 303, 307, 308) or response.status < 200 or response.status in (204, 304):
                return response
            response.body, response.cut = await _read_body(reader, response.headers, self.max_bytes)
            return response
        finally:
            writer.close()


async def _resolve(host: str, port: int) -> str:
    """The one address the fetch connects to."""
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as e:
        raise ToolError(f"{host} cannot be resolved: {e.strerror or e}") from None
    if not infos:
        raise ToolError(f"{host} cannot be resolved.")
    return str(infos[0][4][0])


@functools.lru_cache(maxsize=2)
def _tls_context(cert_file: Optional[str], cert_dir: Optional[str]) -> ssl.SSLContext:
    """The system's CA certificates (or those SSL_CERT_FILE / SSL_CERT_DIR name, which the arguments key), loaded
    once."""
    return ssl.create_default_context()


async def _read_head(reader: asyncio.StreamReader, url: str) -> Response:
    status_line = await reader.readline()
    words = status_line.decode("latin-1").split(None, 2)
    if len(words) < 2 or not words[0].startswith("HTTP/") or not words[1].isdigit():
        raise ToolError(f"{url} did not answer HTTP.")
    headers: dict[str, str] = {}
    size = len(status_line)
    while True:
        line = await reader.readline()
        size += len(line)
        if size > MAX_HEADER_BYTES:
            raise ToolError(f"{url} answered headers over {MAX_HEADER_BYTES // 1024} KB.")
        if line in (b"\r\n", b"\n", b""):
            break
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    return Response(int(words[1]), words[2].strip() if len(words) > 2 else "", headers)


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str], cap: int) -> tuple[bytearray, bool]:
    """At most `cap` bytes of the body, in one buffer (no second copy of megabytes); whether there was more."""
    body = bytearray()
    if "chunked" in headers.get("transfer-encoding", "").lower():
        while True:
            line = await reader.readline()
            try:
                length = int(line.split(b";", 1)[0].strip() or b"0", 16)
            except ValueError:
                break
            if length == 0:
                break
            while length > 0:
                data = await reader.read(min(length, CHUNK))
                if not data:
                    return body, False
                length -= len(data)
                if _over(body, data, cap):
                    return body, True
            await reader.readline()
        return body, False
    remaining = int(headers["content-length"]) if headers.get("content-length", "").isdigit() else None
    while remaining is None or remaining > 0:
        data = await reader.read(CHUNK if remaining is None else min(CHUNK, remaining))
        if not data:
            break
        if remaining is not None:
            remaining -= len(data)
        if _over(body, data, cap):
            return body, True
    return body, False


def _over(body: bytearray, data: bytes, cap: int) -> bool:
    """Add `data` to `body` up to `cap`; whether some of it did not fit."""
    room = cap - len(body)
    body.extend(data[:room])
    return len(data) > room


def _charset(response: Response) -> str:
    for param in response.headers.get("content-type", "").split(";")[1:]:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset" and value.strip():
            return value.strip().strip('"')
    return "utf-8"


def _decoder(response: Response) -> codecs.IncrementalDecoder:
    try:
        return codecs.getincrementaldecoder(_charset(response))(errors="replace")
    except LookupError:
        return codecs.getincrementaldecoder("utf-8")(errors="replace")


def _snippet(response: Response) -> str:
    return bound(_decoder(response).decode(bytes(response.body[:2000])), 1000)


def _render(response: Response, kind: str) -> str:
    looks_html = kind in ("text/html", "application/xhtml+xml") or (
        not kind and b"<html" in bytes(response.body[:1000]).lower())
    if not looks_html:
        return _decoder(response).decode(response.body, final=True)
    decoder = _decoder(response)
    return html_to_text(decoder.decode(response.body[start:start + PARSED])  # decoded a slice at a time
                        for start in range(0, len(response.body), PARSED))


# ---- HTML to Markdown-like text -------------------------------------------------------------------------

_SKIPPED = {"script", "style", "noscript", "template", "svg", "head", "iframe", "canvas"}
_BLOCKS = {"p", "div", "section", "article", "main", "header", "footer", "nav", "aside", "table", "tr", "ul", "ol",
           "dl", "dt", "dd", "form", "figure", "figcaption", "blockquote", "details", "summary", "hr", "br"}
_VOID = {"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "embed", "source", "track", "wbr"}


class _Text(HTMLParser):
    """A page's readable text with Markdown marks for headings, links, lists, code and emphasis; stops once it has
    more than `limit` characters (the tool's output is cut there anyway)."""

    def __init__(self, limit: int) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.size = 0
        self.limit = limit
        self.skipping = 0
        self.pre = 0
        self.links: list[Optional[str]] = []
        self.title: list[str] = []
        self.in_title = False

    @property
    def full(self) -> bool:
        return self.size > self.limit

    def _add(self, text: str) -> None:
        self.out.append(text)
        self.size += len(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, Optional[str]]]) -> None:
        if tag == "title":
            self.in_title = True
        if tag in _SKIPPED:
            if tag not in _VOID:
                self.skipping += 1
            return
        if self.skipping:
            return
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self._add("\n\n" + "#" * int(tag[1]) + " ")
        elif tag == "li":
            self._add("\n- ")
        elif tag == "pre":
            self.pre += 1
            self._add("\n\n```\n")
        elif tag == "code" and not self.pre:
            self._add("`")
        elif tag in ("strong", "b"):
            self._add("**")
        elif tag in ("em", "i"):
            self._add("_")
        elif tag == "a":
            href = dict(attrs).get("href")
            self.links.append(href if href and not href.startswith(("javascript:", "#")) else None)
            if self.links[-1]:
                self._add("[")
        elif tag in ("td", "th"):
            self._add(" | ")
        elif tag == "img":
            alt = dict(attrs).get("alt")
            if alt:
                self._add(f"[image: {alt}]")
        elif tag in _BLOCKS or tag == "p":
            self._add("\n\n" if tag in ("p", "div", "section", "article", "table", "blockquote") else "\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        if tag in _SKIPPED:
            self.skipping = max(0, self.skipping - 1)
            return
        if self.skipping:
            return
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6", "p"):
            self._add("\n\n")
        elif tag == "pre":
            self.pre = max(0, self.pre - 1)
            self._add("\n```\n\n")
        elif tag == "code" and not self.pre:
            self._add("`")
        elif tag in ("strong", "b"):
            self._add("**")
        elif tag in ("em", "i"):
            self._add("_")
        elif tag == "a" and self.links:
            href = self.links.pop()
            if href:
                self._add(f"]({href})")

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
        if self.skipping:
            return
        if self.pre:
            self._add(data)
        else:
            squeezed = " ".join(data.split())
            if squeezed:
                lead = " " if data[:1].isspace() else ""
                trail = " " if data[-1:].isspace() else ""
                self._add(lead + squeezed + trail)

    def text(self) -> str:
        lines, blank = [], 0
        for line in "".join(self.out).split("\n"):
            line = line.rstrip()
            line = line[1:] if line.startswith(" ") and not line.startswith("  ") else line
            blank = blank + 1 if not line else 0
            if blank <= 1:
                lines.append(line)
        body = "\n".join(lines).strip()
        title = " ".join("".join(self.title).split())
        return f"# {title}\n\n{body}" if title and not body.startswith(f"# {title}") else body


def html_to_text(html: Union[str, Iterable[str]], limit: int = MAX_OUTPUT_CHARS * 2) -> str:
    """A page's text with Markdown marks, from the whole page or its pieces in order; reading stops a little past
    what the tool's output can hold."""
    parser = _Text(limit)
    pieces = (html[start:start + PARSED] for start in range(0, len(html), PARSED)) if isinstance(html, str) else html
    for piece in pieces:
        parser.feed(piece)
        if parser.full:
            break
    else:
        parser.close()
    return parser.text()
