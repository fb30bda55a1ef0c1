"""skill: a skill's instructions by name (PROTOCOL §10 "Skills"): the body of its SKILL.md and the other files of its
folder, which read_file may then read. Made per chat with the skills found (sessions/skills.py)."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Sequence

from agent_lsp.core.paths import display, is_inside, real
from agent_lsp.core.tool import Tool, ToolContext, ToolError, ToolInput, ToolOutput, bound

MAX_LISTED_FILES = 100
Source = Literal["project", "user"]


@dataclass(frozen=True)
class Skill:
    """One skill: its SKILL.md's front matter and body, and where its folder is (a real path)."""

    name: str
    description: str
    source: Source
    folder: Path
    body: str
    allowed_tools: tuple[str, ...] = ()
    """Its `allowed-tools`, as written: shown with the body; permissions still ask as the mode says."""


class SkillInput(ToolInput):
    name: str


class SkillTool(Tool):
    name = "skill"
    kind = "read"
    description = "Load a skill listed under Skills: its instructions, and its other files (read them with read_file)."
    Input = SkillInput

    def __init__(self, skills: Sequence[Skill]) -> None:
        self.skills = {skill.name: skill for skill in skills}

    def title(self, input: SkillInput) -> str:
        return f"Skill {input.name}"

    async def run(self, ctx: ToolContext, input: SkillInput) -> ToolOutput:
        skill = self.skills.get(input.name)
        if skill is None:
            known = ", ".join(self.skills) or "none"
            what = "is not a skill name" if "/" in input.name or "\\" in input.name or ".." in input.name \
                else "is not a skill"
            raise ToolError(f"{input.name!r} {what}. Known skills: {known}.")
        files = await asyncio.to_thread(skill_files, skill.folder)
        roots = ctx.editor.roots
        shown = display(roots, skill.folder) if skill.source == "project" else str(skill.folder)
        parts = [f"Skill {skill.name} ({skill.source} skill, folder {shown}):", "", skill.body.strip()]
        if skill.allowed_tools:
            parts += ["", f"(allowed-tools: {', '.join(skill.allowed_tools)})"]
        if files:
            listed = [display(roots, f) if skill.source == "project" else str(f) for f in files[:MAX_LISTED_FILES]]
            more = ["[more files, not listed]"] if len(files) > MAX_LISTED_FILES else []
            parts += ["", "Other files of this skill (read them with read_file):", *listed, *more]
        return ToolOutput(bound("\n".join(parts)))


def skill_files(folder: Path) -> list[Path]:
    """The files of a skill's folder besides its SKILL.md, sorted, at most MAX_LISTED_FILES + 1; links that lead out
    of the folder left out (a project skill's own folder never leads out of the workspace: sessions/skills.py
    refuses it)."""
    found: list[Path] = []
    for top, dirs, names in os.walk(folder):  # links to folders are not walked into
        dirs[:] = sorted(d for d in dirs if d != ".git")
        for name in sorted(names):
            path = Path(top) / name
            if path == folder / "SKILL.md":
                continue
            resolved = real(path)
            if is_inside(resolved, folder) and resolved.is_file():
                found.append(resolved)
            if len(found) > MAX_LISTED_FILES:
                return found
    return found


def readable_folders(skills: Sequence[Skill]) -> tuple[Path, ...]:
    """The folders outside the workspace read_file may read: the user's skills'."""
    return tuple(skill.folder for skill in skills if skill.source == "user")
