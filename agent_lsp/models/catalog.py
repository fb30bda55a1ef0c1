"""Which models the configured provider offers (`agent/models`, PROTOCOL §8)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping, Optional

from agent_lsp.config import Settings
from agent_lsp.core.ports import ModelError, ModelInfo
from agent_lsp.models.registry import build_model, model_name, openai_endpoint, provider_of


@dataclass
class Catalog:
    """The models on offer, the one a chat uses by default, and why the list is only that one if it failed."""

    models: list[ModelInfo]
    default: str
    error: Optional[str] = None


async def catalog(settings: Settings, env: Mapping[str, str] = os.environ) -> Catalog:
    """The provider's own list (its models endpoint) when it has one; else, or when that fails, the configured model.

    Never raises: a failure is the configured model with `error` saying what went wrong.
    """
    provider = provider_of(settings, env)
    configured = model_name(settings, env)
    fallback = [ModelInfo(id=configured, provider=provider or "none")] if configured else []
    try:
        if provider == "openai" and configured != "demo" and not configured.startswith("script:"):
            from agent_lsp.models.openai import list_models

            listed = await list_models(*openai_endpoint(settings, env))
        else:
            model = build_model(settings, env)
            lister = getattr(model, "list_models", None)
            if lister is None:  # the demo and scripted models: just themselves
                kind = "demo" if model.name == "demo" else provider or "scripted"
                return Catalog([ModelInfo(id=model.name, provider=kind)], model.name)
            listed = await lister()
    except ModelError as e:
        return Catalog(fallback, configured, e.message)
    return Catalog(listed, configured or (listed[0].id if listed else ""))
