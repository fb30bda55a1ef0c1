"""Settings with defaults and precedence (PROTOCOL §1, §9). Resolving never raises: a bad value is a warning.

Precedence, lowest first: defaults < the user's settings file < environment and command line <
initializationOptions < the workspace's .agent-lsp/settings.json < workspace/configuration < the chat's own.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Literal, Mapping, Optional, Union

from agent_lsp.core.surrogates import find_surrogate

PERMISSION_MODES = ("default", "acceptEdits", "plan", "bypassPermissions")
PROVIDERS = ("anthropic", "openai", "demo")
MEMORY_FILES = ("agents", "private")
HARD_MAX_TURNS = 100
DEFAULT_MODEL = "claude-sonnet-5-5"

Thinking = Union[int, Literal["adaptive"], None]


@dataclass(frozen=True)
class Settings:
    """Everything a chat can be configured with."""

    provider: Optional[str] = None
    """None: anthropic when ANTHROPIC_API_KEY is set, else no provider."""
    model: Optional[str] = None
    base_url: Optional[str] = None
    max_turns: int = 25
    permission_mode: str = "default"
    thinking: Thinking = None
    max_tokens: int = 8192
    context_window: int = 200_000
    """The model's context window in tokens."""
    compact_threshold: float = 0.8
    """Compact the conversation when a request would pass this share of the context window."""
    read_timeout: float = 120.0
    """Seconds a model stream may stay silent (before its headers or between events) before the call fails."""
    secret_env: tuple[str, ...] = ()
    """Environment variables (names or fnmatch patterns) that run_command never passes on, besides the
    provider keys it always holds back (tools/run_command.py)."""
    memory_file: str = "agents"
    """Where `remember` keeps facts: "agents" (AGENTS.md, section Memory) or "private" (under the data dir)."""
    hooks: Mapping[str, Any] = field(default_factory=dict)
    """Shell hooks by event (sessions/shell_hooks.py), already checked."""
    mcp_servers: Mapping[str, Any] = field(default_factory=dict)
    """MCP servers by name (config/mcp_servers.py ServerConfig), already checked; the layers' servers add up."""
    language_servers: Mapping[str, Any] = field(default_factory=dict)
    """Language servers agent-lsp runs itself, by name (config/language_servers.py LanguageServerConfig)."""
    language_timeout: float = 5.0
    """Seconds a language request (definition, references...) may take before it fails naming the server."""
    web_fetch: Mapping[str, Any] = field(default_factory=dict)
    """web_fetch's limits, checked: `allow_private`, `allowed_domains` (a tuple, empty for every host), `timeout`."""
    sandbox: Any = None
    """Commands in the OS sandbox (config/sandbox.py SandboxSettings), stacked key by key; None: no source set it."""
    completions: Mapping[str, Any] = field(default_factory=dict)
    """Suggestions as you type: the checked keys of `completions` by field name (config/completions.py); each layer's
    keys replace the same keys of the layers below."""


def _described(schema: Union[dict[str, Any], Callable[[], dict[str, Any]]]):
    """Attach the JSON Schema of what a check accepts, or what makes it (schemas/settings.json is made from these)."""

    def attach(check):
        check.schema = schema
        return check

    return attach


@_described({"type": "string", "minLength": 1})
def _text(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError("must be a non-empty string")
    return value.strip()


def _choice(options: tuple[str, ...]):
    @_described({"enum": list(options)})
    def check(value: Any) -> str:
        if value not in options:
            raise ValueError(f"must be one of {', '.join(options)}")
        return value

    return check


def _int(low: int, high: int):
    @_described({"type": "integer", "minimum": low, "maximum": high})
    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValueError(f"must be an integer from {low} to {high}")
        return value

    return check


@_described({"type": "number", "minimum": 0.05, "maximum": 1})
def _share(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.05 <= value <= 1:
        raise ValueError("must be a number from 0.05 to 1")
    return float(value)


@_described({"type": "object", "description": "Shell hooks by event (docs/settings.md)"})
def _hooks(value: Any) -> Mapping[str, Any]:
    from agent_lsp.config.hooks import parse_hooks  # only settings that have hooks need it

    return parse_hooks(value)


@_described({"type": "object", "description": "MCP servers by name (docs/settings.md)"})
def _mcp_servers(value: Any) -> Mapping[str, Any]:
    from agent_lsp.config.mcp_servers import parse_servers  # only settings that have MCP servers need it

    return parse_servers(value)


@_described({"type": "object", "description": "Language servers agent-lsp runs itself, by name "
                                             "(docs/language-features.md)",
              "additionalProperties": {"type": "object", "required": ["command", "languages"], "properties": {
                  "command": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}},
                  "languages": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}},
                  "initializationOptions": {}, "settings": {"type": "object"},
                  "startTimeout": {"type": "number", "minimum": 1, "maximum": 600}}}})
def _language_servers(value: Any) -> Mapping[str, Any]:
    from agent_lsp.config.language_servers import parse_language_servers

    return parse_language_servers(value)


@_described({"type": "number", "minimum": 1, "maximum": 120})
def _language_timeout(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 1 <= value <= 120:
        raise ValueError("must be a number of seconds from 1 to 120")
    return float(value)


@_described({"type": "object", "description": "Where web_fetch may go (docs/settings.md)", "additionalProperties": False,
              "properties": {"allowPrivate": {"type": "boolean"},
                             "allowedDomains": {"type": "array", "items": {"type": "string", "minLength": 1}},
                             "timeout": {"type": "number", "minimum": 1, "maximum": 300}}})
def _web_fetch(value: Any) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ValueError("must be an object with allowPrivate, allowedDomains, timeout")
    unknown = sorted(set(value) - {"allowPrivate", "allowedDomains", "timeout"})
    if unknown:
        raise ValueError(f"has an unknown key `{unknown[0]}` (allowPrivate, allowedDomains, timeout)")
    private = value.get("allowPrivate", False)
    if not isinstance(private, bool):
        raise ValueError("`allowPrivate` must be true or false")
    domains = value.get("allowedDomains", [])
    if not isinstance(domains, list) or not all(isinstance(d, str) and d.strip(" .") for d in domains):
        raise ValueError("`allowedDomains` must be a list of host names")
    timeout = value.get("timeout", 30)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 1 <= timeout <= 300:
        raise ValueError("`timeout` must be a number of seconds from 1 to 300")
    return {"allow_private": private, "allowed_domains": tuple(d.strip(" .").lower() for d in domains),
            "timeout": float(timeout)}


def _sandbox_schema() -> dict[str, Any]:
    from agent_lsp.config.sandbox import sandbox_schema

    return sandbox_schema()


@_described(_sandbox_schema)  # made from its pydantic model when schemas/ is written
def _sandbox(value: Any) -> Any:
    from agent_lsp.config.sandbox import parse_sandbox  # pydantic: only settings that have a sandbox need it

    return parse_sandbox(value)


def _completions_schema() -> dict[str, Any]:
    from agent_lsp.config.completions import completions_schema  # pydantic, for `schemas/` only

    return completions_schema()


@_described(_completions_schema)  # made when asked for: settings_schema() calls it
def _completions(value: Any) -> Mapping[str, Any]:
    from agent_lsp.config.completions import parse_completions  # pydantic: only settings that have the key need it

    return parse_completions(value)


@_described({"anyOf": [{"type": "object", "properties": {"budgetTokens": {"type": "integer", "minimum": 1024}},
                                 "required": ["budgetTokens"]}, {"const": "adaptive"}, {"const": False}]})
def _thinking(value: Any) -> Thinking:
    if value is False or value is None:
        return None
    if value == "adaptive":
        return "adaptive"
    if isinstance(value, Mapping) and isinstance(value.get("budgetTokens"), int) and value["budgetTokens"] >= 1024:
        return int(value["budgetTokens"])
    raise ValueError('must be {"budgetTokens": N} with N >= 1024, "adaptive", or false')


@_described({"type": "number", "minimum": 1, "maximum": 3600})
def _seconds(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 1 <= value <= 3600:
        raise ValueError("must be a number of seconds from 1 to 3600")
    return float(value)


@_described({"type": "array", "items": {"type": "string", "minLength": 1}})
def _names(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError("must be a list of environment variable names")
    return tuple(v.strip() for v in value)


# wire name -> (Settings field, validator)
FIELDS = {
    "provider": ("provider", _choice(PROVIDERS)),
    "model": ("model", _text),
    "baseUrl": ("base_url", _text),
    "maxTurns": ("max_turns", _int(-1, HARD_MAX_TURNS)),
    "permissionMode": ("permission_mode", _choice(PERMISSION_MODES)),
    "thinking": ("thinking", _thinking),
    "maxTokens": ("max_tokens", _int(1, 1_000_000)),
    "contextWindow": ("context_window", _int(1_000, 10_000_000)),
    "compactThreshold": ("compact_threshold", _share),
    "readTimeout": ("read_timeout", _seconds),
    "secretEnv": ("secret_env", _names),
    "memoryFile": ("memory_file", _choice(MEMORY_FILES)),
    "hooks": ("hooks", _hooks),
    "mcpServers": ("mcp_servers", _mcp_servers),
    "languageServers": ("language_servers", _language_servers),
    "languageTimeout": ("language_timeout", _language_timeout),
    "webFetch": ("web_fetch", _web_fetch),
    "sandbox": ("sandbox", _sandbox),
    "completions": ("completions", _completions),
}
GATED = ("hooks", "baseUrl", "mcpServers", "languageServers", "webFetch")
"""Keys of the workspace file that run commands, send code elsewhere or open the local network to web_fetch: used only
once the user trusted it."""
WORKSPACE_FILE = Path(".agent-lsp") / "settings.json"
ADDED_UP = ("mcp_servers", "language_servers", "completions")
"""Settings whose entries add up across the layers rather than the highest layer replacing the whole value."""


def settings_schema() -> dict[str, Any]:
    """The JSON Schema of the settings object (initializationOptions, the `agentLsp` section, the settings files):
    schemas/settings.json, which the clients' own checks are tested against."""
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "agent-lsp settings",
            "type": "object", "properties": {name: check.schema() if callable(check.schema) else check.schema
                                             for name, (_, check) in FIELDS.items()}}


CLIENT_KEYS = frozenset({"serverCommand", "serverArgs", "trace"})
"""Settings the editor's client reads itself (how to start the server, `trace.server`); the server ignores
them without a warning, since they share the `agentLsp` section with the server's settings."""


def clean(values: Any, source: str) -> tuple[dict[str, Any], list[str]]:
    """The valid settings of one source (by Settings field), and a warning naming each bad or unknown one."""
    if values is None:
        return {}, []
    if not isinstance(values, Mapping):
        return {}, [f"agent-lsp: the settings from {source} must be an object; they are ignored."]
    good: dict[str, Any] = {}
    warnings = []
    for name, value in values.items():
        if (where := find_surrogate({name: value})) is not None:
            warnings.append(f"agent-lsp: setting `{where}` from {source} contains a lone UTF-16 surrogate "
                            "(not valid Unicode); it is ignored.")
            continue
        if name in CLIENT_KEYS:
            continue
        if name not in FIELDS:
            warnings.append(f"agent-lsp: unknown setting `{name}` from {source} is ignored.")
            continue
        if value is None:
            continue
        attr, check = FIELDS[name]
        try:
            good[attr] = check(value)
        except ValueError as e:
            kept = getattr(e, "value", None)  # partly valid (some MCP servers): keep the good part
            if kept is not None:
                good[attr] = kept
            warnings.append(f"agent-lsp: setting `{name}` from {source} {e}"
                            + ("." if kept is not None else "; using the default instead."))
    return good, warnings


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
        return replace(Settings(), **merged)


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
