"""Which workspaces' own settings files the user trusted: a cloned repository runs none of its hooks (and sends
nothing to a server it names) until the user said so once. Answers are kept per workspace folder and per content:
a file whose commands changed asks again."""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any, Awaitable, Callable, Optional

log = logging.getLogger(__name__)


def digest(gated: dict[str, Any]) -> str:
    """What a trust answer is about: the gated settings' content."""
    return hashlib.sha256(json.dumps(gated, sort_keys=True, default=str).encode()).hexdigest()


class Trust:
    """Trust answers, in `data_dir`/trust.json (in memory only without a data dir)."""

    def __init__(self, data_dir: Optional[Path]) -> None:
        self.path = data_dir / "trust.json" if data_dir else None
        self._answers: dict[str, dict[str, Any]] = {}
        if self.path and self.path.exists():
            try:
                self._answers = json.loads(self.path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as e:
                log.warning("trust answers in %s are unreadable (%s); asking again", self.path, e)

    def answer(self, root: Path, content: str) -> Optional[bool]:
        """True/False when the user answered for this folder and content; None when never asked."""
        entry = self._answers.get(str(root))
        return entry["trusted"] if entry and entry.get("digest") == content else None

    async def decide(self, root: Path, content: str, ask: Callable[[str], Awaitable[Optional[bool]]],
                     question: str) -> bool:
        """Whether this content of `root` is trusted: the answer kept, else `ask(question)`'s, kept unless the
        question was dismissed (None: asked again next time)."""
        trusted = self.answer(root, content)
        if trusted is None:
            trusted = await ask(question)
            if trusted is not None:
                self.record(root, content, trusted)
        return bool(trusted)

    def record(self, root: Path, content: str, trusted: bool) -> None:
        self._answers[str(root)] = {"digest": content, "trusted": trusted}
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary = self.path.with_suffix(".tmp")
            temporary.write_text(json.dumps(self._answers, indent=2), encoding="utf-8")
            os.replace(temporary, self.path)
        except OSError as e:  # the answer still holds for this process
            log.warning("cannot keep the trust answer in %s: %s", self.path, e)
