"""What was left out of a settings value, and why: a value kept in part (`PartlyValid`), a key of a settings object
left out or cut down (`Issue`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Union


class PartlyValid(ValueError):
    """Some of a value was bad: `value` keeps the good part; `problems` say what was left out (one warning each, or
    one message for them all); `issues` name the keys of a settings object left out or cut down."""

    def __init__(self, problems: Union[str, list[str]], value: Any, issues: tuple[Issue, ...] = ()) -> None:
        self.problems = [problems] if isinstance(problems, str) else problems
        super().__init__("; ".join(self.problems))
        self.value, self.issues = value, issues


@dataclass(frozen=True)
class Issue:
    """A key of a settings object that was left out ("unknown", or "default": its default applies) or kept in part
    ("kept"), and what was wrong with it."""

    key: str
    text: str
    outcome: Literal["unknown", "default", "kept"]
