"""Slash commands over LSP (PROTOCOL §9): agent/commands, `/name` messages, trust for the project's command files,
broken files skipped with a warning, `/compact` and `/memory`."""

from __future__ import annotations

from pytest_lsp import LanguageClient

from tests.e2e.conftest import chat, server_env, text, updates_of

BUILTINS = [
    {"name": "compact", "description": "Compact the conversation now: earlier turns are summarised, the full "
                                       "transcript is kept", "argumentHint": "[what the summary should keep]",
     "source": "builtin"},
    {"name": "memory", "description": "Show the project memory (the facts every chat is told)", "source": "builtin"},
]


def user_commands(tmp_path) -> dict[str, str]:
    """A config dir with the user's commands: one good, one not UTF-8, one with broken front matter."""
    config = tmp_path / "config"
    folder = config / "agent-lsp" / "commands"
    folder.mkdir(parents=True)
    (folder / "review.md").write_text("---\ndescription: Review a file\nargument-hint: <path>\n---\n"
                                      "Review $ARGUMENTS for bugs. Be brief.\n")
    (folder / "latin1.md").write_bytes("Café".encode("latin-1"))
    (folder / "broken.md").write_text("---\ndescription: never closed\nRead everything.\n")
    return server_env(None, XDG_CONFIG_HOME=str(config))


async def commands(client: LanguageClient) -> list[dict]:
    return (await client.protocol.send_request_async("agent/commands", {}))["commands"]


async def test_user_commands_are_listed_and_run_and_broken_files_are_skipped_with_a_warning(lsp, tmp_path):
    env = {**user_commands(tmp_path), "ANTHROPIC_BASE_URL": lsp.fake_api.base_url}
    client = await lsp.start(env=env)
    assert await commands(client) == [*BUILTINS, {"name": "review", "description": "Review a file",
                                                  "argumentHint": "<path>", "source": "user"}]
    folder = tmp_path / "config" / "agent-lsp" / "commands"
    warnings = sorted(m.message for m in client.messages)
    assert warnings == [
        f"agent-lsp: the command file {folder / 'broken.md'} was skipped: its front matter has no closing `---` line",
        f"agent-lsp: the command file {folder / 'latin1.md'} was skipped: not valid UTF-8 (unexpected end of data "
        "at byte 3)"]
    await commands(client)
    assert len(client.messages) == 2  # warned once

    lsp.fake_api.add(text("Looks fine."))
    result = await chat(client, "/review app.py")
    assert result["finalMessage"] == "Looks fine."
    assert lsp.fake_api.requests[-1]["messages"][0]["content"][-1]["text"] == "Review app.py for bugs. Be brief."
    sessions = (await client.protocol.send_request_async("agent/sessions", {}))["sessions"]
    assert sessions[0]["title"] == "/review app.py"


async def test_an_unknown_command_is_invalid_params_naming_it_and_a_path_is_just_text(lsp):
    client = await lsp.start()
    try:
        await chat(client, "/nosuch do things")
        raise AssertionError("an unknown command was accepted")
    except Exception as e:
        assert "-32602" in str(e) or getattr(e, "code", None) == -32602, e
        assert "message: unknown command /nosuch (known: /compact, /memory)" in str(e)
    assert lsp.fake_api.requests == []
    lsp.fake_api.add(text("It is a directory."))
    assert (await chat(client, "/usr/bin is what?"))["finalMessage"] == "It is a directory."


async def test_project_commands_only_once_trusted(lsp):
    folder = lsp.workspace / ".agent-lsp" / "commands"
    folder.mkdir(parents=True)
    (folder / "fix.md").write_text("Fix the failing test. $ARGUMENTS\n")
    client = await lsp.start()
    assert [c["name"] for c in await commands(client)] == ["compact", "memory"]  # asked, dismissed
    (question,) = client.message_requests
    assert question.message.startswith(f"agent-lsp: {folder} holds commands (/fix) whose prompts")
    assert [a.title for a in question.actions] == ["Trust", "Don't trust"]
    try:
        await chat(client, "/fix now")  # asked again, dismissed again: unknown
        raise AssertionError("an untrusted command ran")
    except Exception as e:
        assert "unknown command /fix" in str(e)
    assert len(client.message_requests) == 2 and lsp.fake_api.requests == []

    client.message_answer = "Trust"
    lsp.fake_api.add(text("Fixed."))
    assert (await chat(client, "/fix now"))["finalMessage"] == "Fixed."
    assert lsp.fake_api.requests[-1]["messages"][0]["content"][-1]["text"] == "Fix the failing test. now"
    assert await commands(client) == [*BUILTINS, {"name": "fix", "description": "Fix the failing test. $ARGUMENTS",
                                                  "source": "project"}]
    assert len(client.message_requests) == 3  # trusted once for this content

    (folder / "fix.md").write_text("Delete everything.\n")  # changed: asked again
    client.message_answer = "Don't trust"
    assert [c["name"] for c in await commands(client)] == ["compact", "memory"]
    assert len(client.message_requests) == 4
    assert [c["name"] for c in await commands(client)] == ["compact", "memory"]
    assert len(client.message_requests) == 4  # the refusal holds for this content


async def test_compact_summarises_now_and_memory_shows_the_facts(lsp):
    (lsp.workspace / "AGENTS.md").write_text("# Notes\n\n## Memory\n\n- Use tabs.\n")
    lsp.fake_api.add(text("Hello."), text("The user said hi; nothing else."), text("Again."))
    client = await lsp.start()
    first = await chat(client, "hi")
    session_id = first["sessionId"]
    result = await chat(client, "/compact keep the greeting", sessionId=session_id)
    assert result["stopReason"] == "end_turn"
    assert result["finalMessage"] == ("Compacted the conversation: 2 earlier messages were summarised; the next chats "
                                      "start from the summary, and the full transcript is kept.")
    summary_request = lsp.fake_api.requests[1]
    assert not summary_request.get("tools")
    assert summary_request["system"][0]["text"].endswith("The user asks: keep the greeting")
    assert "USER: hi" in summary_request["messages"][0]["content"][-1]["text"]
    assert result["metadata"]["usage"]["inputTokens"] == 10
    await chat(client, "and now?", sessionId=session_id)
    sent = lsp.fake_api.requests[2]["messages"]
    assert len(sent) == 1 and sent[0]["content"][0]["text"].startswith(
        "<summary of the earlier conversation>\nThe user said hi; nothing else.\n</summary>")
    assert sent[0]["content"][-1]["text"] == "and now?"
    # the transcript keeps every turn; /compact itself is no turn of it
    history = await client.protocol.send_request_async("agent/history", {"sessionId": session_id})
    assert [m["content"] for m in history["messages"]] == ["hi", "Hello.", "and now?", "Again."]

    shown = await chat(client, "/memory", sessionId=session_id)
    assert shown["finalMessage"] == f"Project memory ({lsp.workspace / 'AGENTS.md'}):\n- Use tabs."
    assert len(lsp.fake_api.requests) == 3  # no model call
    texts = [u["text"] for u in updates_of(client, session_id) if u["kind"] == "text_delta"]
    assert texts[-1] == shown["finalMessage"]
