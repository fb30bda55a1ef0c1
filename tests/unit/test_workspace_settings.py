"""The workspace's settings file (agent_lsp/sessions/workspace_settings.py): a permission mode that acts without
asking needs trust, other modes do not, and a malformed one is a warning, never a crash."""

from __future__ import annotations

import json
from pathlib import Path

from agent_lsp.sessions.trust import Trust
from agent_lsp.sessions.workspace_settings import workspace_file_layer


async def layer(root: Path, settings: dict, trusted: bool) -> tuple[dict, list[str], list[str]]:
    (root / ".agent-lsp").mkdir(exist_ok=True)
    (root / ".agent-lsp" / "settings.json").write_text(json.dumps(settings))
    asked: list[str] = []

    async def ask(question: str) -> bool:
        asked.append(question)
        return trusted

    found, warnings = await workspace_file_layer(root, Trust(None), ask)
    return found, warnings, asked


async def test_a_hands_off_mode_applies_only_once_trusted(tmp_path):
    found, _, asked = await layer(tmp_path, {"permissionMode": "acceptEdits"}, trusted=False)
    assert "permission_mode" not in found and len(asked) == 1 and "edit files without asking" in asked[0]
    (tmp_path / "trusted").mkdir()
    found, _, _ = await layer(tmp_path / "trusted", {"permissionMode": "acceptEdits"}, trusted=True)
    assert found["permission_mode"] == "acceptEdits"


async def test_plan_needs_no_trust_and_a_malformed_mode_is_a_warning(tmp_path):
    found, _, asked = await layer(tmp_path, {"permissionMode": "plan"}, trusted=False)
    assert found["permission_mode"] == "plan" and asked == []
    found, warnings, asked = await layer(tmp_path, {"permissionMode": ["bypassPermissions"]}, trusted=False)
    assert "permission_mode" not in found and asked == [] and any("permissionMode" in w for w in warnings)
