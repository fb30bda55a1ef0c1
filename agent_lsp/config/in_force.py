"""The settings in force, decided in one place for every consumer: a chat, the suggestions and the server's own reads
(its SDK warm-up, the model list, the language timeout). The layers are stacked here (config/__init__.py `Layers`),
the user's file read again when it changed, the workspace's own files read, and the workspace's trust applied with
one rule per key: a gated key of the workspace's files (config/workspace_file.py) is in force once the user trusted
the folder with this content of them, for a chat and a suggestion alike.

Trust is one question per workspace folder, covering what its own files would have the agent do: the settings files'
gated keys, the project's commands and its skills (read by sessions/, given to `folder` as a `ProjectParts` port).
An answer covers each part's content as it was asked; a chat asks again when a part it finds is not covered. What
reads without asking (suggestions, the server) takes the kept answer."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Awaitable, Callable, Optional

from agent_lsp.config import WORKSPACE_FILE, Layers, Settings
from agent_lsp.config.mcp_json import MCP_JSON
from agent_lsp.config.trust import Trust, digest
from agent_lsp.config.user_file import UserSettingsFile
from agent_lsp.config.workspace_file import SettingsFiles, read_settings_files

AskTrust = Callable[[str], Awaitable[Optional[bool]]]
"""Ask the user the question given: True to trust, False not to, None when it was dismissed or cannot be asked."""
Warn = Callable[[list[str]], None]


async def never_asked(question: str) -> Optional[bool]:
    """Nobody is asked: only the kept answers count."""
    return None


@dataclass(frozen=True)
class TrustedPart:
    """One part of a workspace folder used only once the folder is trusted."""

    covers: str
    """What the question names it ("settings", "commands", "skills")."""
    asks: str
    """What the question says of it ("<file> asks to run hooks: `make`")."""
    content: str
    """Its content's digest: an answer covers this content."""


ProjectParts = Callable[[Path], list[TrustedPart]]
"""The parts of a workspace folder besides its settings files (sessions/: the project's commands and skills)."""


def no_parts(root: Path) -> list[TrustedPart]:
    return []


@dataclass
class Folder:
    """A chat's workspace folder, decided: the parts trusted, and the layer of its settings files."""

    root: Optional[Path] = None
    trusted: frozenset[str] = frozenset()
    layer: dict[str, Any] = field(default_factory=dict)


def trust_question(parts: list[TrustedPart]) -> str:
    """The one question about a folder: what each part would have the agent do, and what trusting covers."""
    covers = list(dict.fromkeys(part.covers for part in parts))
    named = covers[0] if len(covers) == 1 else f"{', '.join(covers[:-1])} and {covers[-1]}"
    return (f"agent-lsp: {'; '.join(part.asks for part in parts)}. Trust this workspace's {named}? Until you do, "
            "they are ignored.")


class SettingsInForce:
    """The settings in force for one front end's connection: its layers, the user's file, the trust answers."""

    def __init__(self, layers: Layers, warn: Warn, data_dir: Optional[Path] = None,
                 user_file: Optional[UserSettingsFile] = None) -> None:
        self.layers = layers
        self.warn = warn
        self.user_file = user_file or UserSettingsFile()
        self.trust = Trust(data_dir)
        self._seen: tuple = ()
        """What the settings files' layer of `current` was read from (folder, both files' stats, trust answers)."""
        self._layer: dict[str, Any] = {}
        self._now: tuple[tuple, Optional[Settings]] = ((), None)

    def refresh(self) -> list[str]:
        """Take the user's settings file again if it changed; the warnings of this reading."""
        warnings = self.user_file.refresh()
        self.layers.user_file = self.user_file.layer
        return warnings

    async def folder(self, roots: list[Path], ask: AskTrust = never_asked,
                     project: ProjectParts = no_parts) -> Folder:
        """The first workspace folder read and decided for a chat: its one trust question asked (with `ask`) when a
        part found is not covered by the kept answer; the warnings of the reading given."""
        self.warn(self.refresh())
        if not roots:
            return Folder()
        root = roots[0]
        files, parts = await asyncio.to_thread(_read, root, project)
        kept = {part.covers: self.trust.answer(root, part.covers, part.content) for part in parts}
        trusted = frozenset(covers for covers, answer in kept.items() if answer)
        if None in kept.values():
            answer = await ask(trust_question(parts))
            if answer is not None:
                self.trust.record(root, {part.covers: part.content for part in parts}, answer)
                trusted = frozenset(kept) if answer else frozenset()
        layer, problems = files.layer("settings" in trusted)
        self.warn(files.warnings + problems)
        return Folder(root, trusted, layer)

    def resolve(self, folder: Folder, chat: Optional[dict[str, Any]] = None) -> Settings:
        """The settings in force in `folder` for a chat whose own parameters (already valid) are `chat`."""
        return replace(self.layers, workspace_file=folder.layer).resolve(chat)

    def current(self, roots: list[Path], chat: Optional[dict[str, Any]] = None) -> Settings:
        """The settings in force now, asking nothing (suggestions, the server's own reads): the first folder's
        settings files read again when they change, their gated keys in force when the kept answer covers them;
        resolved again only when a layer changed."""
        self.warn(self.refresh())
        layer = self._settings_layer(roots[0] if roots else None)
        layers = self.layers
        if chat:
            return replace(layers, workspace_file=layer).resolve(chat)
        key = (layers.user_file, layers.environment, layers.initialization_options, layer, layers.workspace)
        if len(key) != len(self._now[0]) or any(a is not b for a, b in zip(key, self._now[0])):
            self._now = (key, replace(layers, workspace_file=layer).resolve())
        return self._now[1]

    def _settings_layer(self, root: Optional[Path]) -> dict[str, Any]:
        if root is None:
            return {}
        seen = (root, _stat(root / WORKSPACE_FILE), _stat(root / MCP_JSON), self.trust.generation)
        if seen != self._seen:
            files = read_settings_files(root)
            trusted = bool(files.gated) and self.trust.answer(root, "settings", digest(files.gated)) is True
            self._layer, problems = files.layer(trusted)
            self._seen = seen
            self.warn(files.warnings + problems)
        return self._layer


def _read(root: Path, project: ProjectParts) -> tuple[SettingsFiles, list[TrustedPart]]:
    """A folder's settings files and every part of it that needs trust (its settings files' first)."""
    files = read_settings_files(root)
    own = [TrustedPart("settings", files.asks(), digest(files.gated))] if files.gated else []
    return files, [*own, *project(root)]


def _stat(path: Path) -> Optional[tuple[int, int]]:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size
