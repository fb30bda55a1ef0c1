"""What the Messages API and the chat.completions API accept as a history, checked on the requests the fakes
received."""

from __future__ import annotations

import json
import re
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


TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""What OpenAI accepts as a function name (compatible servers accept no more)."""


def chat_history_problems(messages: list[dict[str, Any]]) -> list[str]:
    """Why a chat.completions API would answer 400 to these messages (empty when it would not): every
    assistant tool_call answered by exactly one tool message right after it, nothing else answered."""
    problems = []
    roles = [m.get("role") for m in messages]
    if roles[:1] == ["system"]:
        roles, messages = roles[1:], messages[1:]
    if not messages or roles[0] != "user":
        problems.append("the history must start with a user message (after the system message)")
    i = 0
    while i < len(messages):
        message = messages[i]
        role = message.get("role")
        if role not in ("user", "assistant", "tool"):
            problems.append(f"messages.{i}: role {role!r}")
        if role == "user" and not (isinstance(message.get("content"), (str, list)) and message["content"]):
            problems.append(f"messages.{i}: a user message without content")
        if role == "tool":
            problems.append(f"messages.{i}: a tool message that answers no preceding tool_calls")
        if role != "assistant":
            i += 1
            continue
        calls = message.get("tool_calls") or []
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            problems.append(f"messages.{i}: assistant content is {type(content).__name__}")
        if not calls and not (content or "").strip():
            problems.append(f"messages.{i}: an assistant message with neither content nor tool_calls")
        ids = []
        for call in calls:
            function = call.get("function") or {}
            if not isinstance(call.get("id"), str) or not call["id"]:
                problems.append(f"messages.{i}: a tool_call without an id")
            if call.get("type") != "function":
                problems.append(f"messages.{i}: tool_call type {call.get('type')!r}")
            if not isinstance(function.get("name"), str) or not TOOL_NAME.match(function["name"]):
                problems.append(f"messages.{i}: tool_call name {function.get('name')!r}")
            try:
                arguments = json.loads(function.get("arguments"))
            except (TypeError, ValueError):
                arguments = None
            if not isinstance(arguments, dict):  # Ollama parses past calls' arguments
                problems.append(f"messages.{i}: tool_call arguments {function.get('arguments')!r} not a JSON object")
            ids.append(call.get("id"))
        if len(set(ids)) != len(ids):
            problems.append(f"messages.{i}: tool_call ids {ids} repeated")
        answers = []
        j = i + 1
        while j < len(messages) and messages[j].get("role") == "tool":
            answer = messages[j]
            if not isinstance(answer.get("content"), str):
                problems.append(f"messages.{j}: tool content is not a string")
            answers.append(answer.get("tool_call_id"))
            j += 1
        if calls and sorted(map(str, answers)) != sorted(map(str, ids)):
            problems.append(f"messages.{i}: tool_calls {ids} answered by {answers} (must be one-to-one, right after)")
        if not calls and answers:
            problems.append(f"messages.{i + 1}: tool messages after an assistant message without tool_calls")
        i = j
    return problems
