"""The Completer for a models/resolver.py ModelChoice: the demo and scripted models of completions/offline.py, or
a vendor's provider of this folder, each imported only when chosen (so is its SDK)."""

from __future__ import annotations

import os
from typing import Any, Callable, Iterable, Mapping

from agent_lsp.completions.prompt import Completer
from agent_lsp.core.ports import ModelError, OpenDocument


def make_completer(choice: Any, timeout: float, documents: Callable[[], Iterable[OpenDocument]],
                   env: Mapping[str, str] = os.environ) -> Completer:
    """The model `choice` names, waiting at most `timeout` seconds for an answer; `documents` are the open buffers
    the demo model completes from. Raises ModelError when it cannot be made (a script that cannot be read)."""
    if choice.provider == "demo":
        from agent_lsp.completions.offline import DemoCompleter

        return DemoCompleter(documents)
    if choice.provider == "scripted":
        from agent_lsp.completions.offline import ScriptCompleter

        return ScriptCompleter(choice.model)
    if choice.provider == "anthropic":
        from agent_lsp.completions.providers.anthropic import AnthropicCompleter

        return AnthropicCompleter(choice.model, choice.base_url, timeout)
    if choice.provider == "openai":
        from agent_lsp.completions.providers.openai import OpenAICompleter

        return OpenAICompleter(choice.model, choice.base_url or "", choice.api_key(env), choice.api, timeout)
    raise ModelError("initialization_failed", choice.problem or f"no suggestions from {choice.provider!r}")
