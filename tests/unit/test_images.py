"""Images of a chat: the checks of what a front end received, image files by their first bytes, and the error of a
model that does not take them."""

from __future__ import annotations

import base64

import pytest

from agent_lsp.core.ports import images_refused
from agent_lsp.sessions.images import BadImage, RawImage, check_images, image_type, read_image

PNG = b"\x89PNG\r\n\x1a\n" + bytes(8)


async def test_the_four_types_pass_and_others_are_refused_naming_the_image():
    data = base64.b64encode(PNG).decode()
    parts = await check_images([RawImage(t, data, f"images.{i}") for i, t in
                                enumerate(("image/png", "image/jpeg", "image/gif", "image/webp"))])
    assert [p.media_type for p in parts] == ["image/png", "image/jpeg", "image/gif", "image/webp"]
    with pytest.raises(BadImage) as error:
        await check_images([RawImage("image/png", data, "images.0"), RawImage("image/svg+xml", data, "images.1")])
    assert error.value.field == "images.1"
    for bad, why in (("!!", "not valid base64"), ("", "empty"),
                     (base64.b64encode(bytes(5 * 1024 * 1024 + 1)).decode(), "over 5 MiB")):
        with pytest.raises(BadImage, match=why):
            await check_images([RawImage("image/png", bad, "prompt.2")])


def test_image_files_by_their_first_bytes(tmp_path):
    (tmp_path / "shot").write_bytes(PNG)
    (tmp_path / "a.webp").write_bytes(b"RIFF\x00\x00\x00\x00WEBPVP8 ")
    (tmp_path / "notes.txt").write_text("text")
    (tmp_path / "fake.jpg").write_text("text")
    assert [image_type(tmp_path / n) for n in ("shot", "a.webp", "notes.txt", "fake.jpg")] == [
        "image/png", "image/webp", None, "image/jpeg"]
    assert read_image(tmp_path / "shot", "f").media_type == "image/png"
    with pytest.raises(BadImage, match="fake.jpg is not a PNG, JPEG, GIF or WebP image"):
        read_image(tmp_path / "fake.jpg", "f")


def test_a_refusal_of_images_says_so():
    assert "does not take images" in images_refused("m", 400, "400: invalid request").message
    assert "does not take images" in images_refused("m", 422, "422: image_url is not supported").message
    assert images_refused("m", 422, "422: bad temperature") is None
    assert images_refused("m", 500, "500: image server down") is None
