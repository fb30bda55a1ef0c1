"""What a tool is: a name, a description, a pydantic input model, a kind, and an async `run`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Optional, Protocol

from pydantic import BaseModel, ConfigDict

from agent_lsp.core.events import Location, ToolKind
from agent_lsp.core.ports import Editor, FileChange, LanguageFeatures, ToolSpec

if TYPE_CHECKING:
    from agent_lsp.core.events import AgentUpdate
    from agent_lsp.core.prompt import SubfolderInstructions

MAX_OUTPUT_CHARS = 30_000


class ToolError(Exception):
    """An expected failure; its message is what the model reads."""


class ToolInput(BaseModel):
    """Base of every tool's input: unknown fields are refused so typos reach the model as errors."""

    model_config = ConfigDict(extra="forbid", defer_build=True)


@dataclass
class ToolOutput:
    """What a tool returns: text for the model, and a diff for the user when it edited."""

    text: str
    diff: Optional[str] = None
    ends_chat: bool = False
    """The chat is done once this turn's results are recorded (a `finish` call with valid input)."""
    value: Any = None
    """With `ends_chat`: the chat's structured output."""
    folders: tuple[Path, ...] = ()
    """The folders (real paths) of what the call read, edited or listed: the AGENTS.md of a subfolder among them
    joins the chat's context once (core/calls.py, core/prompt.py SubfolderInstructions)."""


@dataclass(frozen=True)
class Preview:
    """What the user sees before allowing a call: the diff of an edit, the command line of a command."""

    diff: Optional[str] = None
    command: Optional[str] = None
    changes: tuple[FileChange, ...] = ()
    """An edit's files before and after (the diff above, whole)."""
    sandbox_auto_allow: bool = False
    """A command that runs in the OS sandbox, whose `autoAllow` lets it run without a question."""
    unchanged: bool = False
    """An edit that would change nothing: it runs without a question, and sends nothing."""


@dataclass(frozen=True)
class Baseline:
    """What files read when the chat began (`impact`'s baseline): the open buffers' text then, and the text of
    each file the chat edited before its first edit (None: the chat created it)."""

    buffers: dict[Path, str] = field(default_factory=dict)
    edited: Callable[[], dict[Path, Optional[str]]] = field(default=lambda: {})

    def texts(self) -> dict[Path, Optional[str]]:
        """Each file that may have changed since, with its text then."""
        return {**self.buffers, **self.edited()}


class Subagents(Protocol):
    """Runs a sub-chat for `task` (core/subagent.py): a fresh context, the read/search tools; its final text."""

    async def run(self, ctx: "ToolContext", prompt: str) -> str: ...


@dataclass
class ToolContext:
    """What a running tool may use."""

    editor: Editor
    report: Callable[[str], None] = field(default=lambda text: None)
    """Streams a preview of output while the tool runs."""
    secret_env: tuple[str, ...] = ()
    """Environment variables commands must not see, besides the provider keys (the secretEnv setting)."""
    language: Optional[LanguageFeatures] = None
    """The language servers' answers (definitions, references...), when something can give them."""
    emit: Callable[["AgentUpdate"], None] = field(default=lambda update: None)
    """Sends an update of the chat while the tool runs (a plan, a subagent's updates)."""
    tool_call_id: str = ""
    """The id of the call being run."""
    subagents: Optional["Subagents"] = None
    """Runs sub-chats for `task` (set by the loop; None inside a subagent)."""
    readable: tuple[Path, ...] = ()
    """Folders outside the workspace that read_file may read (the user's skills)."""
    instructions: Optional["SubfolderInstructions"] = None
    """The subfolders' AGENTS.md / CLAUDE.md this chat was given so far (None: none are added)."""
    baseline: Baseline = field(default_factory=Baseline)
    """What files read when the chat began."""


_SCHEMAS: dict[type, dict[str, Any]] = {}
"""The JSON schema of each tool input class, as the model sees it (shared: never modified after it is built)."""


class Tool:
    """Base class; subclasses set the class attributes and implement `run`."""

    name: ClassVar[str]
    kind: ClassVar[ToolKind]
    description: ClassVar[str]
    Input: ClassVar[type[ToolInput]]
    file_tool: ClassVar[bool] = False
    """Reads or writes the one file it names (a front end may run it on its client's files: ACP)."""
    runs_command: ClassVar[bool] = False
    """Runs a shell command (a front end may run it in its client's terminal: ACP)."""

    def spec(self) -> ToolSpec:
        """The definition the model sees."""
        schema = _SCHEMAS.get(self.Input)
        if schema is None:  # built once per input class: pydantic's schema generation costs ms, per request
            schema = self.Input.model_json_schema()
            schema.pop("title", None)
            for prop in schema.get("properties", {}).values():
                prop.pop("title", None)
            _SCHEMAS[self.Input] = schema
        return ToolSpec(self.name, self.description, schema)

    def title(self, input: ToolInput) -> str:
        """A short human title for the call."""
        return self.name

    def locations(self, ctx: ToolContext, input: ToolInput) -> Optional[list[Location]]:
        """Files the call touches, for an editor to follow."""
        return None

    async def preview(self, ctx: ToolContext, input: ToolInput) -> Preview:
        """What to show when asking the user; edits and commands override this."""
        return Preview()

    async def run(self, ctx: ToolContext, input: ToolInput) -> ToolOutput:
        """Run the call; raise ToolError for failures the model should read."""
        raise NotImplementedError


class ToolAround(Tool):
    """Another tool (`inner`) run a front end's own way: the same name, kind, description, input, title, locations
    and preview; a subclass overrides what it does differently (ACP: files through the client, its terminal)."""

    def __init__(self, inner: Tool) -> None:
        self.inner = inner
        self.name, self.kind, self.description, self.Input = inner.name, inner.kind, inner.description, inner.Input
        self.file_tool, self.runs_command = inner.file_tool, inner.runs_command

    def title(self, input: ToolInput) -> str:
        return self.inner.title(input)

    def locations(self, ctx: ToolContext, input: ToolInput) -> Optional[list[Location]]:
        return self.inner.locations(ctx, input)

    async def preview(self, ctx: ToolContext, input: ToolInput) -> Preview:
        return await self.inner.preview(ctx, input)

    async def run(self, ctx: ToolContext, input: ToolInput) -> ToolOutput:
        return await self.inner.run(ctx, input)


def bound(text: str, limit: int = MAX_OUTPUT_CHARS) -> str:
    """Cut `text` to `limit` characters, plus a one-line note saying what was cut."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    dropped_lines = text.count("\n", limit)
    return f"{cut}\n[output truncated: {len(text) - limit} more characters, {dropped_lines} more lines]"
