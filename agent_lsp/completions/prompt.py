"""What a suggestion model is asked and how it answers (PROTOCOL §10): the hole between the text before and after
the cursor, with bounded context; the answer streams as text. A provider raises ModelError when it fails."""

from __future__ import annotations

from dataclasses import dataclass
from typing import AsyncIterator, Literal, Protocol


@dataclass(frozen=True)
class Snippet:
    """A bounded piece of another place the model may look at: an open buffer, or a definition."""

    path: str
    """Workspace-relative when the file is in the workspace."""
    text: str
    kind: Literal["buffer", "definition"]
    first_line: int = 1
    """1-based line number of `text`'s first line."""


@dataclass(frozen=True)
class CompletionPrompt:
    """The hole to fill: `prefix` + HOLE + `suffix` are bounded windows of the unsaved buffer around the cursor."""

    path: str
    """The file, workspace-relative when it is in the workspace."""
    language_id: str
    prefix: str
    suffix: str
    snippets: tuple[Snippet, ...] = ()
    max_lines: int = 8
    single_line: bool = False
    """The cursor's line goes on after it: only the rest of this line is wanted."""
    stable_prefix: int = 0
    """How many characters at the start of `prefix` stay the same while the user types on (where a prompt cache
    may end)."""


class Completer(Protocol):
    """A model that fills a hole. `complete` yields the answer's text as it streams (closing the iterator ends the
    model request); raises ModelError when the request fails. A completer whose first request would load something
    heavy (an SDK) may also have `async prepare()`, awaited once before its first request and not counted in the
    time a suggestion may take."""

    name: str

    def complete(self, prompt: CompletionPrompt) -> AsyncIterator[str]: ...
