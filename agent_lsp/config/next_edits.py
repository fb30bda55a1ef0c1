"""The `nextEdits` setting (PROTOCOL §11), checked key by key: a bad key is a warning naming `nextEdits.<key>` and
the others still apply. agent_lsp/completions/next_edits.py uses it; a model key left unset is `completions`' own."""

from __future__ import annotations

import functools
from typing import Any, Optional

from agent_lsp.config.section import Section, choice, integer, number, switch, text


class NextEditsSettings(Section):
    """Next-edit suggestions: the edit after the one you just made (docs/next-edits.md)."""

    enabled: switch() = True
    """false: no next edits (every request is answered {edits: []} with no model call)."""
    provider: Optional[choice(("anthropic", "openai"))] = None
    """Who suggests; none: `completions.provider`."""
    model: Optional[text()] = None
    """The model that suggests; none: `completions.model` (else the provider's small, fast one)."""
    base_url: Optional[text()] = None
    """Where that model's API is; none: `completions.baseUrl`. Never taken from a workspace's settings file."""
    api: Optional[choice(("chat", "fim"))] = None
    """fim (openai only): the raw prompt with Zeta's markers to {baseUrl}/completions (an open next-edit model);
    none: `completions.api`."""
    lines_above: integer(0, 50) = 3
    """Lines above the cursor's line that a suggestion may change."""
    lines_below: integer(0, 50) = 8
    """Lines below the cursor's line that a suggestion may change."""
    max_lines: integer(1, 100) = 10
    """The most lines one suggestion may replace or add."""
    timeout: number(0.1, 600, " of seconds") = 5.0
    """Seconds a suggestion may wait for the model."""


@functools.cache
def next_edits_setting() -> Any:
    """The type of the `next_edits` field of Settings."""
    from agent_lsp.config.completions import section_setting

    return section_setting(NextEditsSettings, "nextEdits")
