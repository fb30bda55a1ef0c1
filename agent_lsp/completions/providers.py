"""The Completer for a Choice: the vendor SDKs' providers of models/ imported only when chosen."""

from __future__ import annotations

from typing import Callable, Iterable

from agent_lsp.completions.choice import Choice
from agent_lsp.core.completion import Completer
from agent_lsp.core.ports import ModelError, OpenDocument


def make_completer(choice: Choice, documents: Callable[[], Iterable[OpenDocument]]) -> Completer:
    """The model `choice` names; `documents` are the open buffers the demo model completes from. Raises ModelError
    when it cannot be made (a script that cannot be read)."""
    if choice.provider == "demo":
        from agent_lsp.completions.offline import DemoCompleter

        return DemoCompleter(documents)
    if choice.provider == "script":
        from agent_lsp.completions.offline import ScriptCompleter

        return ScriptCompleter(choice.model)
    if choice.provider == "anthropic":
        from agent_lsp.models.anthropic_completer import AnthropicCompleter

        return AnthropicCompleter(choice.model, choice.base_url, choice.timeout)
    if choice.provider == "openai" and choice.base_url and choice.api_key:
        from agent_lsp.models.openai_completer import OpenAICompleter

        return OpenAICompleter(choice.model, choice.base_url, choice.api_key, choice.api, choice.timeout)
    raise ModelError("initialization_failed", f"no suggestions from provider {choice.provider!r}")
