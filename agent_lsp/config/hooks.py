"""The `hooks` setting, checked: shell commands by event, in the shape Claude Code users already write (the
commands run in sessions/shell_hooks.py)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any, Literal

EVENTS = ("PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop")
DEFAULT_TIMEOUT = 10


@dataclass(frozen=True)
class HookCommand:
    matcher: str
    """A regex on the tool name ("" or "*": every tool); ignored for events without a tool."""
    command: str
    timeout: float


def parse_hooks(value: Any) -> dict[str, list[HookCommand]]:
    """The hooks setting, checked; ValueError naming what is wrong."""
    if not isinstance(value, dict):
        raise ValueError("must be an object keyed by event name")
    parsed: dict[str, list[HookCommand]] = {}
    for event, groups in value.items():
        if event not in EVENTS:
            raise ValueError(f"has an unknown event {event!r} (known: {', '.join(EVENTS)})")
        if not isinstance(groups, list):
            raise ValueError(f"{event} must be a list")
        for group in groups:
            parsed.setdefault(event, []).extend(_group(event, group))
    return parsed


def _group(event: str, group: Any) -> list[HookCommand]:
    if not isinstance(group, dict):
        raise ValueError(f"{event} entries must be objects")
    matcher = group.get("matcher") or ""
    if not isinstance(matcher, str):
        raise ValueError(f"{event} matcher must be a string")
    try:
        re.compile(matcher if matcher != "*" else "")
    except re.error as e:
        raise ValueError(f"{event} matcher {matcher!r} is not a regex: {e}") from None
    commands = group.get("hooks") if "hooks" in group else [group]
    if not isinstance(commands, list):
        raise ValueError(f"{event} hooks must be a list")
    out = []
    for entry in commands:
        command = entry.get("command") if isinstance(entry, dict) else None
        if entry.get("type", "command") != "command" or not isinstance(command, str) or not command.strip():
            raise ValueError(f"{event} hooks need {{type: \"command\", command: \"...\"}}")
        timeout = entry.get("timeout", DEFAULT_TIMEOUT)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= 600:
            raise ValueError(f"{event} timeout must be a number of seconds from 1 to 600")
        out.append(HookCommand(matcher, command, float(timeout)))
    return out


@functools.cache
def shell_hooks() -> Any:
    """The `hooks` setting: its commands by event, each with its group's matcher; checked whole (parse_hooks)."""
    from typing import Annotated

    from pydantic import PlainValidator

    return Annotated[dict[str, list[HookCommand]],
                     PlainValidator(parse_hooks, json_schema_input_type=dict[Literal[EVENTS], list[dict[str, Any]]])]
