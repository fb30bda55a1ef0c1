"""The `completions` setting (PROTOCOL §10), checked key by key: a bad key is a warning naming `completions.<key>`
and the others still apply. agent_lsp/completions/ uses it; models/resolver.py's `resolve_completions` reads its
model keys."""

from __future__ import annotations

import functools
from typing import Any, Optional

from agent_lsp.config.issues import PartlyValid
from agent_lsp.config.section import Section, choice, integer, number, strings, switch, text

DEFAULT_EXCLUDE = (".env", ".env.*", "*.pem", "*.key", "*.p12", "id_rsa*", "id_ed25519*", ".netrc", ".npmrc",
                   ".pypirc")
"""Files whose text is never sent for a suggestion, whatever `completions.exclude` adds."""


class CompletionsSettings(Section):
    """Suggestions as you type (docs/settings.md)."""

    enabled: switch() = True
    """false: no suggestions (every request is answered with no item and no model call)."""
    provider: Optional[choice(("anthropic", "openai"))] = None
    """Who suggests; none: the chat's provider."""
    model: Optional[text()] = None
    """The model that suggests; none: the chat's model when that is demo or script:FILE, else the provider's small,
    fast one (anthropic: claude-haiku-5-5; openai: the chat's model)."""
    base_url: Optional[text()] = None
    """Where that model's API is; none: the chat's baseUrl when both use the same provider, else the provider's own.
    Never taken from a workspace's settings file."""
    api: choice(("chat", "fim")) = "chat"
    """fim (openai only): the text before and after the cursor as `prompt` and `suffix` to {baseUrl}/completions."""
    exclude: strings("must be a list of globs", non_empty=True) = ()
    """Globs of files never sent, besides .env, .env.*, *.pem, *.key, *.p12, id_rsa*, id_ed25519*, .netrc, .npmrc,
    .pypirc."""
    max_lines: integer(1, 200) = 8
    """The most lines one suggestion has."""
    timeout: number(0.1, 600, " of seconds") = 10.0
    """Seconds a suggestion may wait for the model."""


def checked_section(section: type, name: str, value: Any) -> Any:
    """The setting `name` of type `section`, its bad keys left out and each named `name.<key>` in one PartlyValid."""
    from agent_lsp.config.checks import checked_value

    try:
        return checked_value(section, value)
    except PartlyValid as e:
        keys = ", ".join(section.wire_keys())
        problems = [f"`{name}.{i.key}` is unknown ({keys})" if i.outcome == "unknown" else
                    f"`{name}.{i.key}` {i.text}" + (" (its default applies)" if i.outcome == "default" else "")
                    for i in e.issues]
        raise PartlyValid("has problems: " + "; ".join(problems), e.value) from None


def section_setting(section: type, name: str) -> Any:
    """The type of a Settings field holding the object `section`, checked key by key as `name` (pydantic, and this
    check, only once a value is checked)."""
    from typing import Annotated

    from pydantic import PlainValidator

    return Annotated[section, PlainValidator(lambda value: checked_section(section, name, value),
                                             json_schema_input_type=section)]


@functools.cache
def completions_setting() -> Any:
    """The type of the `completions` field of Settings."""
    return section_setting(CompletionsSettings, "completions")
