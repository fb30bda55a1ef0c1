"""Hook points of the loop: code that runs when the user's prompt arrives, before each model call, before and after
each tool call, and when the chat stops.

A hook is an async callable taking a `HookEvent` and answering a `HookVerdict` (or None to let things be). The
loop calls every hook of the chat in order at each point and combines what they say: the first block wins, input
and output rewrites chain, added context is joined. Embedders pass Python hooks; settings add shell hooks
(sessions/shell_hooks.py) in the shape Claude Code users already write.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Literal, Optional

HookName = Literal["UserPromptSubmit", "PreModel", "PreToolUse", "PostToolUse", "Stop"]


@dataclass(frozen=True)
class HookEvent:
    """What happened. Tool events carry the call; PostToolUse its output; UserPromptSubmit the prompt."""

    event: HookName
    tool_name: Optional[str] = None
    tool_input: Optional[dict[str, Any]] = None
    tool_output: Optional[str] = None
    tool_error: bool = False
    prompt: Optional[str] = None
    stop_reason: Optional[str] = None


@dataclass
class HookVerdict:
    """What a hook wants. Every field is optional; an empty verdict changes nothing."""

    block: Optional[str] = None
    """Refuse the tool call (PreToolUse) or the prompt (UserPromptSubmit); the reason is what the model or the user
    reads."""
    input: Optional[dict[str, Any]] = None
    """PreToolUse: run the call with this input instead."""
    output: Optional[str] = None
    """PostToolUse: the model reads this instead of the tool's output."""
    context: Optional[str] = None
    """UserPromptSubmit, PreModel: text added for the model."""
    warnings: list[str] = field(default_factory=list)
    """Shown to the user as notices (a hook that failed, timed out or answered nonsense)."""


Hook = Callable[[HookEvent], Awaitable[Optional[HookVerdict]]]


async def run_hooks(hooks: list[Hook], event: HookEvent) -> HookVerdict:
    """Every hook for one event, combined; a hook that raises is a warning, never the end of the chat."""
    combined = HookVerdict()
    for hook in hooks:
        if event.event == "PreToolUse" and combined.input is not None:
            event = HookEvent(**{**vars(event), "tool_input": combined.input})
        try:
            verdict = await hook(event)
        except Exception as e:  # an embedder's bug must not end the user's chat
            combined.warnings.append(f"A {event.event} hook failed: {type(e).__name__}: {e}")
            continue
        if verdict is None:
            continue
        combined.warnings += verdict.warnings
        if verdict.block is not None and combined.block is None:
            combined.block = verdict.block
        if verdict.input is not None:
            combined.input = verdict.input
        if verdict.output is not None:
            combined.output = verdict.output
            event = HookEvent(**{**vars(event), "tool_output": verdict.output})
        if verdict.context:
            combined.context = f"{combined.context}\n{verdict.context}" if combined.context else verdict.context
    return combined
