"""@-mentions: files, selections, diagnostics and symbols the user attached to a message, expanded into text the
model reads with it (PROTOCOL §8 `context.mentions`), bounded, with a note of what was cut."""

from __future__ import annotations

import asyncio

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from agent_lsp.core.messages import ImagePart
from agent_lsp.core.paths import display
from agent_lsp.core.tool import ToolContext, ToolError
from agent_lsp.sessions.images import image_type, read_image
from agent_lsp.tools.get_diagnostics import format_diagnostics
from agent_lsp.tools.paths import resolve
from agent_lsp.tools.read_file import read_text

MAX_MENTION_CHARS = 20_000
MAX_TOTAL_CHARS = 60_000


class BadMention(ValueError):
    """A mention that cannot be expanded; `field` names it (e.g. `context.mentions.0.uri`)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Mention:
    """One mention, as the edge parsed it: a file path, 0-based (first, last) lines where it has a range."""

    kind: str
    path: Optional[Path]
    lines: Optional[tuple[int, int]]
    name: Optional[str]
    origin: Optional[str] = None
    """Where the front end found it, for errors (`prompt.2` over ACP); LSP's `context.mentions.<i>` when None."""

    def field(self, index: int, part: str) -> str:
        """The name of this mention's `part` (uri, range) in the request, for an invalid-params error."""
        return f"{self.origin or f'context.mentions.{index}'}.{part}"


def mention_path(roots: list[Path], field: str, raw_path: Optional[Path], required: bool) -> Optional[Path]:
    """The mention's file inside the workspace; BadMention naming its uri (`field`) otherwise."""
    if raw_path is None:
        if required:
            raise BadMention(field, "a file: URI is required for this kind of mention")
        return None
    try:
        return resolve(roots, str(raw_path))
    except ToolError as e:
        raise BadMention(field, str(e)) from None


def _fence(text: str) -> str:
    return f"```\n{text.rstrip(chr(10))}\n```"


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[{len(text) - limit} more characters not included; use read_file for the rest]"


async def expand_mentions(ctx: ToolContext, mentions: list[Mention],
                          images: Optional[list[ImagePart]] = None) -> Optional[str]:
    """The mentions as one block for the user message; BadMention for one that cannot be read. With `images`,
    a file mention naming an image file is read into it instead (BadImage when it cannot be sent)."""
    roots = ctx.editor.roots
    blocks: list[str] = []
    for index, mention in enumerate(mentions):
        if images is not None and mention.kind == "file" and mention.path is not None:
            path = mention_path(roots, mention.field(index, "uri"), mention.path, required=True)
            if await asyncio.to_thread(image_type, path):
                images.append(await asyncio.to_thread(read_image, path, mention.field(index, "uri")))
                continue
        blocks.append(await _expand(ctx, roots, index, mention))
    if not blocks:
        return None
    text = "\n\n".join(blocks)
    return "<mentions>\n" + _cut(text, MAX_TOTAL_CHARS) + "\n</mentions>"


async def _expand(ctx: ToolContext, roots: list[Path], index: int, mention: Mention) -> str:
    if mention.kind == "diagnostics":
        path = mention_path(roots, mention.field(index, "uri"), mention.path, required=False)
        report = await ctx.editor.diagnostics([path] if path else None)
        where = display(roots, path) if path else "the open documents"
        found = format_diagnostics(roots, report.items) or "(none)"
        return f"@diagnostics of {where}:\n{_cut(found, MAX_MENTION_CHARS)}"
    path = mention_path(roots, mention.field(index, "uri"), mention.path, required=True)
    name = display(roots, path)
    try:
        text, _ = read_text(ctx, path)
    except ToolError as e:
        raise BadMention(mention.field(index, "uri"), str(e)) from None
    if mention.kind == "file":
        return f"@file {name}:\n{_fence(_cut(text, MAX_MENTION_CHARS))}"
    if mention.lines is None:
        raise BadMention(mention.field(index, "range"), f"a {mention.kind} mention needs a range")
    first, last = mention.lines
    excerpt = "\n".join(text.splitlines()[first:last + 1])
    label = f"@symbol {mention.name} in" if mention.kind == "symbol" and mention.name else f"@{mention.kind} of"
    return f"{label} {name}, lines {first + 1}-{last + 1}:\n{_fence(_cut(excerpt, MAX_MENTION_CHARS))}"

