"""The user's own settings file, `<config dir>/agent-lsp/settings.json` ($XDG_CONFIG_HOME, else ~/.config): any
setting, for every front end (an ACP client passes only a command line and an environment). It is the user's own
file, so nothing in it asks for trust. Read again whenever it changes; a bad file or value is a warning naming the
file and the key, and never echoes a value (the file may hold MCP servers' header values)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping, Optional

from agent_lsp.config import clean


def config_dir(env: Mapping[str, str] = os.environ) -> Path:
    """agent-lsp's folder of the user's own files: $XDG_CONFIG_HOME/agent-lsp, else ~/.config/agent-lsp."""
    base = env.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "agent-lsp"


def user_settings_path(env: Mapping[str, str] = os.environ) -> Path:
    """Where the user's settings file is: $XDG_CONFIG_HOME/agent-lsp/settings.json, else ~/.config/..."""
    return config_dir(env) / "settings.json"


class UserSettingsFile:
    """The cleaned layer of the user's settings file, read again when its modification time or size changes."""

    def __init__(self, path: Optional[Path] = None) -> None:
        self.path = path or user_settings_path()
        self._seen: Optional[tuple[int, int]] = None
        self.layer: dict[str, Any] = {}

    def refresh(self) -> list[str]:
        """Read the file again if it changed since the last look (a stat when it did not); the warnings of this
        reading, [] when nothing changed."""
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            self._seen, self.layer = None, {}
            return []
        except OSError as e:
            return self._fail(f"cannot be read ({e.strerror or e})", None)
        seen = (stat.st_mtime_ns, stat.st_size)
        if seen == self._seen:
            return []
        self._seen = seen
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as e:  # permissions, a directory, not UTF-8
            return self._fail(f"cannot be read ({getattr(e, 'strerror', None) or type(e).__name__})", seen)
        except json.JSONDecodeError as e:  # its message names a position, never the content
            return self._fail(f"is not valid JSON ({e.msg} at line {e.lineno}, column {e.colno})", seen)
        if not isinstance(raw, dict):
            return self._fail("must hold a JSON object", seen)
        self.layer, warnings = clean(raw, str(self.path))
        return warnings

    def _fail(self, problem: str, seen: Optional[tuple[int, int]]) -> list[str]:
        self._seen, self.layer = seen, {}
        return [f"agent-lsp: the user settings file {self.path} {problem}; its settings are ignored."]
