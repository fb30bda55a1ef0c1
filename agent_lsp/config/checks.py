"""How pydantic checks settings objects (config/section.py) and writes their JSON Schema: a Section's keys one by one,
an Entry whole, a map by name entry by entry, and each bad value told in the words its field gives (`Problem`).
Imported only when something is checked: pydantic stays out of a start with nothing to check."""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Annotated, Any, Callable, Mapping

from pydantic import AfterValidator, Field, Strict, StringConstraints, TypeAdapter, ValidationError
from pydantic.json_schema import GenerateJsonSchema
from pydantic_core import PydanticCustomError, core_schema

from agent_lsp.config.issues import Issue, PartlyValid

__all__ = ["AfterValidator", "ByName", "Field", "Problem", "Strict", "StringConstraints", "annotated", "checked",
           "checked_value", "json_schema", "partly_valid", "whole"]


def annotated(kind: Any, *metadata: Any) -> Any:
    """`Annotated[kind, *metadata]`."""
    return Annotated[(kind, *metadata)]


@dataclass(frozen=True)
class Problem:
    """What a bad value is told, whatever pydantic found wrong with it ("must be an integer from 1 to 9"). In a
    field's `Annotated[...]`, before the validators that say something more precise themselves."""

    message: str

    def __get_pydantic_core_schema__(self, source: Any, handler: Callable[[Any], Any]) -> Any:
        def checked(value: Any, validate: Callable[[Any], Any]) -> Any:
            try:
                return validate(value)
            except ValidationError:
                raise PydanticCustomError("setting", self.message) from None

        return core_schema.no_info_wrap_validator_function(checked, handler(source))  # its schema stays the type's


def _raised(error: Any) -> Any:
    """The ValueError one of our checks raised for this pydantic error, if it was one."""
    raised = (error.get("ctx") or {}).get("error")
    return raised if isinstance(raised, ValueError) else None


def said(error: Any) -> str:
    """What one pydantic error says: the words of our own check, else its message."""
    raised = _raised(error)
    return str(raised) if raised else error["msg"]


def partly_valid(cls: Any, schema: Any) -> Any:
    """`schema` (of Section `cls`) checking key by key: PartlyValid, holding the object made of the good keys,
    when some key was bad or unknown."""

    def check(values: Any, validate: Callable[[Any], Any]) -> Any:
        if isinstance(values, cls):
            return values
        if not isinstance(values, Mapping):
            raise ValueError(f"must be an object with {', '.join(cls.wire_keys())}")
        issues = [Issue(key, f"has an unknown key `{key}` ({', '.join(cls.wire_keys())})", "unknown")
                  for key in values if key not in cls._keys]
        given = {key: value for key, value in values.items() if key in cls._keys and value is not None}
        try:
            section = validate(given)
        except ValidationError as e:
            kept: dict[str, Any] = {}
            left_out: set[str] = set()
            for error in e.errors():
                key = str(error["loc"][0])
                if key in left_out:
                    continue
                left_out.add(key)
                partly = _raised(error)
                if isinstance(partly, PartlyValid):
                    kept[cls._keys[key]] = partly.value
                    issues += [Issue(key, problem, "kept") for problem in partly.problems]
                else:
                    issues.append(Issue(key, said(error), "default"))
            section = dataclasses.replace(validate({k: v for k, v in given.items() if k not in left_out}), **kept)
        if issues:
            order = list(values)
            issues.sort(key=lambda issue: order.index(issue.key))
            raise PartlyValid([_within(issue) for issue in issues], section, tuple(issues))
        return section

    return core_schema.no_info_wrap_validator_function(check, schema)


def _within(issue: Issue) -> str:
    """An issue as the key holding this object tells it."""
    if issue.outcome == "unknown":
        return f"{issue.text}; it is ignored"
    if issue.outcome == "default":
        return f"`{issue.key}` {issue.text}; using the default instead"
    return f"`{issue.key}` {issue.text}"


def whole(cls: Any, schema: Any) -> Any:
    """`schema` (of Entry `cls`) refusing a bad value with one ValueError: its first problem, named after its key."""
    required = [f for f in dataclasses.fields(cls) if f.default is f.default_factory is dataclasses.MISSING]

    def check(value: Any, validate: Callable[[Any], Any]) -> Any:
        if isinstance(value, cls):
            return value
        if not isinstance(value, Mapping):
            keys = " and ".join(f"`{cls.wire_key(f.name)}`" for f in required)
            raise ValueError("must be an object" + (f" with {keys}" if required else ""))
        value = {key: v for key, v in value.items() if v is not None}  # null: left out
        absent = {cls.wire_key(f.name): None for f in required if not {f.name, cls.wire_key(f.name)} & set(value)}
        try:  # an absent key is told what a bad value is told (its Problem)
            return validate({**value, **absent})
        except ValidationError as e:
            raise ValueError(_refusal(cls, e.errors())) from None

    return core_schema.no_info_wrap_validator_function(check, schema)


def _refusal(cls: Any, errors: list[Any]) -> str:
    unknown = sorted(str(e["loc"][0]) for e in errors if e["type"] == "unexpected_keyword_argument")  # extra="forbid"
    if unknown:
        return ("unknown field " + ", ".join(f"`{k}`" for k in unknown) + " (the fields are "
                + ", ".join(f"`{k}`" for k in cls.wire_keys()) + ")")
    error = errors[0]
    return f"`{error['loc'][0]}` {said(error)}" if error["loc"] else said(error)


@dataclass(frozen=True)
class ByName:
    """Entries by name, each whole or not at all: the bad ones are left out and named in one problem (PartlyValid),
    the good ones apply (config/section.py `by_name`)."""

    noun: str
    dropped: str

    def __get_pydantic_core_schema__(self, source: Any, handler: Callable[[Any], Any]) -> Any:
        return core_schema.no_info_wrap_validator_function(self._entries, handler(source))

    def _entries(self, value: Any, validate: Callable[[Any], Any]) -> Any:
        if not isinstance(value, dict):
            raise ValueError(f"must be an object of {self.noun}s by name")
        good, problems = {}, []
        for name, entry in value.items():
            try:
                good.update(validate({name: entry}))
            except ValidationError as e:
                problems.append(f"{self.noun} `{name}`: {said(e.errors()[0])}")
        if problems:
            raise PartlyValid(["; ".join(problems) + f" ({self.dropped})"], good)
        return good


@functools.cache
def _adapter(kind: Any) -> TypeAdapter[Any]:
    return TypeAdapter(kind)  # built once per type, on first use


def checked(cls: Any, values: Mapping[str, Any]) -> tuple[Any, list[str], tuple[Issue, ...]]:
    """Section `cls` made of `values` (never raises on a bad key); the fields `values` set, in their order; an
    issue for each key left out or cut down."""
    try:
        section, issues = _adapter(cls).validate_python(values), ()
    except ValidationError as e:
        partly = _raised(e.errors()[0])
        if not isinstance(partly, PartlyValid):
            raise
        section, issues = partly.value, partly.issues
    left_out = {issue.key for issue in issues if issue.outcome != "kept"}
    return section, [cls._keys[k] for k, v in values.items() if k in cls._keys and v is not None
                     and k not in left_out], issues


def checked_value(kind: Any, value: Any) -> Any:
    """`value` checked as `kind` alone (a type of config/section.py); ValueError (PartlyValid when some of it was
    kept) saying what is wrong."""
    try:
        return _adapter(kind).validate_python(value)
    except ValidationError as e:
        raise (_raised(e.errors()[0]) or ValueError(said(e.errors()[0]))) from None


class SettingsSchema(GenerateJsonSchema):
    """The JSON Schema of settings as written: a null is the same as leaving the key out, so it is not one of the
    types shown; no titles on properties (their descriptions say what they are), no `null` defaults."""

    def nullable_schema(self, schema: Any) -> Any:
        return self.generate_inner(schema["schema"])

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def default_schema(self, schema: Any) -> Any:
        generated = super().default_schema(schema)
        if generated.get("default", ...) is None:
            del generated["default"]
        return generated


def json_schema(cls: Any, title: str) -> dict[str, Any]:
    """The JSON Schema of Section `cls` as its settings are written (by their camelCase keys)."""
    return {**_unwrapped(_adapter(cls).json_schema(by_alias=True, schema_generator=SettingsSchema)),
            "$schema": SettingsSchema.schema_dialect, "title": title}


def _unwrapped(schema: Any) -> Any:
    """`schema` with each description on one line (docstrings wrap where the source does)."""
    if isinstance(schema, dict):
        return {k: " ".join(v.split()) if k == "description" and isinstance(v, str) else _unwrapped(v)
                for k, v in schema.items()}
    return [_unwrapped(v) for v in schema] if isinstance(schema, list) else schema
