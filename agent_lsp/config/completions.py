"""The `completions` setting (PROTOCOL §10), checked key by key: a bad value is a warning naming
`completions.<key>` and the rest of the object still applies. agent_lsp/completions/ uses it."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Mapping, Optional

from pydantic import BaseModel, ConfigDict, Field, Strict, StrictBool, StrictInt, StringConstraints, ValidationError
from pydantic.alias_generators import to_camel

from agent_lsp.config.mcp_servers import PartlyValid

DEFAULT_EXCLUDE = (".env", ".env.*", "*.pem", "*.key", "*.p12", "id_rsa*", "id_ed25519*", ".netrc", ".npmrc",
                   ".pypirc")
"""Files whose text is never sent for a suggestion, whatever `completions.exclude` adds."""

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class CompletionSettings(BaseModel):
    """Suggestions as you type: whether, from which model, and how much of it."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True,
                              use_attribute_docstrings=True)

    enabled: StrictBool = True
    """false: no suggestions (every request is answered with no item and no model call)."""
    provider: Optional[Literal["anthropic", "openai"]] = None
    """Default: the chat's `provider`."""
    model: Optional[Text] = None
    """Default: the chat's model when that is `demo` or `script:FILE`, else the provider's small, fast model."""
    base_url: Optional[Text] = None
    """Default: the chat's `baseUrl`."""
    api: Literal["chat", "fim"] = "chat"
    """`fim` (openai only): the text before and after the cursor as `prompt` and `suffix` to {baseUrl}/completions."""
    exclude: list[Text] = []
    """Globs of files never sent (added to .env, .env.*, *.pem, *.key, *.p12, id_rsa*, id_ed25519*, .netrc, .npmrc,
    .pypirc)."""
    max_lines: StrictInt = Field(8, ge=1, le=200)
    """Most lines a suggestion has."""
    timeout: Annotated[float, Strict()] = Field(10.0, gt=0, le=600)
    """Seconds a suggestion may wait for the model."""


def parse_completions(value: Any) -> dict[str, Any]:
    """The valid keys of a `completions` object, by field name; PartlyValid (keeping them) when some are bad."""
    if not isinstance(value, Mapping):
        raise ValueError("must be an object (enabled, provider, model, baseUrl, api, exclude, maxLines, timeout)")
    good: dict[str, Any] = {}
    problems = []
    for key, item in value.items():
        if item is None:
            continue
        try:
            checked = CompletionSettings.model_validate({key: item})
        except ValidationError as e:
            problems.append(f"`completions.{key}` {_why(e)}")
            continue
        good.update({name: getattr(checked, name) for name in checked.model_fields_set})
    if problems:
        raise PartlyValid("has bad values: " + "; ".join(problems) + " (their defaults apply)", good)
    return good


def _why(error: ValidationError) -> str:
    first = error.errors()[0]
    if first["type"] == "extra_forbidden":
        return "is not a setting of suggestions"
    return first["msg"][:1].lower() + first["msg"][1:]


def completion_settings(values: Mapping[str, Any]) -> CompletionSettings:
    """The settings in force from the checked keys of every layer (`Settings.completions`)."""
    return CompletionSettings.model_construct(**{k: v for k, v in values.items() if k in CompletionSettings.model_fields})


def completions_schema() -> dict[str, Any]:
    """The JSON Schema of the `completions` object (schemas/settings.json)."""
    schema = CompletionSettings.model_json_schema(by_alias=True)
    for part in (schema, *schema["properties"].values()):
        part.pop("title", None)
    return schema
