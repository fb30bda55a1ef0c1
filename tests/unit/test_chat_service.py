"""The chat service driven by a front end that cannot ask, as a headless run is: plain inputs in, each update out
as it happens, one outcome; the session's preferences under the chat's own settings."""

from __future__ import annotations

import pytest

from agent_lsp.config import Layers
from agent_lsp.config.in_force import SettingsInForce
from agent_lsp.config.user_file import UserSettingsFile
from agent_lsp.core.events import TextDelta, ToolCall, ToolCallUpdate, TurnStart, Usage
from agent_lsp.core.ports import Allow, Deny
from agent_lsp.models.scripted import ScriptedModel
from agent_lsp.sessions.assembly import BadInput, ChatAssembly, ChatInputs
from agent_lsp.sessions.live import SessionBusy, Sessions
from agent_lsp.sessions.service import ChatFrontEnd, ChatService
from agent_lsp.sessions.store import Store
from tests.fakes.editor import FakeEditor

REFUSED = "run_command needs approval, and nobody can be asked in this run."


class CannotAsk(ChatFrontEnd):
    """Records what the service tells it; refuses what would be asked, unless the tool is allowed."""

    def __init__(self, allowed: frozenset[str] = frozenset()) -> None:
        self.allowed = allowed
        self.steps: list[str] = []
        self.updates: list = []

    async def reserved(self, session) -> None:
        self.session = session
        self.steps.append(f"reserved {session.id} busy={session.busy}")

    async def composed(self, request) -> None:
        self.steps.append("composed")

    def publish(self, update) -> None:
        self.updates.append(update)

    async def ask(self, request, emit):
        self.steps.append(f"asked {request.name}")
        return Allow() if request.name in self.allowed else Deny(REFUSED)


@pytest.fixture
def chat_service(tmp_path):
    model = ScriptedModel([])
    in_force = SettingsInForce(Layers(), lambda warnings: None, user_file=UserSettingsFile(tmp_path / "no-user-file.json"))
    assembly = ChatAssembly(in_force, None)
    service = ChatService(Sessions(Store(tmp_path / "sessions.db")), assembly, lambda settings: model)
    return service, model, FakeEditor(root=tmp_path.resolve())


def command(text: str) -> dict:
    return {"content": [{"type": "tool_use", "id": "t1", "name": "run_command", "input": {"command": text}}]}


async def test_a_chat_without_a_session_starts_one_and_publishes_each_update(chat_service):
    service, model, editor = chat_service
    model.script += [{"content": [{"type": "text", "text": "Hello."}]}]
    front = CannotAsk()
    outcome = await service.chat(ChatInputs(message="say  hello", editor=editor, session_id=""), front)
    session = service.sessions.get(outcome.session_id)
    assert front.steps == [f"reserved {session.id} busy=True", "composed"]
    assert [type(u) for u in front.updates] == [TurnStart, TextDelta, Usage]
    assert "".join(u.text for u in front.updates if isinstance(u, TextDelta)) == "Hello."
    assert (outcome.stop_reason, outcome.final_message, session.title, session.busy) == (
        "end_turn", "Hello.", "say hello", False)


async def test_a_call_that_would_ask_is_refused_by_the_front_end_and_the_chat_goes_on(chat_service):
    service, model, editor = chat_service
    model.script += [command("make"), {"content": [{"type": "text", "text": "It was refused."}]}]
    front = CannotAsk()
    outcome = await service.chat(ChatInputs(message="build", editor=editor, session_id=""), front)
    calls = [(u.status, u.error) for u in front.updates if isinstance(u, ToolCallUpdate)]
    assert calls == [("awaiting_confirmation", None), ("rejected", REFUSED)]
    assert front.steps[-1] == "asked run_command"
    assert (outcome.stop_reason, outcome.denied_tool_calls, outcome.final_message) == (
        "end_turn", 1, "It was refused.")
    assert "run_command" in [t.name for t in model.requests[0].tools]


async def test_the_sessions_preferences_apply_under_the_chats_own_settings(chat_service):
    service, model, editor = chat_service
    session = service.sessions.start("planning")
    session.preferences.permission_mode = "plan"
    model.script += [{"content": [{"type": "text", "text": "A plan."}]}] * 2
    await service.chat(ChatInputs(message="plan it", editor=editor, session_id=session.id), CannotAsk())
    assert "run_command" not in [t.name for t in model.requests[-1].tools]  # plan mode hides commands
    await service.chat(ChatInputs(message="now do it", editor=editor, session_id=session.id,
                                  chat_settings={"permission_mode": "default"}), CannotAsk())
    assert "run_command" in [t.name for t in model.requests[-1].tools]


async def test_a_chat_that_cannot_start_starts_no_session_and_a_busy_session_is_refused(chat_service):
    service, model, editor = chat_service
    with pytest.raises(BadInput) as bad:
        await service.chat(ChatInputs(message="  ", editor=editor, session_id=""), CannotAsk())
    assert bad.value.field == "message" and service.sessions.all() == []
    with pytest.raises(BadInput) as bad:  # known only once the folder's trust decided which commands there are
        await service.chat(ChatInputs(message="/nosuch", editor=editor, session_id=""), CannotAsk())
    assert bad.value.field == "message" and service.sessions.all() == []
    (editor.root / ".agent-lsp" / "commands").mkdir(parents=True)
    (editor.root / ".agent-lsp" / "commands" / "fix.md").write_text("Fix it.")
    questions: list[str] = []
    front = CannotAsk()

    async def ask_trust(question: str) -> None:
        questions.append(question)
        front.steps.append("asked trust")

    session = service.sessions.reserve(service.sessions.start())
    with pytest.raises(SessionBusy):
        await service.chat(ChatInputs(message="hi", editor=editor, session_id=session.id, ask_trust=ask_trust), front)
    assert front.steps == [] and session.busy and questions == []  # a busy session asks nothing
    service.sessions.release(session)
    model.script += [{"content": [{"type": "text", "text": "Hi."}]}]
    await service.chat(ChatInputs(message="hi", editor=editor, session_id=session.id, ask_trust=ask_trust), front)
    assert front.steps == [f"reserved {session.id} busy=True", "asked trust", "composed"]
    assert questions == [f"agent-lsp: {editor.root}/.agent-lsp/commands holds commands (/fix) whose prompts the agent "
                         "would follow. Trust this workspace's commands? Until you do, they are ignored."]
