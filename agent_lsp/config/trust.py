"""Which workspace folders the user trusted: a cloned repository runs none of its hooks, sends nothing to a server it
names and follows none of its commands or skills until the user said so once. One answer per folder, covering the
content of each of its parts (settings, commands, skills) as it was asked: a part whose content changed is no longer
covered, and the folder is asked again."""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any, Mapping, Optional

log = logging.getLogger(__name__)


def digest(content: Any) -> str:
    """What a trust answer is about: a part's content."""
    return hashlib.sha256(json.dumps(content, sort_keys=True, default=str).encode()).hexdigest()


class Trust:
    """Trust answers, in `data_dir`/trust.json (in memory only without a data dir)."""

    def __init__(self, data_dir: Optional[Path]) -> None:
        self.path = data_dir / "trust.json" if data_dir else None
        self._answers: dict[str, dict[str, Any]] = {}
        self.generation = 0
        """Counts the answers recorded: what was decided from the kept answers is decided again when it moves."""
        if self.path and self.path.exists():
            try:
                self._answers = json.loads(self.path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as e:
                log.warning("trust answers in %s are unreadable (%s); asking again", self.path, e)

    def answer(self, root: Path, part: str, content: str) -> Optional[bool]:
        """True/False when the folder's answer covered this content of `part`; None when it was never asked."""
        entry = self._answers.get(str(root))
        covered = entry.get("parts") if isinstance(entry, dict) else None
        return bool(entry.get("trusted")) if isinstance(covered, dict) and covered.get(part) == content else None

    def record(self, root: Path, parts: Mapping[str, str], trusted: bool) -> None:
        """The user's answer about the folder with these parts' contents."""
        self._answers[str(root)] = {"parts": dict(parts), "trusted": trusted}
        self.generation += 1
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary = self.path.with_suffix(".tmp")
            temporary.write_text(json.dumps(self._answers, indent=2), encoding="utf-8")
            os.replace(temporary, self.path)
        except OSError as e:  # the answer still holds for this process
            log.warning("cannot keep the trust answer in %s: %s", self.path, e)
