"""web_fetch against a real web server on 127.0.0.1 (tests/fakes/web_server.py): HTML as text, redirects, the size
and time caps, and every refusal, offline."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from agent_lsp.config import clean
from agent_lsp.core.tool import ToolContext, ToolError
from agent_lsp.tools.web_fetch import PARSED, FetchPolicy, WebFetch, WebFetchInput, domain_allowed, html_to_text, refusal
from tests.fakes.editor import FakeEditor
from tests.fakes.web_server import WebServer

LOCAL = FetchPolicy(allow_private=True)


@pytest.fixture(scope="module")
def web():
    server = WebServer()
    yield server
    server.close()


async def fetch(url: str, policy: FetchPolicy = LOCAL, prompt=None) -> str:
    tool = WebFetch(policy)
    return (await tool.run(ToolContext(editor=FakeEditor(root=Path.cwd())), WebFetchInput(url=url, prompt=prompt))).text


async def test_an_html_page_comes_back_as_markdown_text(web):
    text = await fetch(web.url("/page.html"))
    assert text == ("# Fetch me\n\n# Widgets\n\nThe **widget** API has [docs](/docs).\n\n- one\n- two\n\n"
                    "```\nx = 1\ny = 2\n```")


async def test_plain_text_as_it_is_and_the_prompt_kept(web):
    assert await fetch(web.url("/plain.txt")) == "just text\n"
    assert await fetch(web.url("/plain.txt"), prompt="the text") == "Looking for: the text\n\njust text\n"


async def test_chunked_and_unsized_bodies(web):
    assert await fetch(web.url("/chunked")) == "caf\u00e9 in chunks"
    assert await fetch(web.url("/unsized")) == "until the end"


async def test_the_request_target_is_one_encoded_line(web):
    assert await fetch(web.url("/echo/a b/caf\u00e9?q=1%202")) == "/echo/a%20b/caf%C3%A9?q=1%202"


async def test_redirects_are_followed_and_the_final_url_named(web):
    text = await fetch(web.url("/hops/4"))  # five redirects
    assert text.splitlines()[0] == f"URL: {web.url('/page.html')}"
    assert "# Widgets" in text


async def test_more_than_five_redirects_stop(web):
    with pytest.raises(ToolError, match="redirects more than 5 times"):
        await fetch(web.url("/hops/5"))


async def test_a_big_page_is_read_up_to_the_cap_and_bounded(web):
    text = await fetch(web.url("/big"))
    assert text.startswith("[only the first 5 MB of the page were read]\n\nlorem ipsum")
    assert text.endswith("more lines]") and len(text) < 31_000


async def test_a_slow_page_stops_at_the_time_cap(web):
    with pytest.raises(ToolError, match=r"took longer than 1 s \(the webFetch setting's timeout\)"):
        await fetch(web.url("/slow"), FetchPolicy(allow_private=True, timeout=1))


async def test_errors_and_binary_pages_are_tool_errors(web):
    with pytest.raises(ToolError, match=r"answered 404 Not Found:\nno such page"):
        await fetch(web.url("/missing"))
    with pytest.raises(ToolError, match="is image/png, not text"):
        await fetch(web.url("/image.png"))


@pytest.mark.parametrize("url, why", [
    ("ftp://example.com/x", "only http and https"),
    ("file:///etc/passwd", "only http and https"),
    ("http://169.254.169.254/latest/meta-data", "169.254.169.254 is a link-local address"),
    ("http://10.1.2.3/", "10.1.2.3 is a private address"),
    ("http://192.168.0.1/", "192.168.0.1 is a private address"),
    ("http://[::1]:9/", "::1 is a loopback address"),
    ("http://[fc00::1]/", "fc00::1 is a unique-local address"),
    ("http://[fe80::1]/", "fe80::1 is a link-local address"),
    ("http://[::ffff:127.0.0.1]/", "127.0.0.1 is a loopback address"),
    ("http://0.0.0.0:9/", "0.0.0.0 is not an address web_fetch connects to"),
])
async def test_refused_urls(url, why):
    with pytest.raises(ToolError, match=why.replace(".", r"\.").replace("(", r"\(")):
        await fetch(url, FetchPolicy())


async def test_loopback_is_refused_without_allow_private_even_by_name(web):
    with pytest.raises(ToolError, match=r"refused, 127\.0\.0\.1 is a loopback address"):
        await fetch(web.url("/page.html"), FetchPolicy())
    with pytest.raises(ToolError, match=r"refused, localhost resolves to (127\.0\.0\.1|::1) is a loopback"):
        await fetch(f"http://localhost:{web.port}/page.html", FetchPolicy())


async def test_a_redirect_to_a_refused_address_or_domain_is_refused(web):
    with pytest.raises(ToolError, match="0.0.0.0 is not an address web_fetch connects to"):
        await fetch(web.url(f"/to?url=http://0.0.0.0:{web.port}/page.html"))
    only_this = FetchPolicy(allow_private=True, allowed_domains=("127.0.0.1",))
    assert "# Widgets" in await fetch(web.url("/page.html"), only_this)
    with pytest.raises(ToolError, match="localhost is not in the webFetch setting's allowedDomains"):
        await fetch(web.url(f"/to?url=http://localhost:{web.port}/page.html"), only_this)
    with pytest.raises(ToolError, match="only http and https"):
        await fetch(web.url("/to?url=file:///etc/passwd"))


async def test_a_domain_outside_allowed_domains_is_refused():
    with pytest.raises(ToolError, match="example.org is not in the webFetch setting's allowedDomains"):
        await fetch("https://example.org/", FetchPolicy(allowed_domains=("example.com",)))
    assert domain_allowed("docs.Example.com", ("example.com",)) and not domain_allowed("badexample.com",
                                                                                      ("example.com",))


@pytest.fixture(scope="module")
def https_web(tmp_path_factory):
    """An https server whose certificate names `localhost` only, signed by itself (openssl makes it)."""
    if not shutil.which("openssl"):
        pytest.skip("openssl is needed to make a certificate")
    where = tmp_path_factory.mktemp("tls")
    cert, key = str(where / "cert.pem"), str(where / "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                    "/CN=localhost", "-addext", "subjectAltName=DNS:localhost", "-keyout", key, "-out", cert],
                   check=True, capture_output=True)
    server = WebServer(cert=(cert, key))
    yield server, cert
    server.close()


async def test_https_checks_the_certificate_against_the_host_name_not_the_address(https_web, monkeypatch):
    server, cert = https_web
    with pytest.raises(ToolError, match="certificate verify failed"):  # not signed by a CA this machine trusts
        await fetch(server.url("/plain.txt", host="localhost"))
    # trusted: the connection goes to the resolved address, and TLS still checks the certificate names `localhost`
    monkeypatch.setenv("SSL_CERT_FILE", cert)
    assert await fetch(server.url("/plain.txt", host="localhost")) == "just text\n"
    with pytest.raises(ToolError, match="certificate verify failed"):  # the same server by address: not its name
        await fetch(server.url("/plain.txt"))


def test_public_addresses_pass():
    assert refusal("93.184.215.14", False) is None and refusal("2606:2800:21f:cb07:6820:80da:af6b:8b2c", False) is None


def test_html_to_text_stops_past_its_limit():
    text = html_to_text("<p>word</p>" * 100_000, limit=1000)
    assert 1000 < len(text) < 1000 + PARSED  # one slice past the limit at most


def test_the_setting_is_checked():
    good, warnings = clean({"webFetch": {"allowPrivate": True, "allowedDomains": ["Docs.Python.org."]}}, "test")
    assert good == {"web_fetch": {"allow_private": True, "allowed_domains": ("docs.python.org",), "timeout": 30.0}}
    assert warnings == []
    _, warnings = clean({"webFetch": {"allowPrivate": "yes"}}, "test")
    assert warnings == ["agent-lsp: setting `webFetch` from test `allowPrivate` must be true or false; using the "
                        "default instead."]


def test_allow_always_covers_the_host_and_plan_mode_hides_fetches():
    from agent_lsp.core.ports import PermissionRequest
    from agent_lsp.sessions.permissions import grant_key, offered

    def request(url: str) -> PermissionRequest:
        return PermissionRequest("t", "web_fetch", "fetch", f"Fetch {url}", {"url": url}, command=url)

    assert grant_key(request("https://Docs.Python.org/3/")) == grant_key(request("https://docs.python.org/x"))
    assert grant_key(request("https://docs.python.org/")) != grant_key(request("https://example.com/"))
    assert offered("fetch", "default") and offered("fetch", "bypassPermissions") and not offered("fetch", "plan")


def test_the_plain_client_question_names_the_url():
    from agent_lsp.core.ports import PermissionRequest
    from agent_lsp.lsp.plain_clients import question

    url = "https://example.com/docs"
    asked = question(PermissionRequest("t", "web_fetch", "fetch", f"Fetch {url}", {"url": url}, command=url))
    assert asked == "agent-lsp wants to fetch https://example.com/docs.\nAllow?"


def test_a_workspace_file_sets_web_fetch_only_once_trusted():
    from agent_lsp.config import GATED

    assert "webFetch" in GATED
