"""models/catalog.py: the models a picker offers when the provider cannot be listed."""

from __future__ import annotations

from agent_lsp.config import DEFAULT_MODEL, Settings
from agent_lsp.models.catalog import catalog


async def test_no_key_offers_the_configured_model_then_the_offline_demo():
    found = await catalog(Settings(provider="anthropic"), {})
    assert [(m.id, m.provider) for m in found.models] == [(DEFAULT_MODEL, "anthropic"), ("demo", "demo")]
    assert found.default == DEFAULT_MODEL
    assert found.error.startswith("The anthropic provider needs ANTHROPIC_API_KEY.")


async def test_no_provider_offers_the_demo_alone():
    found = await catalog(Settings(), {})
    assert [(m.id, m.provider, m.display_name) for m in found.models] == [("demo", "demo", "demo (offline, no key)")]
    assert found.default == "" and found.error


async def test_a_model_api_out_of_reach_offers_no_demo():
    """Only a missing provider or key adds it: a configured API that refuses stays the user's to fix."""
    found = await catalog(Settings(provider="openai", model="m", base_url="http://api.example.com/v1"),
                          {"AGENT_LSP_OFFLINE": "1"})
    assert [m.id for m in found.models] == ["m"] and "AGENT_LSP_OFFLINE=1" in found.error
