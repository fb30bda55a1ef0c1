"""web_fetch and images over LSP (PROTOCOL §9 "Workflow"): the real server, the real SDKs against the fakes, and a
real web server on 127.0.0.1 (tests/fakes/web_server.py)."""

from __future__ import annotations

import asyncio
import base64

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from tests.e2e.conftest import (
    Harness,
    chat,
    confirm,
    openai_env,
    sent,
    server_env,
    text,
    tool_use,
    updates_of,
    waiting_for_confirmation,
)
from tests.waiting import until
from tests.fakes.chat_completions import FakeChatCompletions
from tests.fakes.messages_api import FakeMessagesAPI
from tests.fakes.web_server import WebServer

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(48))
GIF = b"GIF89a" + bytes(24)
PNG64 = base64.b64encode(PNG).decode()
GIF64 = base64.b64encode(GIF).decode()


@pytest.fixture
def web():
    server = WebServer()
    yield server
    server.close()


@pytest.fixture(params=["anthropic", "openai"])
def provider(request):
    if request.param == "anthropic":
        fake = FakeMessagesAPI().start()
        yield request.param, fake, server_env(fake.base_url)
    else:
        fake = FakeChatCompletions().start()
        yield request.param, fake, openai_env(fake.api_url)
    fake.stop()


@pytest.fixture
async def both(provider, workspace):
    name, fake, env = provider
    harness = Harness(fake, workspace)
    original = harness.start

    async def start(*args, **kwargs):
        return await original(*args, env=env, **kwargs)

    harness.start = start
    yield harness
    await harness.stop()


def images_sent(provider_name: str, body: dict) -> list[tuple[str, str]]:
    """(type, base64) of every image of the request's user messages, in order, from either wire."""
    found = []
    for message in body["messages"]:
        if message["role"] != "user" or isinstance(message["content"], str):
            continue
        for part in message["content"]:
            if part["type"] == "image":
                found.append((part["source"]["media_type"], part["source"]["data"]))
            elif part["type"] == "image_url":
                head, data = part["image_url"]["url"].split(",", 1)
                found.append((head.removeprefix("data:").removesuffix(";base64"), data))
    return found


async def test_images_and_a_mentioned_image_file_reach_the_model_and_stay_in_the_session(both, provider,
                                                                                         workspace):
    name, fake, _ = provider
    (workspace / "shot.gif").write_bytes(GIF)
    fake.add(text("A screenshot."), text("Still the screenshot."), text("Kept."))
    client = await both.start()
    first = await chat(client, "what is this?", images=[{"mimeType": "image/png", "data": PNG64}],
                       context={"mentions": [{"kind": "file", "uri": (workspace / "shot.gif").as_uri()},
                                             {"kind": "file", "uri": (workspace / "app.py").as_uri()}]})
    assert first["finalMessage"] == "A screenshot."
    assert images_sent(name, fake.requests[0]) == [("image/png", PNG64), ("image/gif", GIF64)]
    assert "@file app.py" in str(fake.requests[0]["messages"]) and "@file shot.gif" not in str(fake.requests[0])
    await chat(client, "and now?", sessionId=first["sessionId"])
    assert images_sent(name, fake.requests[1]) == [("image/png", PNG64), ("image/gif", GIF64)]
    await both.stop_client(client)  # the store kept them: a new server process sends them again
    client = await both.start()
    await chat(client, "after a restart?", sessionId=first["sessionId"])
    assert images_sent(name, fake.requests[2]) == [("image/png", PNG64), ("image/gif", GIF64)]


async def test_agent_history_after_a_restart_shows_each_user_message_with_its_images(lsp, fake_api, workspace):
    (workspace / "shot.gif").write_bytes(GIF)
    fake_api.add(text("A screenshot."), text("Plain."))
    client = await lsp.start()
    first = await chat(client, "what is this?", images=[{"mimeType": "image/png", "data": PNG64}],
                       context={"mentions": [{"kind": "file", "uri": (workspace / "shot.gif").as_uri()}]})
    await chat(client, "and without images?", sessionId=first["sessionId"])
    await lsp.stop_client(client)
    client = await lsp.start()  # a new process on the same data dir: the panel is redrawn from the store
    history = await client.protocol.send_request_async("agent/history", {"sessionId": first["sessionId"]})
    assert [{k: m[k] for k in ("role", "content", "images") if k in m} for m in history["messages"]] == [
        {"role": "user", "content": "what is this?",
         "images": [{"mimeType": "image/png", "data": PNG64}, {"mimeType": "image/gif", "data": GIF64}]},
        {"role": "assistant", "content": "A screenshot."},
        {"role": "user", "content": "and without images?"},
        {"role": "assistant", "content": "Plain."},
    ]


async def test_a_chat_of_images_alone_reaches_the_model_without_a_text_part(both, provider):
    name, fake, _ = provider
    fake.add(text("A screenshot."))
    client = await both.start()
    result = await chat(client, "", images=[{"mimeType": "image/png", "data": PNG64}])
    assert result["stopReason"] == "end_turn" and result["finalMessage"] == "A screenshot."
    (user,) = [m for m in fake.requests[0]["messages"] if m["role"] == "user"]
    assert [part["type"] for part in user["content"]] == ["image" if name == "anthropic" else "image_url"]
    assert images_sent(name, fake.requests[0]) == [("image/png", PNG64)]
    history = await client.protocol.send_request_async("agent/history", {"sessionId": result["sessionId"]})
    assert history["messages"][0] == {"role": "user", "content": "",
                                      "images": [{"mimeType": "image/png", "data": PNG64}]}


async def test_a_chat_with_neither_words_nor_images_is_invalid_params_naming_message(lsp, fake_api):
    client = await lsp.start()
    for message in ("", "  \n"):
        with pytest.raises(JsonRpcInvalidParams) as error:
            await chat(client, message)
        assert error.value.code == -32602 and "message:" in error.value.message
    assert fake_api.requests == []


async def test_a_model_that_rejects_images_is_an_llm_error_saying_so(both, provider):
    name, fake, _ = provider
    fake.add({"status": 400, "error": {"type": "invalid_request_error",
                                       "message": "This model does not support image input."}})
    client = await both.start()
    result = await chat(client, "look", images=[{"mimeType": "image/png", "data": PNG64}])
    assert result["stopReason"] == "error" and result["error"]["type"] == "llm_error"
    assert "does not take images" in result["error"]["message"]
    assert "does not support image input" in result["error"]["message"]


@pytest.mark.parametrize("images, field, why", [
    ([{"mimeType": "image/png", "data": PNG64}, {"mimeType": "image/bmp", "data": PNG64}], "images.1",
     "'image/bmp' is not an image type"),
    ([{"mimeType": "image/png", "data": "not base64!"}], "images.0", "not valid base64"),
    ([{"mimeType": "image/jpeg", "data": base64.b64encode(bytes(5 * 1024 * 1024 + 1)).decode()}], "images.0",
     "over 5 MiB"),
    ([{"mimeType": "image/png"}], "images.0.data", "Field required"),
])
async def test_bad_images_are_invalid_params_and_nothing_reaches_the_model(lsp, fake_api, images, field, why):
    client = await lsp.start()
    with pytest.raises(JsonRpcInvalidParams) as error:
        await chat(client, "look", images=images)
    assert error.value.code == -32602 and f"{field}:" in error.value.message and why in error.value.message
    assert fake_api.requests == []


async def test_a_mentioned_file_that_is_not_really_an_image_is_refused(lsp, fake_api, workspace):
    (workspace / "fake.png").write_text("not a png")
    client = await lsp.start()
    with pytest.raises(JsonRpcInvalidParams) as error:
        await chat(client, "look", context={"mentions": [{"kind": "file", "uri": (workspace / "fake.png").as_uri()}]})
    assert "context.mentions.0.uri: fake.png is not a PNG, JPEG, GIF or WebP image" in error.value.message
    assert fake_api.requests == []


async def test_web_fetch_asks_showing_the_url_and_reads_the_page(lsp, fake_api, web):
    url = web.url("/hops/1")
    fake_api.add(tool_use("web_fetch", {"url": url}, id="toolu_f"), text("Read it."))
    client = await lsp.start(agent={"confirmTool": True}, init_options={"webFetch": {"allowPrivate": True}})
    task = asyncio.ensure_future(chat(client, "read the docs page"))
    await until(waiting_for_confirmation(client))
    call = next(u for u in updates_of(client) if u["kind"] == "tool_call")
    asked = next(u for u in updates_of(client) if u["kind"] == "confirmation_request")
    assert (call["toolKind"], call["title"], asked["command"]) == ("fetch", f"Fetch {url}", url)
    await confirm(client, "allow_once")
    assert (await task)["finalMessage"] == "Read it."
    result = sent(fake_api, 1)[-1]["content"][0]
    assert result["content"].startswith(f"URL: {web.url('/page.html')}\n\n# Fetch me\n\n# Widgets")
    assert "is_error" not in result


async def test_web_fetch_refuses_loopback_by_default_and_is_not_offered_in_plan_mode(lsp, fake_api, web):
    fake_api.add(tool_use("web_fetch", {"url": web.url("/page.html")}, id="toolu_f"), text("Refused."),
                 text("Planned."))
    client = await lsp.start()
    first = await chat(client, "fetch", permissionMode="bypassPermissions")
    result = sent(fake_api, 1)[-1]["content"][0]
    assert result["is_error"] is True and "refused, 127.0.0.1 is a loopback address" in result["content"]
    assert "web_fetch" in [t["name"] for t in fake_api.requests[0]["tools"]]
    await chat(client, "plan it", sessionId=first["sessionId"], permissionMode="plan")
    assert "web_fetch" not in [t["name"] for t in fake_api.requests[2]["tools"]]


async def test_agent_tools_lists_web_fetch_and_the_features_say_so(lsp):
    client = await lsp.start()
    features = client.initialize_result.capabilities.experimental["agent"]["features"]
    assert "webFetch" in features and "images" in features
    listed = await client.protocol.send_request_async("agent/tools", {})
    (fetch,) = [t for t in listed["tools"] if t["name"] == "web_fetch"]
    assert fetch["kind"] == "fetch"
