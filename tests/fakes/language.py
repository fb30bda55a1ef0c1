"""FakeLanguageFeatures: the core LanguageFeatures port answering canned LSP results (positions in characters);
records every request it is asked."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Callable, Optional, Union

from agent_lsp.core.ports import IndexStatus, LanguageFeatureError

Answer = Union[Any, Callable[[dict], Any]]


class FakeLanguageFeatures:
    def __init__(self, answers: dict[str, Answer], origin: str = "editor",
                 only: Optional[dict[str, set[str]]] = None) -> None:
        self.answers = answers
        """method → its result, or a function of the params giving it; a LanguageFeatureError value is raised."""
        self.origin = origin
        self.only = only or {}
        """method → the file suffixes it answers for (a server for some languages only); absent: every file."""
        self.requests: list[tuple[str, dict, Optional[Path]]] = []
        self.hang = False
        """True: requests wait until cancelled (a server that never answers)."""
        self.status = IndexStatus("unknown", "the fake reports nothing")
        """What `index` answers."""
        self.disk_changes: list[Optional[list[Path]]] = []
        """What `disk_changed` was told, in order."""

    def methods(self, path: Optional[Path] = None) -> dict[str, str]:
        return {m: self.origin for m in self.answers
                if path is None or m not in self.only or path.suffix in self.only[m]}

    def index(self, path: Optional[Path] = None) -> IndexStatus:
        return self.status

    def disk_changed(self, paths: Optional[list[Path]] = None) -> None:
        self.disk_changes.append(paths)

    async def request(self, method: str, params: dict[str, Any], path: Optional[Path] = None) -> Any:
        self.requests.append((method, params, path))
        if self.hang:
            await asyncio.Event().wait()
        if method not in self.answers:
            raise LanguageFeatureError(f"Nothing answers {method}.")
        answer = self.answers[method]
        answer = answer(params) if callable(answer) else answer
        if isinstance(answer, LanguageFeatureError):
            raise answer
        return answer
