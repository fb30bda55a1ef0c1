"""Images of a chat (PROTOCOL §9 "Images"): the ones a front end received, checked, and image files the user
mentioned, read; each becomes an `ImagePart` of the user message."""

from __future__ import annotations

import asyncio
import base64
import binascii
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from agent_lsp.core.messages import ImagePart

IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
MAX_IMAGE_BYTES = 5 * 1024 * 1024
"""The most an image may hold, decoded (the Anthropic API's own limit)."""
EXTENSIONS = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
              ".webp": "image/webp"}


class BadImage(ValueError):
    """An image that cannot be sent; `field` names it (`images.1`, `prompt.2`)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class RawImage:
    """An image as a front end received it: a declared type and base64 data, and where it was in the request."""

    mime_type: str
    data: str
    field: str


def sniff(head: bytes) -> Optional[str]:
    """The image type the first bytes of a file say, if one of the four."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def _checked(raw: RawImage) -> ImagePart:
    if raw.mime_type not in IMAGE_TYPES:
        raise BadImage(raw.field, f"{raw.mime_type!r} is not an image type the models take ({', '.join(IMAGE_TYPES)})")
    if len(raw.data) > (MAX_IMAGE_BYTES + 2) // 3 * 4 + 4:  # too long before decoding anything
        raise BadImage(raw.field, f"the image is over {MAX_IMAGE_BYTES // (1024 * 1024)} MiB")
    try:
        size = len(base64.b64decode(raw.data, validate=True))
    except (binascii.Error, ValueError):
        raise BadImage(raw.field, "data is not valid base64") from None
    if size > MAX_IMAGE_BYTES:
        raise BadImage(raw.field, f"the image is over {MAX_IMAGE_BYTES // (1024 * 1024)} MiB")
    if size == 0:
        raise BadImage(raw.field, "the image is empty")
    return ImagePart(media_type=raw.mime_type, data=raw.data)


async def check_images(images: list[RawImage]) -> list[ImagePart]:
    """The images as message parts; BadImage naming the first that is not one of the four types, not base64, or
    over 5 MiB decoded. Decoding megabytes runs off the event loop."""
    return await asyncio.to_thread(lambda: [_checked(raw) for raw in images]) if images else []


def image_type(path: Path) -> Optional[str]:
    """The type of an image file, by its first bytes, else by its extension (then reading it says what is wrong)."""
    try:
        with path.open("rb") as f:
            found = sniff(f.read(16))
    except OSError:
        found = None
    return found or EXTENSIONS.get(path.suffix.lower())


def read_image(path: Path, field: str) -> ImagePart:
    """An image file as a message part; BadImage naming `field` when it is over 5 MiB or cannot be read."""
    try:
        size = path.stat().st_size
        if size > MAX_IMAGE_BYTES:
            raise BadImage(field, f"{path.name} is over {MAX_IMAGE_BYTES // (1024 * 1024)} MiB")
        data = path.read_bytes()
    except OSError as e:
        raise BadImage(field, f"{path.name} cannot be read: {e.strerror or e}") from None
    kind = sniff(data[:16])
    if kind is None:
        raise BadImage(field, f"{path.name} is not a PNG, JPEG, GIF or WebP image")
    return ImagePart(media_type=kind, data=base64.b64encode(data).decode("ascii"))
