"""Skills (PROTOCOL §10): SKILL.md parsed, discovery in the workspace (once trusted, links out refused) and the
user's folder, the listing in the system prompt (bounded), the `skill` tool, read_file in a user skill's folder, and
`/name` through the chat assembly."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import pytest

from agent_lsp.config import Layers
from agent_lsp.config.in_force import SettingsInForce, TrustedPart
from agent_lsp.config.user_file import UserSettingsFile
from agent_lsp.core.prompt import MAX_SKILL_LISTING, MAX_SKILL_NAMES, SKILLS_INTRO, skill_listing
from agent_lsp.core.tool import ToolContext, ToolError
from agent_lsp.sessions.assembly import BadInput, ChatAssembly, ChatInputs
from agent_lsp.sessions.skills import available_skills, skills_to_trust, parse_skill, read_skills, user_skills_dir
from agent_lsp.tools.read_file import ReadFile, ReadFileInput
from agent_lsp.tools.skill import Skill, SkillInput, SkillTool
from tests.fakes.editor import FakeEditor


def skill_md(name: Optional[str], description: Optional[str], body: str = "Do the thing.", extra: str = "") -> str:
    lines = ["---", *([f"name: {name}"] if name is not None else []),
             *([f"description: {description}"] if description is not None else []), *([extra] if extra else []),
             "---", body, ""]
    return "\n".join(lines)


def write_skill(folder: Path, name: str, text: Optional[str] = None, **files: str) -> Path:
    skill = folder / name
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(text if text is not None else skill_md(name, f"The {name} skill."))
    for relative, content in files.items():
        (skill / relative).parent.mkdir(parents=True, exist_ok=True)
        (skill / relative).write_text(content)
    return skill


def test_a_skill_md_with_its_fields():
    skill = parse_skill(skill_md("review", "Review a change.\n  Twice.", "# Review\n\nRead $ARGUMENTS.\n",
                                 "allowed-tools: Read, Grep"
                                 ).encode(), Path("/s/review"), "user")
    assert skill == Skill(name="review", description="Review a change. Twice.", source="user",
                          folder=Path("/s/review"), body="# Review\n\nRead $ARGUMENTS.", allowed_tools=("Read", "Grep"))
    spaced = parse_skill(skill_md("a", "b", extra="allowed-tools: Read Bash(git:*)").encode(), Path("/a"), "user")
    assert spaced.allowed_tools == ("Read", "Bash(git:*)")
    listed = parse_skill(skill_md("a", "b", extra="allowed-tools:\n  - Read\n  - Grep").encode(), Path("/a"), "user")
    assert listed.allowed_tools == ("Read", "Grep")


def test_a_description_is_bounded_to_1024_characters():
    skill = parse_skill(skill_md("long", "word " * 400).encode(), Path("/s/long"), "user")
    assert len(skill.description) == 1024 and skill.description.endswith("…")


@pytest.mark.parametrize("text, problem", [
    (skill_md(None, "no name"), "its front matter has no `name`"),
    (skill_md("x", None), "its front matter has no `description`"),
    (skill_md("x", "''"), "its front matter has no `description`"),
    ("Just Markdown.\n", "it has no front matter (a `---` line, then `name:` and `description:`)"),
    (skill_md("../up", "d"), "its name '../up' is not a skill name (letters, digits, single `-`, `_` or `.`; at most "
                             "64 characters)"),
    (skill_md("a/b", "d"), "its name 'a/b' is not a skill name (letters, digits, single `-`, `_` or `.`; at most 64 "
                           "characters)"),
    ("---\nname: x\ndescription: [never closed\n---\n", "line 3: `[` is not closed"),
])
def test_a_skill_md_that_is_not_a_skill(text, problem):
    with pytest.raises(ValueError) as e:
        parse_skill(text.encode(), Path("/s/x"), "project")
    assert str(e.value) == problem


def test_a_folder_of_skills_skips_what_is_not_a_skill_with_one_warning_each(tmp_path):
    folder = tmp_path / "skills"
    write_skill(folder, "good")
    write_skill(folder, "broken", "---\nname: broken\ndescription: 'never closed\n---\nBody.\n")
    write_skill(folder, "nameless", skill_md(None, "No name."))
    write_skill(folder, "twin", skill_md("good", "The same name."))
    (folder / "latin1").mkdir()
    (folder / "latin1" / "SKILL.md").write_bytes("---\nname: café\n".encode("latin-1"))
    (folder / "no-skill-md").mkdir()
    (folder / "loose.md").write_text("not a skill folder")
    skills, warnings = read_skills(folder, "user")
    assert [s.name for s in skills] == ["good"]
    assert skills[0].folder == (folder / "good").resolve()
    assert warnings == [
        f"agent-lsp: the skill {folder / 'broken' / 'SKILL.md'} was skipped: line 3: a single-quoted value is not "
        "closed",
        f"agent-lsp: the skill {folder / 'latin1' / 'SKILL.md'} was skipped: it is not valid UTF-8 (invalid "
        "continuation byte at byte 13)",
        f"agent-lsp: the skill {folder / 'nameless' / 'SKILL.md'} was skipped: its front matter has no `name`",
        f"agent-lsp: the skill {folder / 'twin' / 'SKILL.md'} was skipped: the skill good is already in "
        f"{(folder / 'good').resolve()}",
    ]


def test_the_user_folder_follows_xdg_config_home(tmp_path):
    assert user_skills_dir({"XDG_CONFIG_HOME": str(tmp_path)}) == tmp_path / "agent-lsp" / "skills"


async def test_workspace_skills_only_once_trusted_and_winning_over_the_user_s(tmp_path):
    root, user = (tmp_path / "ws").resolve(), tmp_path / "user"
    write_skill(root / ".agents" / "skills", "deploy")
    write_skill(root / ".claude" / "skills", "lint", skill_md("lint", "The project's lint."))
    write_skill(user, "lint", skill_md("lint", "The user's lint."))
    write_skill(user, "notes")
    skills, warnings = await available_skills([root], False, user)
    assert [(s.name, s.source) for s in skills] == [("lint", "user"), ("notes", "user")] and warnings == []
    skills, _ = await available_skills([root], True, user)
    assert [(s.name, s.source, s.description) for s in skills] == [
        ("deploy", "project", "The deploy skill."), ("lint", "project", "The project's lint."),
        ("notes", "user", "The notes skill.")]
    assert skills_to_trust(root) == [TrustedPart(
        "skills", f"{root / '.agents' / 'skills'} holds skills (deploy) whose instructions the agent would follow; "
        f"{root / '.claude' / 'skills'} holds skills (lint) whose instructions the agent would follow",
        skills_to_trust(root)[0].content)]


async def test_a_skill_folder_linked_out_of_the_workspace_is_not_followed(tmp_path):
    root, outside = (tmp_path / "ws").resolve(), (tmp_path / "elsewhere").resolve()
    write_skill(outside, "secret")
    write_skill(outside / "all", "stolen")
    skills_dir = root / ".agents" / "skills"
    write_skill(skills_dir, "fine")
    os.symlink(outside / "secret", skills_dir / "secret")
    write_skill(root / "shared", "inside")
    os.symlink(root / "shared" / "inside", skills_dir / "inside")  # a link that stays inside is fine
    (root / ".claude").mkdir()
    os.symlink(outside / "all", root / ".claude" / "skills")
    skills, warnings = await available_skills([root], True, tmp_path / "no-user")
    assert [s.name for s in skills] == ["fine", "inside"]
    assert warnings == [
        f"agent-lsp: the skill {skills_dir / 'secret' / 'SKILL.md'} was skipped: it is a link out of the workspace, "
        "which is not followed",
        f"agent-lsp: the skills in {root / '.claude' / 'skills'} were skipped: it is a link out of the workspace, "
        "which is not followed"]
    assert "(fine, inside)" in skills_to_trust(root)[0].asks


def test_500_skills_keep_the_listing_bounded():
    skills = [(f"skill-{n:03}", f"Does task number {n} " + "in some detail " * 5) for n in range(500)]
    lines = skill_listing(skills)
    described, named = lines[:-1], lines[-1]
    assert sum(len(line) + 1 for line in described) <= MAX_SKILL_LISTING
    assert described[0] == "- skill-000: " + skills[0][1]
    rest = 500 - len(described)
    assert named.startswith(f"- {rest} more skills, named only (`skill` names them all): skill-{len(described):03}, ")
    assert len(named) < MAX_SKILL_NAMES + 200 and named.endswith(" more")
    assert sum(len(line) for line in lines) < MAX_SKILL_LISTING + MAX_SKILL_NAMES + 200
    assert skill_listing(skills[:3]) == [f"- {n}: {d}" for n, d in skills[:3]]


async def test_the_skill_tool_answers_the_body_and_the_other_files(tmp_path):
    root = (tmp_path / "ws").resolve()
    project = write_skill(root / ".agents" / "skills", "deploy", skill_md("deploy", "Deploy.", "Run scripts/go.sh."),
                          **{"scripts/go.sh": "echo go\n", "REFERENCE.md": "ref\n"})
    user = write_skill(tmp_path / "user", "notes", skill_md("notes", "Notes.", "Read template.md first."),
                       **{"template.md": "# Notes\n"})
    os.symlink("/etc/hostname", user / "outside-link")  # a file the folder links to elsewhere: not listed
    skills = [Skill("deploy", "Deploy.", "project", project, "Run scripts/go.sh."),
              Skill("notes", "Notes.", "user", user.resolve(), "Read template.md first.", ("Read",))]
    tool = SkillTool(skills)
    ctx = ToolContext(editor=FakeEditor(root=root), readable=(user.resolve(),))
    assert tool.kind == "read" and len(tool.description) <= 120
    out = await tool.run(ctx, SkillInput(name="deploy"))
    assert out.text == ("Skill deploy (project skill, folder .agents/skills/deploy):\n\nRun scripts/go.sh.\n\n"
                        "Other files of this skill (read them with read_file):\n"
                        ".agents/skills/deploy/REFERENCE.md\n.agents/skills/deploy/scripts/go.sh")
    out = await tool.run(ctx, SkillInput(name="notes"))
    template = user.resolve() / "template.md"
    assert out.text == (f"Skill notes (user skill, folder {user.resolve()}):\n\nRead template.md first.\n\n"
                        "(allowed-tools: Read)\n\n"
                        f"Other files of this skill (read them with read_file):\n{template}")
    read = await ReadFile().run(ctx, ReadFileInput(path=str(template)))  # outside the workspace, yet readable
    assert read.text == f"{template} (1 lines)\n     1\t# Notes"
    with pytest.raises(ToolError) as refused:
        await ReadFile().run(ctx, ReadFileInput(path=str(tmp_path / "user")))  # the folder above: refused
    assert "is outside the workspace folders" in str(refused.value)
    with pytest.raises(ToolError) as refused:
        await ReadFile().run(ToolContext(editor=FakeEditor(root=root)), ReadFileInput(path=str(template)))
    assert "is outside the workspace folders" in str(refused.value)  # only a chat told of the skill reads it


@pytest.mark.parametrize("name, message", [
    ("nosuch", "'nosuch' is not a skill. Known skills: deploy, notes."),
    ("../deploy", "'../deploy' is not a skill name. Known skills: deploy, notes."),
    ("deploy/../../etc", "'deploy/../../etc' is not a skill name. Known skills: deploy, notes."),
    ("", "'' is not a skill. Known skills: deploy, notes."),
])
async def test_an_unknown_or_malformed_name_is_an_error_listing_the_known_ones(tmp_path, name, message):
    tool = SkillTool([Skill("deploy", "d", "project", tmp_path, "b"), Skill("notes", "n", "user", tmp_path, "b")])
    with pytest.raises(ToolError) as e:
        await tool.run(ToolContext(editor=FakeEditor(root=tmp_path)), SkillInput(name=name))
    assert str(e.value) == message


def assembly_for(tmp_path: Path, user: Path) -> tuple[ChatAssembly, list[str]]:
    warnings: list[str] = []
    in_force = SettingsInForce(Layers(), warnings.extend, user_file=UserSettingsFile(tmp_path / "no-settings.json"))
    assembly = ChatAssembly(in_force, None)
    assembly.user_skills, assembly.user_commands = user, tmp_path / "no-commands"
    return assembly, warnings


async def test_every_chat_is_told_the_skills_and_offered_the_tool(tmp_path):
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    user = tmp_path / "user"
    write_skill(user, "notes", skill_md("notes", "Keep notes."))
    write_skill(user, "broken", "---\nname: [\n---\n")
    assembly, warnings = assembly_for(tmp_path, user)
    checked = await assembly.check(ChatInputs(message="hello", editor=FakeEditor(root=root), session_id="s"))
    request = await assembly.compose(checked)
    assert request.system.endswith(f"\n\n# Skills\n{SKILLS_INTRO}\n- notes: Keep notes.")
    assert "skill" in [t.name for t in request.tools] and request.message.text == "hello"
    assert request.ctx.readable == ((user / "notes").resolve(),)
    assert warnings == [f"agent-lsp: the skill {user / 'broken' / 'SKILL.md'} was skipped: line 2: `[` is not closed"]
    await assembly.compose(await assembly.check(ChatInputs(message="again", editor=FakeEditor(root=root),
                                                           session_id="s")))
    assert len(warnings) == 1  # warned once
    assert [t.name for t in await assembly.tools(request.settings, [root])].count("skill") == 1

    bare, _ = assembly_for(tmp_path, tmp_path / "none")
    request = await bare.compose(await bare.check(ChatInputs(message="hi", editor=FakeEditor(root=root),
                                                             session_id="s")))
    assert "# Skills" not in request.system and "skill" not in [t.name for t in request.tools]


async def test_slash_name_runs_a_skill_when_no_command_has_that_name(tmp_path):
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    user = tmp_path / "user"
    write_skill(user, "review", skill_md("review", "Review.", "Review $ARGUMENTS carefully."))
    write_skill(user, "plain", skill_md("plain", "Plain.", "Tidy the imports."))
    write_skill(user, "memory", skill_md("memory", "Shadowed by the builtin.", "never used"))
    assembly, _ = assembly_for(tmp_path, user)
    editor = FakeEditor(root=root)

    async def run(message: str):
        return await assembly.compose(await assembly.check(ChatInputs(message=message, editor=editor, session_id="s")))

    request = await run("/review app.py")
    assert request.message.text == "Review app.py carefully." and request.builtin is None
    assert request.message.context.endswith(
        f"The message is the skill review (its folder: {(user / 'review').resolve()}; `skill` lists its files).")
    request = await run("/plain now please")
    assert request.message.text == "Tidy the imports.\n\nARGUMENTS: now please"
    request = await run("/plain")
    assert request.message.text == "Tidy the imports."
    request = await run("/memory")
    assert request.builtin[0] == "memory" and "skill review" not in (request.message.context or "")
    with pytest.raises(BadInput) as e:
        await run("/nosuch")
    assert (e.value.field, str(e.value)) == ("message", "unknown command /nosuch (known: /compact, /memory, /plain, "
                                                        "/review)")
    names = [c.name for c in await assembly.invocable([root])]
    assert names == ["compact", "memory", "plain", "review"]
