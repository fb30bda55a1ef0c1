"""schemas/ is generated from agent_lsp/protocol.py and must not drift from it."""

from __future__ import annotations

import json
from pathlib import Path

from agent_lsp.protocol import schemas

SCHEMAS = Path(__file__).parents[2] / "schemas"


def test_schemas_match_the_models():
    on_disk = {p.stem: json.loads(p.read_text()) for p in SCHEMAS.glob("*.json")}
    assert on_disk == schemas(), "schemas/ is stale: run `python -m agent_lsp.protocol schemas`"


def test_every_update_kind_is_in_the_update_schema():
    update = schemas()["agent-update.params"]
    kinds = sorted(d["properties"]["kind"]["const"] for name, d in update["$defs"].items()
                   if "kind" in d.get("properties", {}))
    assert kinds == ["confirmation_request", "notice", "plan", "text_delta", "thinking_delta", "tool_call",
                     "tool_call_update", "turn_start", "usage"]


def test_what_the_server_sends_is_required_unless_it_can_be_absent():
    """Serialization mode: a field with a default is always sent, so required; one that can be None is not."""
    all_schemas = schemas()
    update = all_schemas["agent-update.params"]["$defs"]
    assert update["Usage"]["required"] == ["kind", "inputTokens", "outputTokens", "cacheReadInputTokens",
                                           "cacheCreationInputTokens"]
    assert update["ToolCallUpdate"]["required"] == ["kind", "toolCallId", "status"]
    assert update["ConfirmationRequest"]["required"] == ["kind", "toolCallId", "name", "title", "input", "options"]
    server = all_schemas["initialize.experimental.agent.server"]
    assert server["required"] == ["protocolVersion", "tools", "permissionModes", "features", "languageMethods"]
    session = all_schemas["agent-sessions.result"]["$defs"]["SessionInfo"]
    assert session["required"] == ["sessionId", "title", "createdAt", "updatedAt", "turnsCount", "usage"]
    # what the server receives keeps its defaults optional
    assert "required" not in all_schemas["agent-newSession.params"]
    assert all_schemas["agent-chat.params"]["required"] == ["message"]


def test_every_setting_is_described():
    settings = schemas()["settings"]
    objects = [settings, *settings["$defs"].values()]
    assert [(o.get("title"), key) for o in objects for key, p in o["properties"].items()
            if not p.get("description")] == []
