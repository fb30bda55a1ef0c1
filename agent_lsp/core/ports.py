"""What the loop needs from the outside world: a model, an editor, language intelligence, and someone to ask for
permission."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable, Literal, Optional, Protocol, Union

from agent_lsp.core.events import AgentUpdate, Usage
from agent_lsp.core.language_methods import LANGUAGE_METHODS  # noqa: F401 (the port's vocabulary)
from agent_lsp.core.messages import AssistantPart, Message

# ---- model -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the model sees it."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass
class ModelRequest:
    """One model call: the system prompt, the history, and the tools on offer."""

    system: str
    messages: list[Message]
    tools: list[ToolSpec]
    tool_choice: Literal["auto", "none"] = "auto"
    max_tokens: int = 8192
    thinking: Union[int, Literal["adaptive"], None] = None
    """Thinking budget in tokens, "adaptive", or None for no thinking."""

    @property
    def carries_images(self) -> bool:
        """Whether a user message of the request has images (a refusal may then be about them)."""
        return any(getattr(m, "images", None) for m in self.messages)


@dataclass(frozen=True)
class TextChunk:
    """Streamed text."""

    text: str


@dataclass(frozen=True)
class ThinkingChunk:
    """Streamed thinking."""

    text: str


StopReason = Literal["end_turn", "tool_use", "max_tokens", "refusal", "stop_sequence", "pause_turn"]


@dataclass
class ModelReply:
    """The whole reply, last item of a stream."""

    parts: list[AssistantPart]
    stop_reason: StopReason
    usage: Usage = field(default_factory=Usage)


ModelEvent = Union[TextChunk, ThinkingChunk, Usage, ModelReply]
"""A `Usage` mid-stream is the call's usage so far (cumulative for the call): what an aborted or failed call
cost. The `ModelReply` carries the call's final usage."""


class ModelError(Exception):
    """A model call failed; `type` is the `error.type` the client sees."""

    def __init__(self, type: str, message: str) -> None:
        super().__init__(message)
        self.type = type
        self.message = message


IMAGE_WORDS = ("image", "vision", "multimodal", "multi-modal", "image_url")


def images_refused(model: str, status: int, said: str) -> Optional[ModelError]:
    """For a request with images that the API refused with `status`, saying `said` (status included): the error
    saying the model does not take images — a 400, or a 415 / 422 whose words are about images; else None."""
    if status == 400 or (status in (415, 422) and any(word in said.lower() for word in IMAGE_WORDS)):
        return ModelError("llm_error", f"The model `{model}` does not take images, or not these ones (the server "
                                       f"answered {said}). Send the message without images, or choose a model "
                                       "that reads them.")
    return None


@dataclass(frozen=True)
class ModelInfo:
    """A model a provider offers (`agent/models`)."""

    id: str
    provider: str
    display_name: Optional[str] = None
    context_window: Optional[int] = None


class Model(Protocol):
    """A model provider. `stream` yields chunks (and, when the provider reports it, `Usage` so far) and ends with
    exactly one `ModelReply`, or raises `ModelError`."""

    name: str

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]: ...


# ---- editor ----------------------------------------------------------------------------------------------


class OpenDocument:
    """A document the editor has open, with the text the user sees (saved or not).

    `unsaved` may be given as a function: finding out may read the file, so it runs on first use, once.
    """

    __slots__ = ("uri", "path", "language_id", "version", "text", "_unsaved")

    def __init__(self, uri: str, path: Optional[Path], language_id: str, version: Optional[int], text: str,
                 unsaved: Union[bool, Callable[[], bool]]) -> None:
        self.uri = uri
        self.path = path
        self.language_id = language_id
        self.version = version
        self.text = text
        self._unsaved = unsaved

    @property
    def unsaved(self) -> bool:
        """Whether the text differs from the file on disk (or there is no file)."""
        if callable(self._unsaved):
            self._unsaved = bool(self._unsaved())
        return self._unsaved

    def __repr__(self) -> str:
        return f"OpenDocument({self.uri!r}, version={self.version})"


@dataclass(frozen=True)
class Diagnostic:
    """One diagnostic, 1-based line and column."""

    path: Path
    line: int
    column: int
    severity: Literal["error", "warning", "information", "hint"]
    message: str
    source: Optional[str] = None


@dataclass
class DiagnosticsReport:
    """Diagnostics, and whether they came from the editor or were computed by the server."""

    items: list[Diagnostic]
    from_editor: bool
    unavailable: str = "the editor did not send its own diagnostics"
    """Without `from_editor`: why, in words that make sense on the front end the chat came through."""


@dataclass(frozen=True)
class TextEdit:
    """Replace `[start, end)` (character offsets into the text the edit was computed on) by `new_text`."""

    start: int
    end: int
    new_text: str


@dataclass
class FileEdit:
    """A change to one file, computed against `base_text` at `version` (None: the file is not open)."""

    path: Path
    base_text: str
    version: Optional[int]
    edits: list[TextEdit]
    create: bool = False
    label: str = "agent edit"


@dataclass(frozen=True)
class EditOutcome:
    """What the editor did with an edit."""

    applied: bool
    message: str = ""


class Editor(Protocol):
    """The editor as tools see it."""

    @property
    def roots(self) -> list[Path]:
        """The workspace folders."""
        ...

    def open_documents(self) -> list[OpenDocument]:
        """Every open document, in the order they were opened (cheap: no file is read)."""
        ...

    def open_document(self, path: Path) -> Optional[OpenDocument]:
        """The open document for `path`, if the editor has it open."""
        ...

    async def diagnostics(self, paths: Optional[list[Path]]) -> DiagnosticsReport:
        """Diagnostics of `paths`, or of every open document when None."""
        ...

    async def apply_edit(self, edit: FileEdit) -> EditOutcome:
        """Ask the editor to apply an edit."""
        ...

    async def delete_file(self, path: Path) -> EditOutcome:
        """Delete a file the agent created (reverting a chat), through the editor when it can."""
        ...


# ---- language intelligence -------------------------------------------------------------------------------



IndexState = Literal["ready", "loading", "stale", "unknown"]
INDEX_PREFIX = "index: "
"""How the line ending every language tool's answer starts (IndexStatus.line); clients look for it."""


@dataclass(frozen=True)
class IndexStatus:
    """How much a language server's index knows (PROTOCOL §11): `ready` only on its own word, never from time."""

    state: IndexState
    why: str
    reference_files: Optional[int] = None
    """The most files holding a name its server reads in one reference search (core/server_limits.py); None: no
    limit known. A reference answer that may have stopped there says so."""

    @property
    def line(self) -> str:
        """The line that ends every language tool's answer."""
        return f"{INDEX_PREFIX}{self.state} — {self.why}"


class LanguageFeatureError(Exception):
    """A language request that got no usable answer (no server for that file, a server that failed or timed out);
    its message is what the model reads."""


class LanguageFeatures(Protocol):
    """Language intelligence: standard LSP requests answered by the editor's own language servers, or by language
    servers agent-lsp runs itself.

    `params` and results are plain LSP shapes (dicts, file URIs), except that every position's `character` counts
    characters (code points): the implementation converts to and from the negotiated position encoding, so tools
    never see UTF-16.
    """

    def methods(self, path: Optional[Path] = None) -> dict[str, str]:
        """The methods something can answer (for a file at `path`, or anywhere in the workspace when None), each
        with its origin: "editor" or "languageServer:<name>"."""
        ...

    async def request(self, method: str, params: dict[str, Any], path: Optional[Path] = None) -> Any:
        """The answer to one request about `path` (None for workspace/symbol); LanguageFeatureError when none."""
        ...

    def index(self, path: Optional[Path] = None) -> IndexStatus:
        """How complete the answers about `path` (or the workspace) are now."""
        ...

    def disk_changed(self, paths: Optional[list[Path]] = None) -> None:
        """Files changed on disk, not through an open buffer (None: which is not known, as after a command)."""
        ...


# ---- permission ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Allow:
    """Run the tool call; `always`: the user allowed calls like it for the rest of the session."""

    always: bool = False


@dataclass(frozen=True)
class Deny:
    """Do not run the tool call; `message` tells the model why. `always`: the user refused the tool for the rest
    of the session."""

    message: str
    status: Literal["rejected", "cancelled"] = "rejected"
    always: bool = False


Permission = Union[Allow, Deny]


@dataclass(frozen=True)
class FileChange:
    """What an edit would make of one file: its text before (None: a new file) and after."""

    path: Path
    old_text: Optional[str]
    new_text: str


@dataclass(frozen=True)
class PermissionRequest:
    """A tool call that needs a decision."""

    tool_call_id: str
    name: str
    kind: str
    title: str
    input: dict[str, Any]
    diff: Optional[str] = None
    command: Optional[str] = None
    changes: tuple[FileChange, ...] = ()
    """An edit's files before and after, for a client that shows its own diff (ACP's `diff` content)."""
    sandbox_auto_allow: bool = False
    """A command that runs in the OS sandbox, whose `autoAllow` lets it run without a question (not in plan mode)."""


Emit = Callable[[AgentUpdate], None]
"""Sends an update of the chat, in order with the tool call's own."""
Approve = Callable[[PermissionRequest, Emit], Awaitable[Permission]]
"""Decides whether a tool call runs: the chat's rules (mode, standing answers), and the user where they must be
asked (a front end's question, sent with `emit`)."""
