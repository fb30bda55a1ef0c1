"""`agent-lsp run [PROMPT]`: one chat without an editor, through the chat service every front end uses, on the same
settings, sessions (the same store), tools, hooks and MCP servers as an editor's chat; the workspace is --cwd on disk.

SIGINT and SIGTERM abort the chat as agent/abort does (its history kept valid and saved, its commands killed), and
the run exits 130. Nobody can be asked anything: a workspace whose settings would need the user's trust is used
without them (one line on stderr), and tool calls that would ask are answered by headless/chat.py.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from typing import Any, Callable, Optional

from agent_lsp.config import Layers, clean, environment_layer
from agent_lsp.config.in_force import SettingsInForce
from agent_lsp.headless.chat import HeadlessChat
from agent_lsp.headless.options import RunOptions, parse, read_prompt
from agent_lsp.headless.output import ANSWERED, Output
from agent_lsp.models import preload
from agent_lsp.models.resolver import build_model, resolve
from agent_lsp.sessions.assembly import BadInput, ChatInputs
from agent_lsp.sessions.disk_editor import DiskEditor
from agent_lsp.sessions.live import SessionBusy, UnknownSession
from agent_lsp.sessions.results import ChatOutcome
from agent_lsp.sessions.service import ChatService, open_service

INTERRUPTED = 130
"""The exit status after SIGINT or SIGTERM (128 + SIGINT, as shells report it)."""


class Interrupted(Exception):
    """SIGTERM arrived before the chat started (SIGINT is a KeyboardInterrupt)."""


def _interrupt(signum: int, frame: Any) -> None:
    raise Interrupted


def main(argv: list[str]) -> int:
    """Run one chat as the command line says; the exit status."""
    signal.signal(signal.SIGTERM, _interrupt)  # until the chat's own handlers take over: nothing to save yet
    try:
        options = parse(argv)
        if options.prompt is None and sys.stdin is not None and sys.stdin.isatty():
            say("reading the prompt from standard input; end it with Ctrl-D")
        try:
            prompt = read_prompt(options.prompt, sys.stdin.buffer if sys.stdin is not None else None)
        except ValueError as e:
            say(str(e))
            return 2
        logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                            format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        if hasattr(sys.stdout, "reconfigure"):
            sys.stdout.reconfigure(encoding="utf-8", errors="replace")
        return asyncio.run(run(options, prompt))
    except (KeyboardInterrupt, Interrupted):
        say("stopped before the chat started")
        return INTERRUPTED


def say(message: str) -> None:
    """One line for the user on stderr."""
    print(f"agent-lsp run: {message}", file=sys.stderr, flush=True)


async def run(options: RunOptions, prompt: str) -> int:
    """The chat, from its start to its saved end; the exit status."""
    service, editor, chat_settings = chat_service(options)
    output = Output(options.output_format, sys.stdout)
    front = HeadlessChat(output, options.allowed_tools)
    inputs = ChatInputs(message=prompt, editor=editor, session_id=options.session or "", chat_settings=chat_settings,
                        ask_trust=untrusted)
    chat = asyncio.ensure_future(service.chat(inputs, front))
    signalled: list[str] = []

    def stop(signum: signal.Signals) -> None:
        signalled.append(signum.name)
        if front.session is None or not service.abort(front.session.id):
            chat.cancel()  # not running yet (or over): nothing of it to keep

    loop = asyncio.get_running_loop()
    handled = _on_signals(loop, stop)
    try:
        outcome = await chat
        return report(outcome, output, signalled[0] if signalled else None)
    except asyncio.CancelledError:
        say(f"stopped by {signalled[0] if signalled else 'a signal'} before the chat started")
        return INTERRUPTED
    except BadInput as e:
        say(f"{'PROMPT' if e.field == 'message' else e.field}: {e}")
        return 2
    except UnknownSession:
        say(f"--session {options.session}: no session has this id in {options.data_dir}")
        return 2
    except SessionBusy as e:
        say(str(e))
        return 1
    finally:
        await service.close()  # MCP and language servers stopped; a signal meanwhile has no chat to stop
        for signum in handled:
            loop.remove_signal_handler(signum)


def _on_signals(loop: asyncio.AbstractEventLoop, stop: Callable[[signal.Signals], None]) -> list[signal.Signals]:
    """SIGINT and SIGTERM call `stop`; the signals handled. None on Windows, whose event loops take no signal
    handlers: Ctrl+C there ends the run with a KeyboardInterrupt instead of stopping the chat as agent/abort does."""
    handled = []
    for signum in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(signum, stop, signum)
        except NotImplementedError:
            break
        handled.append(signum)
    return handled


def chat_service(options: RunOptions) -> tuple[ChatService, DiskEditor, dict[str, Any]]:
    """The chat service on an editor's settings (the environment's, the user's file, the workspace's once trusted)
    and store, the files of --cwd on disk as the editor, and the chat's own settings from the options."""
    environment, warnings = clean(environment_layer(), "the environment")
    warn(warnings)
    in_force = SettingsInForce(Layers(environment=environment), warn, options.data_dir)
    chat_settings = {"permission_mode": options.permission_mode, "max_turns": options.max_turns,
                     "model": options.model}
    editor = DiskEditor([options.cwd])
    service = open_service(in_force, options.data_dir, build_model, lambda: _language_servers(editor))
    # the model's SDK imported while the chat is composed
    preload.load(resolve(in_force.current(editor.roots, chat_settings)).sdk)
    return service, editor, chat_settings


def report(outcome: ChatOutcome, output: Output, signalled: Optional[str]) -> int:
    """The chat's result on stdout, what went wrong on stderr; the exit status."""
    status = INTERRUPTED if signalled else 0 if outcome.stop_reason in ANSWERED else 1
    output.result(outcome, status != 0)
    if signalled:
        say(f"stopped by {signalled}; session {outcome.session_id} is saved (continue it with --session "
            f"{outcome.session_id})")
    elif outcome.error is not None:
        say(f"the chat ended in an error ({outcome.error.type}): {outcome.error.message}")
    elif status:
        say(f"the chat ended without an answer ({outcome.stop_reason})")
    return status


def warn(messages: list[str]) -> None:
    """Settings warnings, each a line on stderr."""
    for message in messages:
        print(message, file=sys.stderr, flush=True)


async def untrusted(question: str) -> Optional[bool]:
    """A workspace folder whose own files need the user's trust: nobody can be asked, so they stay off (one line)."""
    say("not trusted, so ignored (nobody can be asked here; trust the workspace once in an editor): "
        + " ".join(question.split()))
    return None


def _language_servers(editor: DiskEditor) -> Any:
    """agent-lsp's own language servers (the `languageServers` setting), on the files as the disk has them."""
    from agent_lsp.sidecar import SidecarPool

    return SidecarPool(lambda: editor, lambda message: warn([message]))
