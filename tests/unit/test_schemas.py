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
    assert kinds == ["confirmation_request", "notice", "text_delta", "thinking_delta", "tool_call",
                     "tool_call_update", "turn_start", "usage"]
