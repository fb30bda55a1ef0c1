"""What the Messages API accepts as a history, checked on the requests the fake received."""

from __future__ import annotations

from typing import Any


def history_problems(messages: list[dict[str, Any]]) -> list[str]:
    """Why the API would answer 400 to these messages (empty when it would not)."""
    problems = []
    if not messages or messages[0]["role"] != "user":
        problems.append("the history must start with a user message")
    for i, message in enumerate(messages):
        seen_ids: set[str] = set()
        if i and message["role"] == messages[i - 1]["role"]:
            problems.append(f"messages.{i}: two {message['role']} messages in a row")
        blocks = message["content"] if isinstance(message["content"], list) else [{"type": "text",
                                                                                  "text": message["content"]}]
        for block in blocks:
            if block["type"] == "text" and not block["text"].strip():
                problems.append(f"messages.{i}: an empty text block")
            if block["type"] == "tool_use":
                if not isinstance(block.get("input"), dict):
                    problems.append(f"messages.{i}: tool_use input is not an object")
                if block["id"] in seen_ids:
                    problems.append(f"messages.{i}: tool_use id {block['id']} repeated")
                seen_ids.add(block["id"])
        uses = [b["id"] for b in blocks if b["type"] == "tool_use"]
        if message["role"] == "assistant" and uses:
            following = messages[i + 1]["content"] if i + 1 < len(messages) else []
            results = [b["tool_use_id"] for b in following if isinstance(b, dict) and b["type"] == "tool_result"]
            leading = [b for b in following[:len(uses)] if isinstance(b, dict) and b["type"] == "tool_result"]
            if sorted(results) != sorted(uses) or len(leading) != len(uses):
                problems.append(f"messages.{i}: tool_use ids {uses} answered by {results} (must be one-to-one, first)")
    return problems
