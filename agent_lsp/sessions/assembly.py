"""One chat, composed once for every front end: the settings in force, the system prompt (environment, project
instructions, memory, skills), the tools (built-in with the workflow's `todo_write` and `task`, web_fetch, `skill`,
memory, MCP, language, `finish`), the slash commands (and skills run as `/name`), the subfolders' instructions, the
hooks, `secretEnv` and the sandbox of its commands (PROTOCOL §9 "Settings and one chat for every front end", §10).

A front end parses its wire into `ChatInputs` (plain values) and hands over its ports and its substitutions (ACP's
file tools through the client, its terminal); what a chat is told and may use is decided here, so a new tool or
setting reaches LSP and ACP alike.
"""

from __future__ import annotations

import asyncio
import platform
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Protocol

from agent_lsp import tools
from agent_lsp.config import Settings
from agent_lsp.config.in_force import AskTrust, Folder, SettingsInForce, TrustedPart, never_asked
from agent_lsp.core.messages import ImagePart, UserMessage
from agent_lsp.core.paths import display, real
from agent_lsp.core.ports import Editor, LanguageFeatures
from agent_lsp.core.prompt import (Environment, SubfolderInstructions, editor_context, project_instructions,
                                   system_prompt)
from agent_lsp.core.tool import Tool, ToolContext
from agent_lsp.mcp.servers import McpServers
from agent_lsp.processes import Sandbox, dying_with_us, open_sandbox
from agent_lsp.sessions.images import BadImage, RawImage, check_images
from agent_lsp.sessions.combined_language import combined
from agent_lsp.sessions.commands import Command, available_commands, commands_to_trust, expand, invocation
from agent_lsp.sessions.mentions import BadMention, Mention, expand_mentions
from agent_lsp.sessions.chat_run import ChatRequest
from agent_lsp.sessions.shell_hooks import ShellHooks
from agent_lsp.sessions.skills import available_skills, skills_to_trust
from agent_lsp.tools.forget import Forget
from agent_lsp.tools.memory import MemoryFile, memory_file, read_memory
from agent_lsp.tools.remember import Remember
from agent_lsp.tools.run_command import RunCommand
from agent_lsp.tools.skill import Skill, SkillTool, readable_folders
from agent_lsp.tools.web_fetch import FetchPolicy, WebFetch

MAX_LISTED_BUFFERS = 20
Warn = Callable[[list[str]], None]
Substitute = Callable[[Tool], Tool]


class LanguageServers(Protocol):
    """Language servers agent-lsp runs itself for the `languageServers` setting (sidecar/ SidecarPool)."""

    async def get(self, configs: Mapping[str, Any], roots: list[Path],
                  timeout: float) -> Optional[LanguageFeatures]: ...

    async def close(self) -> None: ...

    def disk_changed(self, paths: Optional[list[Path]] = None) -> None: ...


class BadInput(ValueError):
    """A chat that cannot start: `field` names the parameter (the front end answers its invalid-params error)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass
class ChatInputs:
    """One chat as a front end parsed it from its wire: plain values and the front end's ports."""

    message: str
    editor: Editor
    session_id: str
    chat_settings: dict[str, Any] = field(default_factory=dict)
    """The chat's own parameters, already valid (permission_mode, max_turns, model)."""
    mentions: list[Mention] = field(default_factory=list)
    attached: Optional[str] = None
    """Context the front end rendered itself (ACP's embedded resources)."""
    active_path: Optional[Path] = None
    active_label: Optional[str] = None
    """The active document's URI when it has no path (an untitled buffer)."""
    selection: Optional[tuple[int, int]] = None
    """The selected lines of the active document, 0-based, first and last."""
    output_schema: Optional[dict[str, Any]] = None
    substitute: Substitute = lambda tool: tool
    """The front end's own way to some tools (ACP: files through the client, commands in its terminal)."""
    language: Optional[LanguageFeatures] = None
    """The editor's language intelligence, when the front end has it."""
    ask_trust: AskTrust = never_asked
    images: list[RawImage] = field(default_factory=list)
    """Images sent with the message, unchecked."""


@dataclass
class CheckedChat:
    """A chat whose inputs passed the checks: its `finish` tool, its expanded mentions and its images."""

    inputs: ChatInputs
    finish: list[Tool]
    mentioned: Optional[str]
    images: list[ImagePart] = field(default_factory=list)


def parts_to_trust(root: Path) -> list[TrustedPart]:
    """What a workspace folder's trust question covers besides its settings files: its commands and skills."""
    return [*commands_to_trust(root), *skills_to_trust(root)]


class ChatAssembly:
    """What every chat of one front end's connection shares (the settings in force with their trust answers, MCP
    servers), and the one place that composes a chat from them."""

    def __init__(self, in_force: SettingsInForce, data_dir: Optional[Path],
                 language_servers: Optional[Callable[[], LanguageServers]] = None) -> None:
        self.in_force = in_force
        self._make_language_servers = language_servers
        """Makes the front end's sidecar, on the first chat whose settings name language servers."""
        self._language_servers: Optional[LanguageServers] = None
        self.data_dir = data_dir
        self.warn = in_force.warn
        self.mcp = McpServers(lambda message: self.warn([message]), dying_with_us)
        self.user_commands: Optional[Path] = None
        """Where the user's command files are (None: the config dir's agent-lsp/commands)."""
        self.user_skills: Optional[Path] = None
        """Where the user's skills are (None: the config dir's agent-lsp/skills)."""
        self._warned: set[str] = set()

    async def folder(self, roots: list[Path], ask_trust: AskTrust = never_asked) -> Folder:
        """The first workspace folder decided: its one trust question (settings files, commands, skills) asked
        with `ask_trust` when the kept answer does not cover what it holds now."""
        return await self.in_force.folder(roots, ask_trust, parts_to_trust)

    async def settings(self, roots: list[Path], ask_trust: AskTrust = never_asked,
                       chat: Optional[dict[str, Any]] = None) -> Settings:
        """The settings in force: every layer, the workspace's own files included (their gated keys once trusted)."""
        return self.in_force.resolve(await self.folder(roots, ask_trust), chat)

    async def language(self, settings: Settings, roots: list[Path],
                 editor: Optional[LanguageFeatures] = None) -> Optional[LanguageFeatures]:
        """Language intelligence for a chat: the editor's language servers first, then agent-lsp's own (the
        `languageServers` setting), per method."""
        own = None
        if settings.language_servers and self._make_language_servers is not None:
            if self._language_servers is None:
                self._language_servers = self._make_language_servers()
            own = await self._language_servers.get(settings.language_servers, roots, settings.language_timeout)
        return combined(editor, own)

    def disk_changed(self, paths: list[Path]) -> None:
        """Files changed on disk outside a chat (a revert): agent-lsp's own language servers are told."""
        if self._language_servers is not None:
            self._language_servers.disk_changed(paths)

    async def sandbox(self, settings: Settings, roots: list[Path]) -> Optional[Sandbox]:
        """The OS sandbox of a chat's commands when the `sandbox` setting turns it on; when it cannot start, one
        warning naming bwrap and its error (its commands then run outside it, each asked first)."""
        wanted = settings.sandbox
        if wanted is None or not wanted.enabled:
            return None
        sandbox = await open_sandbox([*roots, *map(Path, wanted.writable)], wanted.network, wanted.auto_allow)
        if not sandbox.ready:
            warning = (f"agent-lsp: the sandbox cannot start ({sandbox.problem}): commands run outside it, and "
                       "each asks before it runs.")
            self.warn([warning] if warning not in self._warned else [])
            self._warned.add(warning)
        return sandbox

    async def tools(self, settings: Settings, roots: list[Path], substitute: Substitute = lambda tool: tool,
                    language: Optional[LanguageFeatures] = None, sandbox: Optional[Sandbox] = None,
                    skills: Optional[list[Skill]] = None) -> list[Tool]:
        """Every tool a chat with these settings is offered: built-in (as the front end reaches them; run_command
        in `sandbox`), web_fetch (within the `webFetch` setting), `skill` when there are skills (None: those
        listed without asking), language tools (what `language` can answer), memory, MCP (each server started on
        first need)."""
        memory = memory_file(settings.memory_file, roots, self.data_dir)
        mcp = await self.mcp.tools(settings.mcp_servers) if settings.mcp_servers else []
        skills = await self.skills(roots) if skills is None else skills
        builtin = [*(substitute(RunCommand(sandbox) if t.name == RunCommand.name else t) for t in tools.ALL),
                   web_fetch_tool(settings), *([SkillTool(skills)] if skills else [])]
        return [*builtin, *tools.language_tools(language), *_memory_tools(memory), *mcp]

    async def commands(self, roots: list[Path], ask_trust: AskTrust = never_asked,
                       folder: Optional[Folder] = None) -> list[Command]:
        """The slash commands: builtins, the project's once trusted (`folder`, else decided asking with
        `ask_trust`), the user's. A file skipped is warned about once per process."""
        folder = folder or await self.folder(roots, ask_trust)
        found, warnings = await available_commands(roots, "commands" in folder.trusted, self.user_commands)
        self._warn_once(warnings)
        return found

    async def skills(self, roots: list[Path], ask_trust: AskTrust = never_asked,
                     folder: Optional[Folder] = None) -> list[Skill]:
        """The skills: the project's once trusted (`folder`, else decided asking with `ask_trust`), the user's. A
        skill skipped is warned about once per process."""
        folder = folder or await self.folder(roots, ask_trust)
        found, warnings = await available_skills(roots, "skills" in folder.trusted, self.user_skills)
        self._warn_once(warnings)
        return found

    def _warn_once(self, warnings: list[str]) -> None:
        self.warn([w for w in warnings if w not in self._warned])
        self._warned.update(warnings)

    async def invocable(self, roots: list[Path], ask_trust: AskTrust = never_asked) -> list[Command]:
        """What `/name` runs: the slash commands, then the skills no command's name takes (ACP lists them all as
        its available commands)."""
        folder = await self.folder(roots, ask_trust)
        found = await self.commands(roots, folder=folder)
        taken = {c.name for c in found}
        return [*found, *(Command(s.name, s.description, s.source, body=s.body)
                          for s in await self.skills(roots, folder=folder) if s.name not in taken)]

    async def _command(self, inputs: ChatInputs, known: list[Command],
                       skills: list[Skill]) -> tuple[Optional[tuple[str, str]], Optional[Skill]]:
        """Run the command (or else the skill) the message names, if any: a file's prompt or a skill's body
        replaces the message; a builtin is answered (name, arguments); the skill run is answered. BadInput naming
        `message` for an unknown name."""
        called = invocation(inputs.message)
        if called is None:
            return None, None
        name, arguments = called
        command = next((c for c in known if c.name == name), None)
        skill = next((s for s in skills if s.name == name), None) if command is None else None
        if command is None and skill is None:
            names = [*(c.name for c in known), *(s.name for s in skills if s.name not in {c.name for c in known})]
            raise BadInput("message", f"unknown command /{name} (known: {', '.join('/' + n for n in names)})")
        if command is not None and command.source == "builtin":
            return (name, arguments), None
        inputs.message = expand(command or Command(name, "", "user", body=skill.body), arguments)
        if not inputs.message.strip():
            raise BadInput("message", f"the {'command' if command else 'skill'} /{name} has an empty prompt")
        return None, skill

    async def check(self, inputs: ChatInputs) -> CheckedChat:
        """BadInput naming the field when the chat cannot start: an invalid outputSchema, a mention that cannot be
        read, an image that cannot be sent, a message with neither words nor an image. (An unknown `/name` is
        found by `compose`, once the folder's trust decided which commands there are.)"""
        if not inputs.message.strip() and not inputs.images:  # images alone are a message: a pasted screenshot
            raise BadInput("message", "must not be empty (a message needs words or an image)")
        finish = []
        if inputs.output_schema is not None:
            from agent_lsp.tools.finish import InvalidSchema, finish_tool

            try:
                finish = [finish_tool(inputs.output_schema)]
            except InvalidSchema as e:
                raise BadInput("outputSchema", f"not a valid JSON Schema: {e}") from None
        try:
            images = await check_images(inputs.images)
            mentioned = await expand_mentions(ToolContext(editor=inputs.editor), inputs.mentions, images)
        except (BadMention, BadImage) as e:
            raise BadInput(e.field, str(e)) from None
        return CheckedChat(inputs, finish, mentioned, images=images)

    async def compose(self, checked: CheckedChat) -> ChatRequest:
        """What the chat is told and may use."""
        inputs = checked.inputs
        roots = inputs.editor.roots
        folder = await self.folder(roots, inputs.ask_trust)  # the one trust question, once the session is reserved
        skills = await self.skills(roots, folder=folder)
        builtin, skill = await self._command(inputs, await self.commands(roots, folder=folder), skills)
        settings = self.in_force.resolve(folder, inputs.chat_settings)
        env = await environment(inputs)
        memory = memory_file(settings.memory_file, roots, self.data_dir)
        ran = skill_run_note(skill, roots) if skill else None
        context = "\n\n".join(part for part in (editor_context(env), inputs.attached, checked.mentioned, ran) if part)
        language = await self.language(settings, roots, inputs.language)
        sandbox = await self.sandbox(settings, roots)
        offered = await self.tools(settings, roots, inputs.substitute, language, sandbox, skills)
        if builtin and builtin[0] == "memory":
            builtin = ("memory", memory_text_for_user(memory))
        return ChatRequest(
            message=UserMessage(text=inputs.message, context=context or None, images=checked.images),
            settings=settings,
            system=system_prompt(env, project_instructions(roots),
                                 read_memory(memory) if memory and not memory.in_workspace else None,
                                 [(s.name, s.description) for s in skills]),
            tools=[*offered, *checked.finish],
            ctx=ToolContext(editor=inputs.editor, secret_env=settings.secret_env, language=language,
                            readable=readable_folders(skills), instructions=SubfolderInstructions(roots)),
            ends_with="finish" if inputs.output_schema is not None else None,
            hooks=[ShellHooks(settings.hooks, inputs.session_id, roots[0] if roots else None, sandbox)]
            if settings.hooks else [],
            builtin=builtin)

    async def close(self) -> None:
        """Stop what the chats started (MCP servers, language servers)."""
        await self.mcp.close()
        if self._language_servers is not None:
            await self._language_servers.close()


def memory_text_for_user(memory: Optional[MemoryFile]) -> str:
    """What `/memory` shows: where the facts live and each fact."""
    if memory is None:
        return ("There is no project memory here: no workspace folder is open (or `memoryFile` is private without a "
                "data directory).")
    facts = read_memory(memory)
    if not facts:
        return f"The project memory ({memory.path}) is empty. Ask the agent to remember a fact, or edit the file."
    return f"Project memory ({memory.path}):\n" + "\n".join(f"- {fact}" for fact in facts)


def skill_run_note(skill: Skill, roots: list[Path]) -> str:
    """What a chat run by `/name` of a skill is told besides the skill's body: where the skill's files are."""
    folder = display(roots, skill.folder) if skill.source == "project" else str(skill.folder)
    return f"The message is the skill {skill.name} (its folder: {folder}; `skill` lists its files)."


def web_fetch_tool(settings: Settings) -> Tool:
    """web_fetch with the limits of the `webFetch` setting."""
    return WebFetch(FetchPolicy(**settings.web_fetch))


def _memory_tools(memory: Optional[MemoryFile]) -> list[Tool]:
    """`remember` and `forget`, when the workspace has somewhere to keep facts."""
    return [Remember(memory), Forget(memory)] if memory else []


async def environment(inputs: ChatInputs) -> Environment:
    """What the system prompt tells the model about the editor: the active buffer and the most recently opened
    ones, at most MAX_LISTED_BUFFERS (list_open_buffers has the rest)."""
    editor = inputs.editor
    roots = editor.roots
    docs = editor.open_documents()
    wanted = inputs.active_path
    active = next((d for d in docs if (d.path == wanted if wanted is not None else d.uri == inputs.active_label)),
                  None) if wanted is not None or inputs.active_label else None
    listed = docs[-MAX_LISTED_BUFFERS:]
    if active is not None and active not in listed:
        listed = [active, *listed[1:]]
    flags = await asyncio.to_thread(lambda: [d.unsaved for d in listed])  # may read the files
    env = Environment(os_name=f"{platform.system()} {platform.release()}", roots=roots,
                      open_buffers=[(display(roots, d.path) if d.path else d.uri, dirty)
                                    for d, dirty in zip(listed, flags)],
                      more_buffers=len(docs) - len(listed))
    if wanted is not None or inputs.active_label:
        env.active_file = display(roots, real(wanted)) if wanted else inputs.active_label
        if active and inputs.selection:
            lines = active.text.splitlines()
            first, last = inputs.selection
            env.selection = (first + 1, last + 1, "\n".join(lines[first:last + 1]))
    return env
