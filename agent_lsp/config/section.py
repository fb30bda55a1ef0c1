"""Settings objects: frozen dataclasses whose field types say what each key accepts, checked the way settings are.

A `Section` is checked key by key: a bad or unknown key is a problem naming it, and the other keys still apply (a
field whose type is a Section is checked the same way, inside). An `Entry` (a server of a map by name, say) is taken
whole or refused with its first problem; `by_name` keeps a map's good entries. A field's type is written as a call
(`integer(1, 9)`, `choice(...)`): pydantic evaluates the annotations, so these run, and pydantic loads, only when a
value is first checked (config/checks.py) — starting the server with nothing to check never imports it. A field's
docstring is its description in schemas/settings.json."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Iterator, Literal, Mapping, Optional


def camel(name: str) -> str:
    """A field's key as settings are written: max_turns -> maxTurns."""
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


class _Object:
    __pydantic_config__ = {"alias_generator": camel, "populate_by_name": True, "use_attribute_docstrings": True}
    _keys: dict[str, str] = {}
    """Field name by the key it may be given as: its camelCase key, or its own name."""

    @classmethod
    def wire_keys(cls) -> list[str]:
        return [camel(f.name) for f in dataclasses.fields(cls)]  # type: ignore[arg-type]

    @staticmethod
    def wire_key(name: str) -> str:
        return camel(name)

    @classmethod
    def _made(cls) -> None:
        cls._keys = {key: f.name for f in dataclasses.fields(cls) for key in (camel(f.name), f.name)}  # type: ignore


class Section(_Object):
    """A settings object; a subclass is a frozen dataclass. It reads as the mapping of its values by field name
    too (`**section`, `section == {...}`), as the settings it replaces were mappings."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        dataclasses.dataclass(frozen=True, eq=False)(cls)
        cls._made()

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        from agent_lsp.config.checks import partly_valid

        return partly_valid(cls, handler(source))

    def keys(self) -> Iterator[str]:
        return iter(f.name for f in dataclasses.fields(self))  # type: ignore[arg-type]

    def __getitem__(self, name: str) -> Any:
        if name not in type(self)._keys.values():
            raise KeyError(name)
        return getattr(self, name)

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, Mapping):
            return dict(self) == dict(other)
        return type(other) is type(self) and all(self[name] == other[name] for name in self.keys())

    def __hash__(self) -> int:
        return hash(tuple(self[name] for name in self.keys()))


class Entry(_Object):
    """An object taken whole or not at all; a subclass is a frozen dataclass. A bad one is refused with its first
    problem, named after its key ("`args` must be a list of strings")."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        dataclasses.dataclass(frozen=True)(cls)
        cls._made()

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        from agent_lsp.config.checks import whole

        return whole(cls, handler(source))


# The types of fields: each call gives an Annotated type (the same object for the same arguments, so a value
# checked alone reuses its checker); the first one made imports pydantic (through config/checks.py).


@functools.cache
def text() -> Any:
    """A non-empty string, stripped."""
    c = _checks()
    return c.annotated(str, c.Strict(), c.StringConstraints(strip_whitespace=True, min_length=1),
                       c.Problem("must be a non-empty string"))


@functools.cache
def matching(pattern: str, problem: str) -> Any:
    """A string in which the regular expression `pattern` is found; `problem` says what it must be."""
    c = _checks()
    return c.annotated(str, c.Strict(), c.StringConstraints(pattern=pattern), c.Problem(problem))


@functools.cache
def choice(options: tuple[str, ...]) -> Any:
    """One of `options`."""
    c = _checks()
    return c.annotated(Literal[options], c.Problem(f"must be one of {', '.join(options)}"))


@functools.cache
def integer(low: int, high: Optional[int] = None) -> Any:
    """An integer from `low` to `high` (not a boolean)."""
    c = _checks()
    told = f"must be an integer from {low} to {high}" if high is not None else f"must be an integer of at least {low}"
    return c.annotated(int, c.Strict(), c.Field(ge=low, le=high), c.Problem(told))


@functools.cache
def number(low: float, high: float, unit: str = "") -> Any:
    """A number from `low` to `high`, as a float (not a boolean); `unit` as a problem says it (" of seconds")."""
    c = _checks()
    told = f"must be a number{unit} from {low} to {high}"
    return c.annotated(float, c.Strict(), c.Field(ge=low, le=high), c.Problem(told))


@functools.cache
def switch() -> Any:
    """true or false."""
    c = _checks()
    return c.annotated(bool, c.Strict(), c.Problem("must be true or false"))


@functools.cache
def strings(problem: str, at_least: int = 0, non_empty: bool = False) -> Any:
    """A list of strings (non-empty ones, stripped, with `non_empty`), as a tuple; `problem` says what it must be."""
    c = _checks()
    stripped = [c.StringConstraints(strip_whitespace=True, min_length=1)] if non_empty else []
    item = c.annotated(str, c.Strict(), *stripped)
    return c.annotated(tuple[item, ...], c.Field(min_length=at_least or None), c.Problem(problem))


@functools.cache
def string_map(problem: str) -> Any:
    """An object of strings by name; `problem` says what it must be."""
    c = _checks()
    return c.annotated(dict[str, c.annotated(str, c.Strict())], c.Problem(problem))


@functools.cache
def an_object() -> Any:
    """A JSON object, anything inside."""
    c = _checks()
    return c.annotated(dict[str, Any], c.Problem("must be an object"))


@functools.cache
def then(kind: Any, check: Any) -> Any:
    """A value of `kind` passed through `check`, which gives it back (changed or not) or raises a ValueError saying
    what is wrong."""
    c = _checks()
    return c.annotated(kind, c.AfterValidator(check))


@functools.cache
def by_name(entry: Any, noun: str, dropped: str) -> Any:
    """Entries by name (`entry` a type, an Entry most often): the bad ones are left out and named in one problem
    ("server `x`: ... (that server is not started)"), the good ones apply."""
    c = _checks()
    return c.annotated(dict[str, entry], c.ByName(noun, dropped))


def _checks() -> Any:
    from agent_lsp.config import checks

    return checks
