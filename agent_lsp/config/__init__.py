"""Settings with defaults and precedence (PROTOCOL §1, §9). Resolving never raises: a bad value is a warning.
`Settings` says each setting's type, default and description once (config/section.py); pydantic checks the values
and makes schemas/settings.json from it.

Precedence, lowest first: defaults < the user's settings file < environment and command line <
initializationOptions < the workspace's .agent-lsp/settings.json < workspace/configuration < the chat's own.
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal, Mapping, Optional, Union

from agent_lsp.config.completions import CompletionsSettings, completions_setting
from agent_lsp.config.hooks import shell_hooks
from agent_lsp.config.issues import Issue
from agent_lsp.config.language_servers import language_servers_by_name
from agent_lsp.config.mcp_servers import mcp_servers_by_name
from agent_lsp.config.next_edits import NextEditsSettings, next_edits_setting
from agent_lsp.config.section import Entry, Section, choice, integer, number, strings, text
from agent_lsp.config.web_fetch import WebFetchSettings
from agent_lsp.core.surrogates import find_surrogate

PERMISSION_MODES = ("default", "acceptEdits", "plan", "bypassPermissions")
PROVIDERS = ("anthropic", "openai", "demo")
MEMORY_FILES = ("agents", "private")
HARD_MAX_TURNS = 100
DEFAULT_MODEL = "claude-sonnet-5-5"
READ_TIMEOUT = 120.0
"""Seconds a chat's model stream may stay silent: the readTimeout setting's default, for every provider."""

Thinking = Union[int, Literal["adaptive"], None]
"""A chat's extended thinking: its budget in tokens, "adaptive", or None (none)."""


class ThinkingBudget(Entry):
    """Extended thinking with a budget."""

    budget_tokens: integer(1024)
    """Tokens the model may think for."""


def _thinking(value: Any) -> Thinking:
    from agent_lsp.config.checks import checked_value

    if value is False or value is None:
        return None
    if value == "adaptive":
        return "adaptive"
    try:
        return checked_value(ThinkingBudget, value).budget_tokens
    except ValueError:
        raise ValueError('must be {"budgetTokens": N} with N >= 1024, "adaptive", or false') from None


@functools.cache
def extended_thinking() -> Any:
    """The `thinking` setting, as a Thinking."""
    from typing import Annotated

    from pydantic import PlainValidator

    return Annotated[Thinking, PlainValidator(
        _thinking, json_schema_input_type=Union[ThinkingBudget, Literal["adaptive"], Literal[False]])]


@functools.cache
def sandboxed_commands() -> Any:
    """The `sandbox` setting, as a config/sandbox.py SandboxSettings (checked key by key there, stacked key by key
    across the layers)."""
    from typing import Annotated

    from pydantic import PlainValidator

    from agent_lsp.config.sandbox import SandboxSettings, parse_sandbox

    return Annotated[Optional[SandboxSettings], PlainValidator(parse_sandbox, json_schema_input_type=SandboxSettings)]


class Settings(Section):
    """Everything a chat can be configured with: the settings object of initializationOptions, the `agentLsp`
    section of the editor's configuration and the settings files (docs/settings.md)."""

    provider: Optional[choice(PROVIDERS)] = None
    """Who answers; none: anthropic when ANTHROPIC_API_KEY is set, else no provider."""
    model: Optional[text()] = None
    """The model name ("demo": the offline demo model); none: the provider's default."""
    base_url: Optional[text()] = None
    """Where the provider's API is; none: the SDK's own."""
    max_turns: integer(-1, HARD_MAX_TURNS) = 25
    """Model calls per chat; -1: up to the hard cap (100); 0 disables chat."""
    permission_mode: choice(PERMISSION_MODES) = "default"
    """What runs without asking."""
    thinking: extended_thinking() = None
    """Extended thinking: {"budgetTokens": N} (N >= 1024), "adaptive", or false."""
    max_tokens: integer(1, 1_000_000) = 8192
    """The most tokens one model reply may have."""
    context_window: integer(1_000, 10_000_000) = 200_000
    """The model's context window in tokens."""
    compact_threshold: number(0.05, 1) = 0.8
    """Compact the conversation when a request would pass this share of the context window."""
    read_timeout: number(1, 3600, " of seconds") = READ_TIMEOUT
    """Seconds a model stream may stay silent (before its headers or between events) before the call fails."""
    secret_env: strings("must be a list of environment variable names", non_empty=True) = ()
    """Environment variables (names or fnmatch patterns) that run_command never passes on, besides the provider
    keys it always holds back (tools/run_command.py)."""
    memory_file: choice(MEMORY_FILES) = "agents"
    """Where `remember` keeps facts: "agents" (AGENTS.md, section Memory) or "private" (under the data dir)."""
    hooks: shell_hooks() = field(default_factory=dict)
    """Shell commands by event (PreToolUse, PostToolUse, UserPromptSubmit, Stop), in the shape Claude Code reads
    (docs/settings.md)."""
    mcp_servers: mcp_servers_by_name() = field(default_factory=dict)
    """MCP servers whose tools the model is offered, by name; the settings sources' servers add up."""
    language_servers: language_servers_by_name() = field(default_factory=dict)
    """Language servers agent-lsp runs itself, by name (docs/language-features.md); the settings sources' servers
    add up."""
    language_timeout: number(1, 120, " of seconds") = 5.0
    """Seconds a language request (definition, references...) may take before it fails naming the server."""
    web_fetch: WebFetchSettings = field(default_factory=WebFetchSettings)
    """Where web_fetch may go (docs/web-fetch-and-images.md)."""
    sandbox: sandboxed_commands() = None
    """Commands in an OS sandbox (docs/sandbox.md); stacked key by key across the sources; none: no source set it."""
    completions: completions_setting() = field(default_factory=CompletionsSettings)
    """Suggestions as you type (docs/settings.md, PROTOCOL §10)."""
    next_edits: next_edits_setting() = field(default_factory=NextEditsSettings)
    """Next-edit suggestions, the edit after the one you just made (docs/next-edits.md, PROTOCOL §11)."""


GATED = ("hooks", "baseUrl", "mcpServers", "languageServers", "webFetch")
"""Keys of the workspace file that run commands, send code elsewhere or open the local network to web_fetch: used only
once the user trusted it."""
WORKSPACE_FILE = Path(".agent-lsp") / "settings.json"
ADDED_UP = ("mcp_servers", "language_servers")
"""Settings whose entries add up across the layers rather than the highest layer replacing the whole value."""


def settings_schema() -> dict[str, Any]:
    """The JSON Schema of the settings object (initializationOptions, the `agentLsp` section, the settings files):
    schemas/settings.json, which the clients' own checks are tested against."""
    from agent_lsp.config.checks import json_schema

    return json_schema(Settings, "agent-lsp settings")


CLIENT_KEYS = frozenset({"serverCommand", "serverArgs", "trace", "editorInfo", "editorPluginInfo"})
"""Settings the editor's client reads itself (how to start the server, `trace.server`); the server ignores
them without a warning, since they share the `agentLsp` section with the server's settings; and what Copilot's clients
send in initializationOptions about themselves (PROTOCOL §11)."""


def clean(values: Any, source: str) -> tuple[dict[str, Any], list[str]]:
    """The valid settings of one source (by Settings field), and a warning naming each bad or unknown one, in the
    order of `values`."""
    if values is None:
        return {}, []
    if not isinstance(values, Mapping):
        return {}, [f"agent-lsp: the settings from {source} must be an object; they are ignored."]
    surrogates = {name: find_surrogate({name: value}) for name, value in values.items()}
    given = {name: value for name, value in values.items() if surrogates[name] is None and name not in CLIENT_KEYS}
    layer: dict[str, Any] = {}
    told: dict[str, list[str]] = {}
    if given:  # pydantic loads only when there is something to check
        from agent_lsp.config.checks import checked

        settings, names, issues = checked(Settings, given)
        layer = {name: getattr(settings, name) for name in names}
        for issue in issues:
            told.setdefault(issue.key, []).append(_warning(issue, source))
    warnings = []
    for name, where in surrogates.items():
        if where is not None:
            warnings.append(f"agent-lsp: setting `{where}` from {source} contains a lone UTF-16 surrogate "
                            "(not valid Unicode); it is ignored.")
        warnings += told.get(name, [])
    return layer, warnings


def _warning(issue: Issue, source: str) -> str:
    if issue.outcome == "unknown":
        return f"agent-lsp: unknown setting `{issue.key}` from {source} is ignored."
    ending = "; using the default instead." if issue.outcome == "default" else "."
    return f"agent-lsp: setting `{issue.key}` from {source} {issue.text}{ending}"


@dataclass
class Layers:
    """The cleaned settings of each source; `resolve` stacks them, the highest precedence last."""

    environment: dict[str, Any] = field(default_factory=dict)
    initialization_options: dict[str, Any] = field(default_factory=dict)
    workspace_file: dict[str, Any] = field(default_factory=dict)
    """From the workspace's .agent-lsp/settings.json (its gated keys only once trusted)."""
    workspace: dict[str, Any] = field(default_factory=dict)
    user_file: dict[str, Any] = field(default_factory=dict)
    """From the user's own settings file (user_file.py), below every other source."""

    def resolve(self, chat: Optional[dict[str, Any]] = None) -> Settings:
        """The settings in force for a chat whose own parameters (already valid) are `chat`."""
        layers = (self.user_file, self.environment, self.initialization_options, self.workspace_file, self.workspace)
        merged: dict[str, Any] = {}
        for layer in layers:
            merged.update(layer)
        merged.update({k: v for k, v in (chat or {}).items() if v is not None})
        for added in ADDED_UP:  # servers by name: each layer adds its own, a higher one replaces a same-named one
            merged[added] = {n: c for layer in (*layers, chat or {}) for n, c in (layer.get(added) or {}).items()}
        if merged.get("sandbox") is not None:  # key by key: a layer sets only the keys it names
            from agent_lsp.config.sandbox import stacked

            merged["sandbox"] = stacked(layer.get("sandbox") for layer in (*layers, chat or {}))
        return Settings(**merged)  # each value was checked when its layer was cleaned


def environment_layer(cli_model: Optional[str] = None, env: Mapping[str, str] = os.environ) -> dict[str, Any]:
    """The raw settings of the environment (AGENT_LSP_PROVIDER, AGENT_LSP_MODEL) and the command line's --model."""
    layer: dict[str, Any] = {}
    if env.get("AGENT_LSP_PROVIDER"):
        layer["provider"] = env["AGENT_LSP_PROVIDER"]
    if env.get("AGENT_LSP_MODEL"):
        layer["model"] = env["AGENT_LSP_MODEL"]
    if cli_model:
        layer["model"] = cli_model
    return layer


def env_seconds(name: str, default: float, env: Mapping[str, str] = os.environ) -> float:
    """Seconds from the environment variable `name`; `default` when it is unset or not a number ≥ 0. The server's
    waits (for the client, for a language or MCP server still starting) read it: the tests make them ceilings, or
    short where a wait must run out."""
    try:
        value = float(env.get(name, default))
    except ValueError:
        return default
    return value if value >= 0 else default


def default_data_dir(env: Mapping[str, str] = os.environ) -> Path:
    """Where sessions are stored by default: $XDG_STATE_HOME/agent-lsp, else ~/.local/state/agent-lsp."""
    base = env.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "agent-lsp"


def effective_max_turns(value: int) -> int:
    """-1 means unlimited, which is the hard cap."""
    return HARD_MAX_TURNS if value < 0 else min(value, HARD_MAX_TURNS)


def read_workspace_file(root: Path) -> tuple[dict[str, Any], list[str]]:
    """The raw settings of `root`/.agent-lsp/settings.json ({} when there is none), and a warning when it is not a
    JSON object."""
    path = root / WORKSPACE_FILE
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}, []
    except (OSError, ValueError) as e:
        return {}, [f"agent-lsp: {path} cannot be read as JSON ({e}); it is ignored."]
    if not isinstance(raw, dict):
        return {}, [f"agent-lsp: {path} must hold a JSON object; it is ignored."]
    return raw, []
