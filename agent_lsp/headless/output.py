"""What a headless run writes on stdout, in its output format: `text` (the final answer), `json` (one result object),
`stream-json` (one JSON object per line, each written and flushed as it happens: init, each update, the result).
Logs and messages go to stderr, never here."""

from __future__ import annotations

import json
import logging
from typing import Any, Optional, TextIO

from agent_lsp.core.events import AgentUpdate
from agent_lsp.sessions.results import ChatOutcome

log = logging.getLogger(__name__)
ANSWERED = ("end_turn", "max_turns")
"""The stop reasons of a chat that answered (exit status 0)."""


def result_object(outcome: ChatOutcome, is_error: bool) -> dict[str, Any]:
    """The `json` format's object (and the members of `stream-json`'s last line)."""
    found: dict[str, Any] = {
        "sessionId": outcome.session_id,
        "stopReason": outcome.stop_reason,
        "result": outcome.final_message,
        "usage": {k: v for k, v in outcome.usage.wire().items() if k != "kind"},
        "turns": outcome.turns_count,
        "toolCalls": outcome.tool_calls_count,
        "durationMs": outcome.duration_ms,
        "isError": is_error,
    }
    if outcome.error is not None:
        found["error"] = {"type": outcome.error.type, "message": outcome.error.message}
    return found


class Output:
    """stdout in one output format."""

    def __init__(self, output_format: str, stdout: TextIO) -> None:
        self.format = output_format
        self._stdout: Optional[TextIO] = stdout

    def init(self, session_id: str, model: str, tools: list[str]) -> None:
        """The chat is about to run (stream-json's first line)."""
        if self.format == "stream-json":
            self._line({"type": "init", "sessionId": session_id, "model": model, "tools": tools})

    def update(self, update: AgentUpdate) -> None:
        """One update of the chat, as agent/update carries it."""
        if self.format == "stream-json":
            self._line({"type": "update", "update": update.wire()})

    def result(self, outcome: ChatOutcome, is_error: bool) -> None:
        """How the chat ended: the answer (text), or the result object (json, stream-json's last line)."""
        if self.format == "text":
            if outcome.final_message:
                self._write(outcome.final_message.rstrip("\n") + "\n")
        elif self.format == "json":
            self._line(result_object(outcome, is_error))
        else:
            self._line({"type": "result", **result_object(outcome, is_error)})

    def _line(self, value: dict[str, Any]) -> None:
        self._write(json.dumps(value, ensure_ascii=False) + "\n")

    def _write(self, text: str) -> None:
        if self._stdout is None:
            return
        try:
            self._stdout.write(text)
            self._stdout.flush()
        except (OSError, ValueError) as e:  # stdout closed (`| head`): the chat still ends and is saved
            log.warning("standard output cannot be written (%s); nothing more is written to it", e)
            self._stdout = None
