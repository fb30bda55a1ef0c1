"""Which models the configured provider offers (`agent/models`, PROTOCOL §8)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping, Optional

from agent_lsp.config import Settings
from agent_lsp.core.ports import ModelError, ModelInfo
from agent_lsp.models.resolver import build, resolve


DEMO = ModelInfo(id="demo", provider="demo", display_name="demo (offline, no key)")


@dataclass
class Catalog:
    """The models on offer, the one a chat uses by default, and why the list is only that one if it failed."""

    models: list[ModelInfo]
    default: str
    error: Optional[str] = None


async def catalog(settings: Settings, env: Mapping[str, str] = os.environ) -> Catalog:
    """The provider's own list (its models endpoint) when it has one; else, or when that fails, the configured model.

    Never raises: a failure is the configured model with `error` saying what went wrong. With no provider or no key
    the offline demo model is offered after it, the one choice a chat can use then.
    """
    choice = resolve(settings, env)
    if choice.provider in ("demo", "scripted"):  # just themselves
        return Catalog([ModelInfo(id=choice.model, provider=choice.provider)], choice.model)
    fallback = [ModelInfo(id=choice.model, provider=choice.provider)] if choice.model else []
    if choice.lacks in ("provider", "key"):  # nothing to chat with yet but the offline demo: a picker offers it
        return Catalog([*fallback, DEMO], choice.model, choice.problem)
    if choice.problem and choice.lacks != "model":  # an openai server lists its models before one is chosen
        return Catalog(fallback, choice.model, choice.problem)
    try:
        if choice.provider == "openai":
            from agent_lsp.models.openai import list_models

            listed = await list_models(choice.base_url or "", choice.api_key(env))
        else:
            listed = await build(choice, env, settings.read_timeout).list_models()
    except ModelError as e:
        return Catalog(fallback, choice.model, e.message)
    return Catalog(listed, choice.model or (listed[0].id if listed else ""))
