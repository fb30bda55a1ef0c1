"""SidecarLanguageFeatures: the LanguageFeatures port answered by language servers agent-lsp runs itself (the
`languageServers` setting), for front ends whose client cannot answer (plain LSP clients, ACP, headless)."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Mapping, Optional

from agent_lsp.config import env_seconds
from agent_lsp.config.language_servers import LanguageServerConfig
from agent_lsp.core.paths import is_inside, real, uri_to_path
from agent_lsp.core.ports import LANGUAGE_METHODS, Editor, IndexStatus, LanguageFeatureError
from agent_lsp.core.positions import document_uri
from agent_lsp.sidecar.languages import extensions, folder_has, language_id, serves
from agent_lsp.sidecar.server import Server, find_command

log = logging.getLogger(__name__)

ENCODINGS = ("utf-32", "utf-8", "utf-16")
"""Position encodings offered, preferred first (utf-32 needs no conversion; utf-16 is what every server knows)."""


START_WAIT = env_seconds("AGENT_LSP_LANGUAGE_START_WAIT", 10.0)
"""Seconds a language request waits for a server still starting (counted from the first request that waited for
that start); it then fails at once, saying so, until the server has answered `initialize` (its start goes on, up to
its `startTimeout`). The chat goes on meanwhile, as for MCP servers (mcp/servers.py CHAT_WAIT). The environment
overrides it (the tests make it a ceiling, or short where a server must outlast it)."""


class SidecarLanguageFeatures:
    """Language servers by (workspace folder, name), each started on first use for a file of its languages, fed
    the editor's unsaved buffers, restarted once if it dies, withdrawn (with a warning) if it dies again."""

    def __init__(self, configs: Mapping[str, LanguageServerConfig], roots: list[Path],
                 editor_provider: Callable[[], Optional[Editor]], warn: Callable[[str], None],
                 timeout: float = 5.0, *, encodings: tuple[str, ...] = ENCODINGS,
                 start_wait: float = START_WAIT) -> None:
        self._configs = dict(configs)
        self._roots = sorted({real(r) for r in roots} or {real(Path.cwd())},
                             key=lambda r: len(r.parts), reverse=True)  # the innermost folder first
        self._editor_provider = editor_provider
        self._warn = warn
        self.timeout = timeout  # languageTimeout; SidecarPool updates it when the setting changes
        self._encodings = encodings
        self._start_wait = start_wait
        self._servers: dict[tuple[Path, str], Server] = {}
        self._deaths: dict[tuple[Path, str], int] = {}
        self._withdrawn: dict[tuple[Path, str], str] = {}  # why, as "... and was withdrawn" says it
        self._relevant: dict[tuple[Path, str], bool] = {}
        self._looking: Optional[asyncio.Task] = None
        self._restarts: set[asyncio.Task] = set()
        self._closed = False
        self._missing = set()
        for name, config in self._configs.items():
            if all(find_command(config.command[0], root) is None for root in self._roots):
                self._missing.add(name)
                warn(f"agent-lsp: language server `{name}`: command `{config.command[0]}` was not found; "
                     "its tools are not offered.")

    # ---- the port ----------------------------------------------------------------------------------------

    def methods(self, path: Optional[Path] = None) -> dict[str, str]:
        """The methods the configured servers answer (for `path`, or anywhere in the workspace), each with its
        origin "languageServer:<name>". Before a server has started, those every server is expected to support."""
        found: dict[str, str] = {}
        if self._closed:
            return found
        for root, name in self._candidates(path):
            for method in self._supported(root, name):
                found.setdefault(method, f"languageServer:{name}")
        return {m: found[m] for m in LANGUAGE_METHODS if m in found}

    def index(self, path: Optional[Path] = None) -> IndexStatus:
        """How much the server answering for `path` (or, for the workspace, the least ready one) knows now."""
        found = [self._servers[key].index() if key in self._servers else
                 IndexStatus("loading", f"language server `{key[1]}` has not started yet")
                 for key in self._candidates(path)]
        if not found:
            return IndexStatus("unknown", "no language server of agent-lsp's answers here")
        order = ("stale", "loading", "unknown", "ready")
        limits = [s.reference_files for s in found if s.reference_files is not None]
        return replace(min(found, key=lambda s: order.index(s.state)), reference_files=min(limits, default=None))

    async def request(self, method: str, params: dict[str, Any], path: Optional[Path] = None) -> Any:
        """The answer of the first configured server for `path` that supports `method`; with no path (and none in
        the params), every server of the workspace, lists merged."""
        if method not in LANGUAGE_METHODS:
            raise LanguageFeatureError(f"{method} is not a language feature agent-lsp asks for")
        if self._closed:
            raise LanguageFeatureError("agent-lsp's language servers are stopped")
        path = path or _path_in(params)
        if path is None:
            return await self._everywhere(method, params)
        path = real(path)
        if self._root_of(path) is None:
            raise LanguageFeatureError(f"{path} is outside the workspace folders")
        candidates = [c for c in self._candidates(path) if method in self._supported(*c)]
        if not candidates:
            raise LanguageFeatureError(self._why_none(path, method))
        for root, name in candidates:
            server = await self._ready(root, name)
            if method in server.methods:
                await self._sync(server, path)
                return await server.ask(method, params, path, self.timeout)
        names = _names([n for _, n in candidates])
        raise LanguageFeatureError(f"language server {names} does not support {method}")

    def disk_changed(self, paths: Optional[list[Path]] = None) -> None:
        """Files changed on disk (None: which is not known, as after a command): every running server is told
        before its next request, and says `stale` until then."""
        resolved = None if paths is None else [p.resolve() for p in paths]
        for server in self._servers.values():
            server.disk_changed(resolved)

    async def close(self) -> None:
        """Stop every server (shutdown and exit, then kill); nothing of them is left."""
        self._closed = True
        for task in self._restarts:
            task.cancel()
        await asyncio.gather(*self._restarts, return_exceptions=True)
        if self._looking is not None:
            await asyncio.gather(self._looking, return_exceptions=True)
        servers, self._servers = list(self._servers.values()), {}
        await asyncio.gather(*(s.stop() for s in servers), return_exceptions=True)

    async def prepare(self) -> None:
        """Look (once, in a thread: up to SCAN_LIMIT entries per folder) which workspace folders have files of
        each server's languages, so that `methods()` answers from memory; until then every server counts."""
        unknown = [(root, name) for root in self._roots for name in self._configs
                   if (root, name) not in self._relevant]
        if not unknown or self._closed:
            return
        if self._looking is None or self._looking.done():
            self._looking = asyncio.ensure_future(asyncio.to_thread(self._look, unknown))
        # shielded: a chat aborted meanwhile leaves the look going on for the next one
        found = await asyncio.shield(self._looking)
        for key, has in found.items():
            self._relevant.setdefault(key, has)

    def _look(self, keys: list[tuple[Path, str]]) -> dict[tuple[Path, str], bool]:
        """Whether each (folder, server) has files of the server's languages (run in a thread)."""
        found = {}
        for root, name in keys:
            suffixes = extensions(self._configs[name])
            found[(root, name)] = suffixes is None or folder_has(root, suffixes)
        return found

    def running(self) -> dict[tuple[Path, str], int]:
        """The process id of each running server, by (workspace folder, name)."""
        return {key: s.pid for key, s in self._servers.items() if s.pid is not None}

    def pending(self) -> int:
        """Requests sent to the servers and not answered nor given up on."""
        return sum(s.client.plain.pending() for s in self._servers.values() if s.client is not None)

    # ---- which server --------------------------------------------------------------------------------------

    def _candidates(self, path: Optional[Path]) -> list[tuple[Path, str]]:
        """(folder, name) of each usable server for `path`, in configuration order; for None, for the workspace."""
        if path is None:
            return [(root, name) for root in self._roots for name in self._configs
                    if self._usable(root, name) and self._relevant_to(root, name)]
        path = real(path)
        root = self._root_of(path)
        if root is None:
            return []
        language = self._editor_language(path)
        return [(root, name) for name, config in self._configs.items()
                if self._usable(root, name) and serves(config, path, language)]

    def _why_none(self, path: Path, method: str) -> str:
        """Why no server answers `method` for `path`, naming the servers concerned."""
        configured = [n for _, n in self._candidates(path)]
        if configured:
            return f"language server {_names(configured)} does not support {method}"
        language = self._editor_language(path)
        for name, config in self._configs.items():
            if serves(config, path, language):
                if name in self._missing:
                    return f"language server `{name}`: command `{config.command[0]}` was not found"
                why = self._withdrawn.get((self._root_of(path), name), "stopped twice")
                return f"language server `{name}` {why} and was withdrawn"
        return f"no language server is configured for {path.name}"

    def _usable(self, root: Path, name: str) -> bool:
        return name not in self._missing and (root, name) not in self._withdrawn

    def _supported(self, root: Path, name: str) -> set[str]:
        server = self._servers.get((root, name))
        if server is None or server.state in ("new", "starting"):
            return set(LANGUAGE_METHODS)
        return server.methods

    def _relevant_to(self, root: Path, name: str) -> bool:
        """Whether `root` has files of `name`'s languages (or one is open, or the server runs there)."""
        key = (root, name)
        if key in self._servers or self._relevant.get(key):
            return True
        config = self._configs[name]
        editor = self._editor_provider()
        for doc in editor.open_documents() if editor else []:
            if doc.path is not None and is_inside(doc.path, root) and serves(config, doc.path, doc.language_id):
                return True
        return self._relevant.get(key, True)  # not looked at yet (prepare): offered, as before a server starts

    def _root_of(self, path: Path) -> Optional[Path]:
        return next((r for r in self._roots if is_inside(path, r)), None)

    def _editor_language(self, path: Path) -> str:
        editor = self._editor_provider()
        doc = editor.open_document(path) if editor else None
        return doc.language_id if doc else ""

    # ---- running them --------------------------------------------------------------------------------------

    async def _ready(self, root: Path, name: str) -> Server:
        key = (root, name)
        if self._closed:  # a request that was under way when close() came
            raise LanguageFeatureError("agent-lsp's language servers are stopped")
        server = self._servers.get(key)
        if server is None:
            server = self._servers[key] = Server(name, self._configs[name], root, self._encodings, self._exited)
        await server.ensure_started(self._start_wait)
        return server

    async def _sync(self, server: Server, asked: Optional[Path]) -> None:
        editor = self._editor_provider()
        buffers: dict[Path, tuple[str, str, Optional[int]]] = {}
        for doc in editor.open_documents() if editor else []:
            if doc.path is None:
                continue
            path = real(doc.path)
            if is_inside(path, server.root) and serves(server.config, path, doc.language_id):
                buffers[path] = (language_id(path, doc.language_id), doc.text, doc.version)
        language = language_id(asked) if asked else ""
        await server.sync(buffers, asked, language)

    async def _everywhere(self, method: str, params: dict[str, Any]) -> Any:
        candidates = [c for c in self._candidates(None) if method in self._supported(*c)]
        if not candidates:
            raise LanguageFeatureError(f"no language server of the workspace answers {method}")

        async def one(root: Path, name: str) -> Any:
            server = await self._ready(root, name)
            if method not in server.methods:
                return None
            await self._sync(server, None)
            return await server.ask(method, params, None, self.timeout)

        answers = await asyncio.gather(*(one(*c) for c in candidates), return_exceptions=True)
        for answer in answers:
            if isinstance(answer, BaseException) and not isinstance(answer, LanguageFeatureError):
                raise answer
        good = [a for a in answers if not isinstance(a, BaseException)]
        if not good:
            raise answers[0]  # type: ignore[misc]
        lists = [a for a in good if isinstance(a, list)]
        if not lists:
            return next((a for a in good if a is not None), None)
        return [item for a in lists for item in a]

    def _exited(self, server: Server, returncode: Optional[int]) -> None:
        """A server ended on its own: started again the first time; withdrawn, with a warning, the second."""
        key = (server.root, server.name)
        if self._closed or self._servers.get(key) is not server:
            return
        self._deaths[key] = self._deaths.get(key, 0) + 1
        if self._deaths[key] == 1:
            log.info("restarting language server %s", server.describe())
            fresh = Server(server.name, server.config, server.root, self._encodings, self._exited)
            if not server.ran:  # a start that failed: its retry is waited for only what is left of the first wait
                fresh.wait_until = server.wait_until
            self._servers[key] = fresh
            task = asyncio.ensure_future(self._restart(fresh))
            self._restarts.add(task)
            task.add_done_callback(self._restarts.discard)
            return
        self._withdrawn[key] = "stopped twice" if server.ran else "did not start"
        del self._servers[key]
        why = f"did not start again in {server.root}: {server.failure}" if server.failure else \
            f"stopped again (exit code {returncode}) in {server.root}"
        self._warn(f"agent-lsp: language server {server.describe()} {why}; its tools are withdrawn.")

    async def _restart(self, server: Server) -> None:
        try:
            await server.ensure_started()
        except LanguageFeatureError as e:
            log.info("%s", e)


def _path_in(params: dict[str, Any]) -> Optional[Path]:
    """The file a request is about, from its params (textDocument, or a call hierarchy item)."""
    uri = document_uri(params)
    return uri_to_path(uri) if uri is not None else None


def _names(names: list[str]) -> str:
    return ", ".join(f"`{n}`" for n in dict.fromkeys(names))
