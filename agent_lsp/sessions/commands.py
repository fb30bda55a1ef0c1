"""Slash commands (PROTOCOL §9): the builtins, the project's `.agent-lsp/commands/<name>.md` (once the user trusted
them) and the user's `<config dir>/agent-lsp/commands/<name>.md`. A command file is Markdown with an optional
front matter (`description`, `argument-hint`); its body is the prompt, `$ARGUMENTS` standing for what follows the
name. Files run nothing: a command only sends its prompt, through the chat's usual tools and permissions."""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Mapping, Optional

from agent_lsp.config.in_force import TrustedPart
from agent_lsp.config.user_file import config_dir

Source = Literal["builtin", "project", "user"]
PROJECT_DIR = Path(".agent-lsp") / "commands"
MAX_COMMAND_BYTES = 100_000
MAX_COMMANDS = 200
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_INVOCATION = re.compile(r"/([A-Za-z0-9][A-Za-z0-9_.-]*)(?:[ \t\r\n]+(.*))?", re.DOTALL)
_FIELD = re.compile(r"([A-Za-z][A-Za-z0-9_-]*)[ \t]*:[ \t]*(.*)")


@dataclass(frozen=True)
class Command:
    """One slash command; `body` is the prompt of a file's command (None for a builtin)."""

    name: str
    description: str
    source: Source
    argument_hint: Optional[str] = None
    body: Optional[str] = None


BUILTINS = [
    Command("compact", "Compact the conversation now: earlier turns are summarised, the full transcript is kept",
            "builtin", "[what the summary should keep]"),
    Command("memory", "Show the project memory (the facts every chat is told)", "builtin"),
]


def user_commands_dir(env: Mapping[str, str] = os.environ) -> Path:
    """$XDG_CONFIG_HOME/agent-lsp/commands, else ~/.config/agent-lsp/commands."""
    return config_dir(env) / "commands"


def invocation(message: str) -> Optional[tuple[str, str]]:
    """(name, arguments) when the message runs a command (`/name args`), else None ("/usr/bin is…" is text)."""
    found = _INVOCATION.fullmatch(message.strip())
    return (found.group(1), (found.group(2) or "").strip()) if found else None


def expand(command: Command, arguments: str) -> str:
    """A file command's prompt for these arguments (appended when the body has no `$ARGUMENTS`, as Claude Code)."""
    body = command.body or ""
    if "$ARGUMENTS" in body:
        return body.replace("$ARGUMENTS", arguments)
    return f"{body}\n\nARGUMENTS: {arguments}" if arguments else body


def parse_command(name: str, data: bytes, source: Source) -> Command:
    """The command a file holds; ValueError saying what is wrong with it."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"not valid UTF-8 ({e.reason} at byte {e.start})") from None
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    fields: dict[str, str] = {}
    if text.startswith("---\n") or text == "---":
        lines = text.split("\n")
        end = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), None)
        if end is None:
            raise ValueError("its front matter has no closing `---` line")
        for number, line in enumerate(lines[1:end], start=2):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            found = _FIELD.fullmatch(line.rstrip())
            if not found:
                raise ValueError(f"line {number} of its front matter is not `key: value`")
            value = found.group(2).strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1]
            fields[found.group(1).lower()] = value
        text = "\n".join(lines[end + 1:])
    body = text.strip()
    first_line = next((line.strip().lstrip("# ") for line in body.splitlines() if line.strip()), "")
    return Command(name=name, description=fields.get("description") or first_line[:100] or f"/{name}",
                   source=source, argument_hint=fields.get("argument-hint") or None, body=body)


def _files(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.glob("*.md") if p.is_file())[:MAX_COMMANDS]
    except OSError:
        return []


def read_commands(folder: Path, source: Source) -> tuple[list[Command], list[str]]:
    """The commands of a folder's `<name>.md` files; a file that cannot be read, is not UTF-8 or has broken
    front matter is skipped with a warning naming it."""
    found, warnings = [], []
    for path in _files(folder):
        name = path.stem
        try:
            if not _NAME.fullmatch(name):
                raise ValueError("its name is not a command name (letters, digits, `.`, `_`, `-`)")
            if any(b.name == name for b in BUILTINS):
                raise ValueError(f"/{name} is a builtin command")
            if path.stat().st_size > MAX_COMMAND_BYTES:
                raise ValueError(f"it is over {MAX_COMMAND_BYTES} bytes")
            found.append(parse_command(name, path.read_bytes(), source))
        except (OSError, ValueError) as e:
            warnings.append(f"agent-lsp: the command file {path} was skipped: {e}")
    return found, warnings


def _digest(folder: Path) -> str:
    """What a trust answer about a folder of commands is about: every file's name and content."""
    h = hashlib.sha256()
    for path in _files(folder):
        try:
            h.update(path.name.encode() + b"\0" + path.read_bytes()[:MAX_COMMAND_BYTES] + b"\0")
        except OSError:
            continue
    return h.hexdigest()


def commands_to_trust(root: Path) -> list[TrustedPart]:
    """The project's command files as the folder's trust question names them ([] when there are none)."""
    folder = root / PROJECT_DIR
    names = [p.stem for p in _files(folder)]
    if not names:
        return []
    shown = ", ".join(f"/{n}" for n in names[:10]) + (", …" if len(names) > 10 else "")
    return [TrustedPart("commands", f"{folder} holds commands ({shown}) whose prompts the agent would follow",
                        _digest(folder))]


async def available_commands(roots: list[Path], trusted: bool,
                             user_dir: Optional[Path] = None) -> tuple[list[Command], list[str]]:
    """Every command, builtins first, then the project's (when `trusted`; they win over the user's of the same
    name), then the user's; and the warnings about skipped files."""
    warnings: list[str] = []
    project: list[Command] = []
    if roots and trusted:
        project, warnings = await asyncio.to_thread(read_commands, roots[0] / PROJECT_DIR, "project")
    user, more = await asyncio.to_thread(read_commands, user_dir or user_commands_dir(), "user")
    taken = {c.name for c in project}
    return [*BUILTINS, *project, *(c for c in user if c.name not in taken)], warnings + more
