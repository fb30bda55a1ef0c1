"""Several LanguageFeatures ports as one: per method, the first port that can answer it (the editor's language
servers first, agent-lsp's own as the fallback)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from agent_lsp.core.ports import IndexStatus, LanguageFeatureError, LanguageFeatures


class Combined:
    """`ports` in order of preference; each method goes to the first port that lists it for the path."""

    def __init__(self, *ports: LanguageFeatures) -> None:
        self.ports = ports

    def methods(self, path: Optional[Path] = None) -> dict[str, str]:
        """Every port's methods, the first port's origin where several answer one."""
        found: dict[str, str] = {}
        for port in self.ports:
            for method, origin in port.methods(path).items():
                found.setdefault(method, origin)
        return found

    async def request(self, method: str, params: dict[str, Any], path: Optional[Path] = None) -> Any:
        """The answer of the first port that lists `method` for `path`."""
        for port in self.ports:
            if method in port.methods(path):
                return await port.request(method, params, path)
        raise LanguageFeatureError(f"nothing can answer {method} here")

    def disk_changed(self, paths: Optional[list[Path]] = None) -> None:
        for port in self.ports:
            port.disk_changed(paths)

    def index(self, path: Optional[Path] = None) -> IndexStatus:
        """The index of the first port that answers anything for `path`."""
        for port in self.ports:
            if port.methods(path):
                return port.index(path)
        return IndexStatus("unknown", "no language server answers here")


def combined(*ports: Optional[LanguageFeatures]) -> Optional[LanguageFeatures]:
    """One port for the given ones (None ones left out); None when there is none, the port itself when one."""
    present = [p for p in ports if p is not None]
    if not present:
        return None
    return present[0] if len(present) == 1 else Combined(*present)
