"""What was left out of a settings value, and why: a value kept in part (`PartlyValid`), a key of a settings object
left out or cut down (`Issue`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal


class PartlyValid(ValueError):
    """Some of a value was bad: `value` keeps the good part; `problems` say what was left out (one warning each);
    `issues` name the keys of a settings object left out or cut down."""

    def __init__(self, problems: list[str], value: Any, issues: tuple[Issue, ...] = ()) -> None:
        super().__init__("; ".join(problems))
        self.problems, self.value, self.issues = problems, value, issues


@dataclass(frozen=True)
class Issue:
    """A key of a settings object that was left out ("unknown", or "default": its default applies) or kept in part
    ("kept"), and what was wrong with it."""

    key: str
    text: str
    outcome: Literal["unknown", "default", "kept"]
