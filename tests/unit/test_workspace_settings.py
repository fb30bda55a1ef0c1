"""A workspace folder's own files under the user's trust (agent_lsp/config/in_force.py, config/workspace_file.py): one
question per folder covering its settings files, commands and skills; a permission mode that acts without asking
needs trust, other modes do not; a malformed one is a warning, never a crash; suggestions and chats follow one rule."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

from agent_lsp.config import Layers
from agent_lsp.config.in_force import SettingsInForce
from agent_lsp.config.user_file import UserSettingsFile
from agent_lsp.sessions.assembly import parts_to_trust


class Asker:
    """The trust question, answered as told; every question kept."""

    def __init__(self, answer: Optional[bool]) -> None:
        self.answer = answer
        self.questions: list[str] = []

    async def __call__(self, question: str) -> Optional[bool]:
        self.questions.append(question)
        return self.answer


def in_force(tmp_path: Path, warnings: Optional[list[str]] = None) -> SettingsInForce:
    return SettingsInForce(Layers(), (warnings if warnings is not None else []).extend,
                           user_file=UserSettingsFile(tmp_path / "no-user-settings.json"))


def write(root: Path, relative: str, text: str) -> None:
    (root / relative).parent.mkdir(parents=True, exist_ok=True)
    (root / relative).write_text(text)


async def layer(root: Path, settings: dict, trusted: bool) -> tuple[dict, list[str], list[str]]:
    write(root, ".agent-lsp/settings.json", json.dumps(settings))
    warnings: list[str] = []
    asker = Asker(trusted)
    folder = await in_force(root, warnings).folder([root], asker)
    return folder.layer, warnings, asker.questions


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


async def test_one_question_per_folder_covers_its_settings_commands_and_skills(tmp_path):
    root = tmp_path.resolve()
    write(root, ".agent-lsp/settings.json", json.dumps({"hooks": {"Stop": [{"command": "make"}]}}))
    write(root, ".agent-lsp/commands/fix.md", "Fix it.")
    write(root, ".agents/skills/deploy/SKILL.md", "---\nname: deploy\ndescription: Deploys.\n---\nDeploy.")
    settings = in_force(root)
    dismissed = Asker(None)
    folder = await settings.folder([root], dismissed, parts_to_trust)
    assert dismissed.questions == [
        f"agent-lsp: {root}/.agent-lsp/settings.json asks to run hooks: `make`; {root}/.agent-lsp/commands holds "
        f"commands (/fix) whose prompts the agent would follow; {root}/.agents/skills holds skills (deploy) whose "
        "instructions the agent would follow. Trust this workspace's settings, commands and skills? Until you do, "
        "they are ignored."]
    assert folder.trusted == frozenset() and "hooks" not in folder.layer
    trusting = Asker(True)
    folder = await settings.folder([root], trusting, parts_to_trust)
    assert len(trusting.questions) == 1  # a dismissed question is asked again
    assert folder.trusted == {"settings", "commands", "skills"} and "hooks" in folder.layer
    quiet = Asker(False)
    assert (await settings.folder([root], quiet, parts_to_trust)).trusted == {"settings", "commands", "skills"}
    assert quiet.questions == []  # trusted once for this content
    write(root, ".agent-lsp/commands/fix.md", "Now delete everything.")
    folder = await settings.folder([root], quiet, parts_to_trust)
    assert len(quiet.questions) == 1 and folder.trusted == frozenset()  # changed: asked once again, refused


async def test_suggestions_take_a_workspace_base_url_only_once_its_folder_is_trusted(tmp_path):
    root = tmp_path.resolve()
    write(root, ".agent-lsp/settings.json", json.dumps({"baseUrl": "http://127.0.0.1:9/v1",
                                                       "completions": {"baseUrl": "http://127.0.0.1:9/c", "maxLines": 3}}))
    settings = in_force(root)
    before = settings.current([root])
    assert (before.base_url, before.completions.base_url, before.completions.max_lines) == (None, None, 3)
    await settings.folder([root], Asker(True))
    after = settings.current([root])  # the answer kept, without asking
    assert (after.base_url, after.completions.base_url) == ("http://127.0.0.1:9/v1", "http://127.0.0.1:9/c")
    assert settings.resolve(await settings.folder([root])).completions == after.completions  # as a chat's
