"""Agent Skills (PROTOCOL §10 "Skills"): the folders holding a `SKILL.md` in the workspace's `.agents/skills/` and
`.claude/skills/` (once the user trusted the workspace folder: its one question, config/in_force.py) and in
the user's `<config dir>/agent-lsp/skills/` (the user's own: nothing asked). A workspace skill wins over a user skill
of the same name. A SKILL.md without a name or description, or with front matter this parser refuses, is left out
with a warning naming its path; so is a project skill whose folder or file is a link out of the workspace."""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
from pathlib import Path
from typing import Any, Mapping, Optional

from agent_lsp.config.in_force import TrustedPart
from agent_lsp.config.user_file import config_dir
from agent_lsp.core.paths import is_inside, real
from agent_lsp.sessions.front_matter import split_front_matter
from agent_lsp.tools.skill import Skill, Source

PROJECT_DIRS = (Path(".agents") / "skills", Path(".claude") / "skills")
SKILL_FILE = "SKILL.md"
MAX_SKILL_BYTES = 100_000
MAX_SKILLS = 1_000
"""Skill folders looked at per folder of skills (the rest are not read)."""
MAX_DESCRIPTION = 1_024
NAME = re.compile(r"[A-Za-z0-9]+(?:[-_.][A-Za-z0-9]+)*")
MAX_NAME = 64


def user_skills_dir(env: Mapping[str, str] = os.environ) -> Path:
    """$XDG_CONFIG_HOME/agent-lsp/skills, else ~/.config/agent-lsp/skills."""
    return config_dir(env) / "skills"


def valid_name(name: str) -> bool:
    """Whether `name` can name a skill: letters and digits, joined by single `-`, `_` or `.`; no `/`, no `..`."""
    return len(name) <= MAX_NAME and NAME.fullmatch(name) is not None


def parse_skill(data: bytes, folder: Path, source: Source) -> Skill:
    """The skill a SKILL.md holds; ValueError saying what is wrong with it."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"it is not valid UTF-8 ({e.reason} at byte {e.start})") from None
    fields, body = split_front_matter(text)
    if fields is None:
        raise ValueError("it has no front matter (a `---` line, then `name:` and `description:`)")
    name, description = _text(fields.get("name")), _text(fields.get("description"))
    if not name:
        raise ValueError("its front matter has no `name`")
    if not valid_name(name):
        raise ValueError(f"its name {name[:80]!r} is not a skill name (letters, digits, single `-`, `_` or `.`; at "
                         f"most {MAX_NAME} characters)")
    if not description:
        raise ValueError("its front matter has no `description`")
    description = " ".join(description.split())
    if len(description) > MAX_DESCRIPTION:
        description = description[:MAX_DESCRIPTION - 1] + "…"
    return Skill(name=name, description=description, source=source, folder=folder, body=body.strip(),
                 allowed_tools=_tools(fields.get("allowed-tools")))


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _tools(value: Any) -> tuple[str, ...]:
    """`allowed-tools` as a list, or as a string of names separated by commas (Claude Code) or spaces (the spec)."""
    if isinstance(value, list):
        return tuple(str(v).strip() for v in value if isinstance(v, str) and v.strip())
    if isinstance(value, str):
        return tuple(t.strip() for t in (value.split(",") if "," in value else value.split()) if t.strip())
    return ()


def _entries(folder: Path, inside: Optional[Path]) -> tuple[list[Path], list[str]]:
    """The skill folders (those holding a SKILL.md) of a folder of skills, sorted, at most MAX_SKILLS; with
    `inside`, the folder of skills, a skill folder or a SKILL.md whose link leads out of it is refused with a
    warning."""
    if inside is not None and folder.is_dir() and not is_inside(real(folder), inside):
        return [], [f"agent-lsp: the skills in {folder} were skipped: it is a link out of the workspace, which is not "
                    "followed"]
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return [], []
    found, warnings = [], []
    for name in names:
        entry = folder / name
        file = entry / SKILL_FILE
        if not file.is_file():
            continue
        if inside is not None and not (is_inside(real(entry), inside)
                                       and is_inside(real(file), inside)):
            warnings.append(f"agent-lsp: the skill {file} was skipped: it is a link out of the workspace, which is "
                            "not followed")
            continue
        found.append(entry)
        if len(found) == MAX_SKILLS:
            warnings.append(f"agent-lsp: {folder} holds more than {MAX_SKILLS} skills; the rest were not read")
            break
    return found, warnings


def read_skills(folder: Path, source: Source, inside: Optional[Path] = None) -> tuple[list[Skill], list[str]]:
    """The skills of a folder of skills, by name; a SKILL.md that cannot be read or is not a skill is skipped with
    a warning naming it. `inside`: the workspace folder project skills must stay in (links out refused)."""
    entries, warnings = _entries(folder, inside)
    skills, more = _read(entries, source)
    return skills, warnings + more


def _read(entries: list[Path], source: Source) -> tuple[list[Skill], list[str]]:
    """The skills of these skill folders, by name, and a warning per SKILL.md skipped."""
    found: dict[str, Skill] = {}
    warnings = []
    for entry in entries:
        file = entry / SKILL_FILE
        try:
            if file.stat().st_size > MAX_SKILL_BYTES:
                raise ValueError(f"it is over {MAX_SKILL_BYTES} bytes")
            skill = parse_skill(file.read_bytes(), real(entry), source)
            if skill.name in found:
                raise ValueError(f"the skill {skill.name} is already in {found[skill.name].folder}")
        except (OSError, ValueError) as e:
            warnings.append(f"agent-lsp: the skill {file} was skipped: {e}")
            continue
        found[skill.name] = skill
    return sorted(found.values(), key=lambda s: s.name), warnings


def _digest(entries: list[Path]) -> str:
    """What a trust answer about a folder of skills is about: each skill folder's name and SKILL.md."""
    h = hashlib.sha256()
    for entry in entries:
        try:
            h.update(entry.name.encode() + b"\0" + (entry / SKILL_FILE).read_bytes()[:MAX_SKILL_BYTES] + b"\0")
        except OSError:
            continue
    return h.hexdigest()


def skills_to_trust(root: Path) -> list[TrustedPart]:
    """The workspace's skills (its `.agents/skills`, then `.claude/skills`) as the folder's trust question names
    them ([] when there are none)."""
    asks, contents = [], []
    for folder, entries in _project_folders(root)[0]:
        names = [e.name for e in entries]
        shown = ", ".join(names[:10]) + (f", and {len(names) - 10} more" if len(names) > 10 else "")
        asks.append(f"{folder} holds skills ({shown}) whose instructions the agent would follow")
        contents.append(_digest(entries))
    return [TrustedPart("skills", "; ".join(asks), "".join(contents))] if asks else []


def _project_folders(root: Path) -> tuple[list[tuple[Path, list[Path]]], list[str]]:
    """The workspace's folders of skills that hold skills, each with its skill folders (a link from one to the
    other counted once); and the warnings about skill folders refused."""
    root = real(root)
    found, warnings, looked = [], [], set()
    for folder in (root / d for d in PROJECT_DIRS):
        resolved = real(folder)
        if resolved in looked:  # .claude/skills a link to .agents/skills: one folder
            continue
        looked.add(resolved)
        entries, more = _entries(folder, root)
        warnings += more
        if entries:
            found.append((folder, entries))
    return found, warnings


async def available_skills(roots: list[Path], trusted: bool,
                           user_dir: Optional[Path] = None) -> tuple[list[Skill], list[str]]:
    """Every skill: the workspace's (its first folder's `.agents/skills`, then `.claude/skills`, when `trusted`),
    then the user's whose names they do not take; and the warnings about skipped skills."""
    found: dict[str, Skill] = {}
    folders, warnings = await asyncio.to_thread(_project_folders, roots[0]) if roots else ([], [])
    for _, entries in folders if trusted else []:
        skills, more = await asyncio.to_thread(_read, entries, "project")
        warnings += more
        found.update((s.name, s) for s in skills if s.name not in found)
    user, more = await asyncio.to_thread(read_skills, user_dir or user_skills_dir(), "user")
    project = sorted(found.values(), key=lambda s: s.name)
    return [*project, *(s for s in user if s.name not in found)], warnings + more
