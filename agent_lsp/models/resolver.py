"""Which model a chat (or a suggestion) uses, decided once from the settings and the environment (PROTOCOL §0, §1,
§10): the provider, the model's name, the base URL, which key, the SDK to warm up, and what is missing when no
model can be had. Building the model, the warm-up, `agent/models`, `agent-lsp doctor` and `agent-lsp model` (which
the editors' health checks read) all take this answer; none decides again."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal, Mapping, Optional
from urllib.parse import urlparse

from agent_lsp.config import DEFAULT_MODEL, READ_TIMEOUT, Settings

if TYPE_CHECKING:  # the core's ports only when a model is built: the warm-up decides at start-up and imports no more
    from agent_lsp.core.ports import Model

Provider = Literal["anthropic", "openai", "demo", "scripted", "none"]
Lack = Literal["provider", "key", "model", "loopback", "api"]

KEYS: dict[str, tuple[str, ...]] = {"anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
                                    "openai": ("OPENAI_API_KEY",)}
"""Where each provider's key may be, first found first: the environment only, never the wire."""
BASE_URL_VARIABLES = {"anthropic": "ANTHROPIC_BASE_URL", "openai": "OPENAI_BASE_URL"}
ANTHROPIC_API = "https://api.anthropic.com"
"""Where the anthropic SDK sends requests when neither `baseUrl` nor ANTHROPIC_BASE_URL says otherwise."""
SDK_MODULES: dict[str, tuple[str, ...]] = {"anthropic": ("agent_lsp.models.anthropic", "anthropic", "httpx2"),
                                           "openai": ("agent_lsp.models.openai", "openai", "httpx2")}
"""What a provider's first model call imports, SDK last (the warm-up imports them in this order)."""
SUGGESTION_MODELS = {"anthropic": "claude-haiku-5-5"}
"""A provider's small, fast model, for suggestions as you type; openai has none that every server knows."""

NO_PROVIDER = (
    "No model provider is configured. Set ANTHROPIC_API_KEY in the environment the editor starts agent-lsp with, "
    "or choose the offline demo model with `--model demo` (or the `model` setting \"demo\")."
)
OPENAI_NEEDS_KEY = (
    "The openai provider needs OPENAI_API_KEY in the environment the editor starts agent-lsp with, or the `baseUrl` "
    "setting for a local server (Ollama, vLLM, LM Studio), which needs no key.")
OPENAI_NEEDS_MODEL = (
    "The openai provider needs the `model` setting (the model's name as the server knows it, e.g. "
    "\"qwen2.5-coder:7b\" on Ollama or \"gpt-4.1\").")
SUGGESTIONS_NEED_MODEL = (
    "Suggestions from the openai provider need the `completions.model` setting (the model's name as the server "
    "knows it, e.g. \"qwen2.5-coder:1.5b-base\" on Ollama), or the `model` setting when chats use openai too.")
FIM_NEEDS_OPENAI = (
    "`completions.api` \"fim\" posts to an OpenAI-compatible /completions endpoint: it needs the openai provider "
    "(`completions.provider` \"openai\"); with anthropic, suggestions use \"chat\".")


@dataclass(frozen=True)
class ModelChoice:
    """The model a chat or a suggestion uses, and why there is none when `problem` is set."""

    provider: Provider
    model: str
    """The model's name ("demo", "script:FILE", the provider's name for it); "" when none is known."""
    base_url: Optional[str] = None
    """The base URL the SDK is given: `baseUrl`, for openai else OPENAI_BASE_URL or OpenAI's; None leaves it to
    the SDK (anthropic's honours ANTHROPIC_BASE_URL itself)."""
    endpoint: Optional[str] = None
    """Where the provider's requests go (`base_url`, else the SDK's own choice); None for demo, scripted, none."""
    key: Optional[str] = None
    """The environment variable the key comes from; None when there is none (a local openai server needs none)."""
    sdk: tuple[str, ...] = ()
    """The modules its first model call imports, SDK last; () for demo, scripted and none."""
    api: str = "chat"
    """How suggestions ask the model: "chat", or "fim" (openai only). Chats always use "chat"."""
    lacks: Optional[Lack] = None
    """What is missing: "provider" (none chosen, no key), "key", "model", "loopback" (AGENT_LSP_OFFLINE=1 and a
    remote API), "api" (fim without openai)."""
    problem: Optional[str] = None
    """Why no model can be had, for the user; None when one can."""

    def api_key(self, env: Mapping[str, str] = os.environ) -> str:
        """The openai key to send: OPENAI_API_KEY, else a placeholder (a local server needs none, the SDK one)."""
        from agent_lsp.models.openai import PLACEHOLDER_KEY

        return (env.get(self.key) if self.key else "") or PLACEHOLDER_KEY

    def as_json(self) -> dict[str, object]:
        """The answer as `agent-lsp model --json` prints it (key names only, never a key's value)."""
        return {"provider": self.provider, "model": self.model, "baseUrl": self.endpoint, "key": self.key,
                "api": self.api, "lacks": self.lacks, "problem": self.problem}


def resolve(settings: Settings, env: Mapping[str, str] = os.environ) -> ModelChoice:
    """The model a chat with these settings uses: `provider`, `model`, `baseUrl` and the provider keys."""
    return _choose(settings.provider, settings.model or "", settings.base_url, env, {"anthropic": DEFAULT_MODEL},
                   OPENAI_NEEDS_MODEL)


def resolve_completions(settings: Settings, provider: Optional[str] = None, model: Optional[str] = None,
                        base_url: Optional[str] = None, api: Optional[str] = None,
                        env: Mapping[str, str] = os.environ) -> ModelChoice:
    """The model suggestions as you type use, from the `completions` settings (each None when not set) over the
    chat's `settings`:
    - provider: the chat's provider;
    - model: the chat's model when that is "demo" or "script:FILE", else the provider's small, fast model
      (`SUGGESTION_MODELS`: claude-haiku-5-5 for anthropic); openai has no such default, so there it is the chat's
      `model` setting when chats use openai too, else `completions.model` is needed;
    - base URL: the chat's `baseUrl` when both use the same provider, else that provider's own;
    - api: "chat"; "fim" only with openai."""
    chat = resolve(settings, env)
    if model is None and chat.provider in ("demo", "scripted"):
        model = chat.model
    provider = provider or settings.provider
    own = _provider_of(provider, env)
    if base_url is None and own == chat.provider:
        base_url = settings.base_url
    defaults = dict(SUGGESTION_MODELS)
    if chat.provider == "openai" and settings.model:
        defaults["openai"] = settings.model
    choice = _choose(provider, model or "", base_url, env, defaults, SUGGESTIONS_NEED_MODEL)
    choice = replace(choice, api=api or "chat")
    if choice.api == "fim" and choice.provider == "anthropic" and choice.problem is None:
        return replace(choice, lacks="api", problem=FIM_NEEDS_OPENAI)
    return choice


def build(choice: ModelChoice, env: Mapping[str, str] = os.environ, read_timeout: float = READ_TIMEOUT) -> Model:
    """The model `choice` names; raises ModelError("initialization_failed") with its problem when it has one."""
    if choice.problem:
        from agent_lsp.core.ports import ModelError

        raise ModelError("initialization_failed", choice.problem)
    if choice.provider == "demo":
        from agent_lsp.models.demo import DemoModel

        return DemoModel()
    if choice.provider == "scripted":
        from agent_lsp.models.scripted import ScriptedModel

        return ScriptedModel.from_file(choice.model.removeprefix("script:"))
    if choice.provider == "openai":
        from agent_lsp.models.openai import OpenAIModel

        return OpenAIModel(choice.model, choice.base_url or "", choice.api_key(env), read_timeout=read_timeout)
    from agent_lsp.models.anthropic import AnthropicModel

    return AnthropicModel(choice.model, base_url=choice.base_url, read_timeout=read_timeout)


def build_model(settings: Settings, env: Mapping[str, str] = os.environ) -> Model:
    """The model a chat with these settings uses; raises ModelError("initialization_failed") when none can be had."""
    return build(resolve(settings, env), env, settings.read_timeout)


def offline_refuses(url: str, env: Mapping[str, str] = os.environ) -> bool:
    """Whether AGENT_LSP_OFFLINE=1 (set by the test suites) refuses `url`: it allows loopback hosts only."""
    if env.get("AGENT_LSP_OFFLINE") != "1":
        return False
    host = urlparse(url).hostname or ""
    if host == "localhost":
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        return True


def _provider_of(provider: Optional[str], env: Mapping[str, str]) -> Optional[str]:
    """The provider setting, else anthropic when its key is in the environment."""
    return provider or ("anthropic" if _key("anthropic", env) else None)


def _key(provider: str, env: Mapping[str, str]) -> Optional[str]:
    return next((name for name in KEYS.get(provider, ()) if env.get(name)), None)


def _choose(provider: Optional[str], model: str, base_url: Optional[str], env: Mapping[str, str],
            defaults: Mapping[str, str], needs_model: str) -> ModelChoice:
    """The one decision: the demo and scripted models by name first, then the provider with its endpoint, key and
    model, each problem in the order a user fixes them (the key, what offline allows, the model)."""
    if provider == "demo" or model == "demo":
        return ModelChoice("demo", "demo")
    if model.startswith("script:"):
        return ModelChoice("scripted", model)
    provider = _provider_of(provider, env)
    if provider == "openai":
        from agent_lsp.models.openai import DEFAULT_BASE_URL

        configured = base_url or env.get(BASE_URL_VARIABLES["openai"]) or None
        choice = ModelChoice("openai", model or defaults.get("openai", ""), configured or DEFAULT_BASE_URL,
                             configured or DEFAULT_BASE_URL, _key("openai", env), SDK_MODULES["openai"])
        if not choice.key and not configured:
            return replace(choice, lacks="key", problem=OPENAI_NEEDS_KEY)
    elif provider == "anthropic":
        endpoint = base_url or env.get(BASE_URL_VARIABLES["anthropic"]) or ANTHROPIC_API
        choice = ModelChoice("anthropic", model or defaults["anthropic"], base_url, endpoint, _key("anthropic", env),
                             SDK_MODULES["anthropic"])
        if not choice.key:
            return replace(choice, lacks="key", problem="The anthropic provider needs ANTHROPIC_API_KEY. " + NO_PROVIDER)
    else:
        return ModelChoice("none", model, lacks="provider", problem=NO_PROVIDER)
    if offline_refuses(choice.endpoint or "", env):
        return replace(choice, lacks="loopback",
                       problem=f"AGENT_LSP_OFFLINE=1 refuses the non-loopback model API {choice.endpoint}.")
    if not choice.model:
        return replace(choice, lacks="model", problem=needs_model)
    return choice
