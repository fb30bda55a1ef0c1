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
# checked alone reuses its checker); pydantic is imported when the first one is made.


@functools.cache
def text() -> Any:
    """A non-empty string, stripped."""
    from pydantic import Strict, StringConstraints

    from agent_lsp.config.checks import Problem

    return _annotated(str, Strict(), StringConstraints(strip_whitespace=True, min_length=1),
                      Problem("must be a non-empty string"))


@functools.cache
def choice(options: tuple[str, ...]) -> Any:
    """One of `options`."""
    from agent_lsp.config.checks import Problem

    return _annotated(Literal[options], Problem(f"must be one of {', '.join(options)}"))


@functools.cache
def integer(low: int, high: Optional[int] = None) -> Any:
    """An integer from `low` to `high` (not a boolean)."""
    from pydantic import Field, Strict

    from agent_lsp.config.checks import Problem

    told = f"must be an integer from {low} to {high}" if high is not None else f"must be an integer of at least {low}"
    return _annotated(int, Strict(), Field(ge=low, le=high), Problem(told))


@functools.cache
def number(low: float, high: float, unit: str = "") -> Any:
    """A number from `low` to `high`, as a float (not a boolean); `unit` as a problem says it (" of seconds")."""
    from pydantic import Field, Strict

    from agent_lsp.config.checks import Problem

    return _annotated(float, Strict(), Field(ge=low, le=high), Problem(f"must be a number{unit} from {low} to {high}"))


@functools.cache
def switch() -> Any:
    """true or false."""
    from pydantic import Strict

    from agent_lsp.config.checks import Problem

    return _annotated(bool, Strict(), Problem("must be true or false"))


@functools.cache
def strings(problem: str, at_least: int = 0, non_empty: bool = False) -> Any:
    """A list of strings (non-empty ones, stripped, with `non_empty`), as a tuple; `problem` says what it must be."""
    from pydantic import Field, Strict, StringConstraints

    from agent_lsp.config.checks import Problem

    item = _annotated(str, Strict(), *([StringConstraints(strip_whitespace=True, min_length=1)] if non_empty else []))
    return _annotated(tuple[item, ...], *([Field(min_length=at_least)] if at_least else []), Problem(problem))


@functools.cache
def by_name(entry: Any, noun: str, dropped: str) -> Any:
    """Entries by name (`entry` a type, an Entry most often): the bad ones are left out and named in one problem
    ("server `x`: ... (that server is not started)"), the good ones apply."""
    from agent_lsp.config.checks import ByName

    return _annotated(dict[str, entry], ByName(noun, dropped))


def _annotated(kind: Any, *metadata: Any) -> Any:
    from typing import Annotated

    return Annotated[(kind, *metadata)]  # type: ignore[return-value]
