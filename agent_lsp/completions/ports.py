"""What completions/ needs from outside, as ports it owns: the open buffers, the settings in force, the language
features and a way to warn the user. The edge (lsp/inline_completion.py, lsp/documents.py) implements them;
completions/ never imports lsp/ or sessions/."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Optional, Protocol

from agent_lsp.config import Settings
from agent_lsp.config.completions import CompletionsSettings
from agent_lsp.core.ports import LanguageFeatures, OpenDocument

SettingsInForce = Callable[[], tuple[Settings, CompletionsSettings]]
"""The chat's settings and the `completions` object in force now."""
LanguageSource = Callable[[], Optional[LanguageFeatures]]
"""The language features to find definitions with (None: none)."""
Warn = Callable[[str], None]
"""Shows the user a warning."""


class Documents(Protocol):
    """The editor's open buffers as suggestions see them."""

    @property
    def roots(self) -> list[Path]:
        """The workspace folders."""
        ...

    def get(self, uri: str) -> Optional[OpenDocument]:
        """The open document `uri` as it is now; None when it is not open."""
        ...

    def recent(self) -> list[tuple[str, int]]:
        """(uri, 0-based line of its last change) of the open buffers changed lately, the most recent first."""
        ...

    def all(self) -> list[OpenDocument]:
        """Every open document."""
        ...
