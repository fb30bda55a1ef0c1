"""Skills and subfolder instructions through the real server (PROTOCOL §10): agent/skills (the project's once
trusted, a broken SKILL.md warned about once), every chat told the names and descriptions, the `skill` tool's result
and read_file in a user skill's folder, `/name`, a malformed name; a subfolder's AGENTS.md named in one read_file
result of a chat; over ACP the skills among the available commands."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.acp_client import RecordingClient
from tests.e2e.conftest import chat, sent, server_env, text, tool_use
from tests.e2e.test_acp_workflow import prompt, wire_updates
from tests.e2e.test_commands import BUILTINS
from tests.waiting import until


def user_config(tmp_path: Path) -> Path:
    """A config dir with the user's skills: `notes` (with a template file) and one with broken front matter."""
    config = tmp_path / "config"
    notes = config / "agent-lsp" / "skills" / "notes"
    notes.mkdir(parents=True)
    (notes / "SKILL.md").write_text("---\nname: notes\ndescription: Write release notes from the git log.\n---\n"
                                    "# Release notes\n\nFill template.md for $ARGUMENTS.\n")
    (notes / "template.md").write_text("## Changes\n")
    broken = config / "agent-lsp" / "skills" / "broken"
    broken.mkdir()
    (broken / "SKILL.md").write_text("---\nname: broken\ndescription: 'never closed\n---\nBody.\n")
    return config


def project_skill(workspace: Path) -> Path:
    folder = workspace / ".agents" / "skills" / "deploy"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: deploy\ndescription: Deploy the service to staging.\n"
                                     "allowed-tools: run_command\n---\nRun ./deploy.sh staging, then check the logs.\n")
    (folder / "deploy.sh").write_text("echo deploying\n")
    return folder


async def skills(client) -> list[dict]:
    return (await client.protocol.send_request_async("agent/skills", {}))["skills"]


SKILLS_INTRO = ("# Skills\nSkills are procedures for particular tasks. When a task matches a skill's description, "
                "call `skill` with its name first and follow what it says.")


async def test_agent_skills_lists_the_user_s_and_the_project_s_once_trusted(lsp, tmp_path):
    config = user_config(tmp_path)
    project = project_skill(lsp.workspace)
    client = await lsp.start(env=server_env(lsp.fake_api.base_url, XDG_CONFIG_HOME=str(config)))
    assert "skills" in client.initialize_result.capabilities.experimental["agent"]["features"]
    notes = {"name": "notes", "description": "Write release notes from the git log.", "source": "user"}
    assert await skills(client) == [notes]  # asked, dismissed
    (question,) = client.message_requests
    assert question.message == (f"agent-lsp: {project.parent} holds skills (deploy) whose instructions the agent would "
                                "follow. Trust this workspace's skills? Until you do, they are not listed or used.")
    assert [m.message for m in client.messages] == [
        f"agent-lsp: the skill {config / 'agent-lsp' / 'skills' / 'broken' / 'SKILL.md'} was skipped: line 3: a "
        "single-quoted value is not closed"]
    client.message_answer = "Trust"
    deploy = {"name": "deploy", "description": "Deploy the service to staging.", "source": "project"}
    assert await skills(client) == [deploy, notes]  # asked again, trusted
    assert await skills(client) == [deploy, notes]
    assert len(client.message_requests) == 2 and len(client.messages) == 1  # trusted once; warned once
    commands = (await client.protocol.send_request_async("agent/commands", {}))["commands"]
    assert commands == BUILTINS  # skills are not commands: clients list both


async def test_a_chat_is_told_the_skills_and_reads_one_through_the_tool(lsp, tmp_path):
    config = user_config(tmp_path)
    template = (config / "agent-lsp" / "skills" / "notes" / "template.md").resolve()
    lsp.fake_api.add(tool_use("skill", {"name": "notes"}, id="toolu_s"),
                     tool_use("read_file", {"path": str(template)}, id="toolu_r"),
                     tool_use("skill", {"name": "../notes"}, id="toolu_x"),
                     text("Done."))
    client = await lsp.start(env=server_env(lsp.fake_api.base_url, XDG_CONFIG_HOME=str(config)))
    result = await chat(client, "write the release notes")
    assert result["finalMessage"] == "Done."
    system = lsp.fake_api.requests[0]["system"][0]["text"]
    assert system.endswith(f"\n\n{SKILLS_INTRO}\n- notes: Write release notes from the git log.")
    assert "Fill template.md" not in system  # never the body
    assert "skill" in [t["name"] for t in lsp.fake_api.requests[0]["tools"]]
    answers = [sent(lsp.fake_api, n)[-1]["content"][0] for n in (1, 2, 3)]
    assert [(a["tool_use_id"], a.get("is_error", False)) for a in answers] == [
        ("toolu_s", False), ("toolu_r", False), ("toolu_x", True)]
    assert [a["content"] for a in answers] == [
        f"Skill notes (user skill, folder {template.parent}):\n\n# Release notes\n\nFill template.md for $ARGUMENTS.\n\n"
        f"Other files of this skill (read them with read_file):\n{template}",
        f"{template} (1 lines)\n     1\t## Changes",
        "'../notes' is not a skill name. Known skills: notes."]


async def test_slash_name_runs_a_skill_and_an_unknown_one_names_the_skills(lsp, tmp_path):
    config = user_config(tmp_path)
    lsp.fake_api.add(text("Notes written."))
    client = await lsp.start(env=server_env(lsp.fake_api.base_url, XDG_CONFIG_HOME=str(config)))
    result = await chat(client, "/notes v1.2")
    assert result["finalMessage"] == "Notes written."
    user = lsp.fake_api.requests[0]["messages"][0]["content"]
    assert user[-1]["text"] == "# Release notes\n\nFill template.md for v1.2."
    folder = (config / "agent-lsp" / "skills" / "notes").resolve()
    assert user[0]["text"].endswith(f"The message is the skill notes (its folder: {folder}; `skill` lists its files).")
    try:
        await chat(client, "/nosuch")
        raise AssertionError("an unknown name was accepted")
    except Exception as e:
        assert "message: unknown command /nosuch (known: /compact, /memory, /notes)" in str(e)
    assert len(lsp.fake_api.requests) == 1


async def test_a_subfolder_s_agents_md_is_named_in_one_read_file_result_of_a_chat(lsp):
    sub = lsp.workspace / "api"
    sub.mkdir()
    (sub / "AGENTS.md").write_text("Every handler returns JSON.\n")
    (sub / "views.py").write_text("def index():\n    return {}\n")
    lsp.fake_api.add(tool_use("read_file", {"path": "api/views.py"}, id="toolu_1"),
                     tool_use("read_file", {"path": "api/views.py"}, id="toolu_2"),
                     text("Read twice."),
                     tool_use("read_file", {"path": "api/views.py"}, id="toolu_3"),
                     text("Again."))
    client = await lsp.start()
    first = await chat(client, "look at the api")
    listing = "api/views.py (2 lines)\n     1\tdef index():\n     2\t    return {}"
    note = ("\n\nInstructions of api/AGENTS.md (they apply to the files under api/; given once in this chat):\n"
            "Every handler returns JSON.")
    results = [sent(lsp.fake_api, n)[-1]["content"][0] for n in (1, 2)]
    assert [r["content"] for r in results] == [listing + note, listing]
    await chat(client, "and again", sessionId=first["sessionId"])
    assert sent(lsp.fake_api, 4)[-1]["content"][0]["content"] == listing + note  # a new chat: once more


async def test_over_acp_the_skills_are_available_commands(agents, fake_api, workspace, tmp_path):
    config = user_config(tmp_path)
    project_skill(workspace)
    client = RecordingClient()
    agent = await agents(client, env={"XDG_CONFIG_HOME": str(config)})
    session_id = (await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
    await until(lambda: wire_updates(client, "available_commands_update"))
    (announced,) = wire_updates(client, "available_commands_update")
    assert [c["name"] for c in announced["availableCommands"]] == ["compact", "memory", "notes"]
    assert announced["availableCommands"][-1] == {"name": "notes",
                                                  "description": "Write release notes from the git log."}

    client.answers = ["trust"]  # the first prompt asks about the project's skills
    fake_api.add(text("Deployed."))
    assert (await prompt(agent, session_id, "/deploy")).stop_reason == "end_turn"
    (question, _), = client.permission_requests
    assert "holds skills (deploy)" in question.content[0].content.text
    names = [[c["name"] for c in u["availableCommands"]] for u in wire_updates(client, "available_commands_update")]
    assert names == [["compact", "memory", "notes"], ["compact", "memory", "deploy", "notes"]]
    assert fake_api.requests[-1]["messages"][0]["content"][-1]["text"] == (
        "Run ./deploy.sh staging, then check the logs.")
    assert fake_api.requests[-1]["system"][0]["text"].endswith(
        "- deploy: Deploy the service to staging.\n- notes: Write release notes from the git log.")


async def test_500_skills_are_all_listed_and_the_prompt_stays_bounded(lsp, tmp_path):
    config = tmp_path / "config"
    for n in range(500):
        folder = config / "agent-lsp" / "skills" / f"skill-{n:03}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\nname: skill-{n:03}\ndescription: Does task {n}. {'More words. ' * 20}"
                                         f"\n---\nBody {n}.\n")
    lsp.fake_api.add(text("Fine."))
    client = await lsp.start(env=server_env(lsp.fake_api.base_url, XDG_CONFIG_HOME=str(config)))
    listed = await skills(client)
    assert [s["name"] for s in listed] == [f"skill-{n:03}" for n in range(500)]
    assert (await chat(client, "hi"))["finalMessage"] == "Fine."
    system = lsp.fake_api.requests[0]["system"][0]["text"]
    listing = system[system.index(SKILLS_INTRO):]
    assert len(listing) < 12_000 + 4_000 + 400
    described = [line for line in listing.splitlines() if line.startswith("- skill-")]
    last = listing.splitlines()[-1]
    assert last.startswith(f"- {500 - len(described)} more skills, named only (`skill` names them all): "
                           f"skill-{len(described):03}, ") and last.endswith(" more")
    assert "Body 0." not in system
