"""One language server agent-lsp runs for one workspace folder: started, initialized, fed the documents it must
see, asked, stopped.

The child runs with SIGKILL as its parent-death signal (Linux), in its own process group: a SIGKILLed agent-lsp
leaves no server behind, and `stop` takes the group down if the server does not leave on `exit`. Its environment is
agent-lsp's without the provider keys and credentials, as for run_command.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import time
import uuid
from collections import deque
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Optional

from pygls.exceptions import JsonRpcException

from agent_lsp.config.language_servers import LanguageServerConfig
from agent_lsp.core.language_methods import CAPABILITIES
from agent_lsp.core.paths import uri_to_path
from agent_lsp.core.ports import LANGUAGE_METHODS, IndexStatus, LanguageFeatureError
from agent_lsp.core.positions import convert, encoding_name
from agent_lsp.core.server_limits import reference_files_limit
from agent_lsp.processes import command_env, dying_with_us, kill_group
from agent_lsp.sidecar.client import SidecarClient
from agent_lsp.sidecar.documents import Buffers, Documents
from agent_lsp.sidecar.languages import extensions, modified_since
from agent_lsp.sidecar.positions import Texts

log = logging.getLogger(__name__)

STOP_WAIT = 2.0
"""Seconds a server has to answer `shutdown`, then to leave after `exit`, before it is killed."""

_SYMBOL_KINDS = {"valueSet": list(range(1, 27))}


def methods_of(capabilities: dict[str, Any]) -> set[str]:
    """The LANGUAGE_METHODS a server's capabilities promise."""
    found = {m for m, key in CAPABILITIES.items() if capabilities.get(key) not in (None, False)}
    rename = capabilities.get("renameProvider")
    if not (isinstance(rename, dict) and rename.get("prepareProvider")):
        found.discard("textDocument/prepareRename")
    return found


def find_command(name: str, root: Path) -> Optional[str]:
    """The executable `name` runs: on PATH, or a path (relative ones from the workspace folder)."""
    if os.sep in name or (os.altsep and os.altsep in name):
        path = (root / name) if not os.path.isabs(name) else Path(name)
        return str(path) if path.is_file() and os.access(path, os.X_OK) else None
    return shutil.which(name)


def _section(settings: Any, section: Optional[str]) -> Any:
    """The part of `settings` a workspace/configuration item asks for ("python.analysis" nests, or is one key)."""
    if not section:
        return settings
    if isinstance(settings, dict) and section in settings:
        return settings[section]
    node = settings
    for part in section.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


class StillStarting(LanguageFeatureError):
    """A server has not answered `initialize` within the time a caller waits for it; its start goes on."""

    def __init__(self, server: "Server", wait: float) -> None:
        super().__init__(f"language server `{server.name}` is still starting (no answer to initialize after "
                         f"{wait:g} s); use search and read_file meanwhile: its tools answer once it has started")


class Server:
    """One language server process for (`root`, `name`). `on_exit(server, returncode)` when it ends on its own."""

    def __init__(self, name: str, config: LanguageServerConfig, root: Path, encodings: tuple[str, ...],
                 on_exit: Callable[["Server", Optional[int]], None]) -> None:
        self.name, self.config, self.root, self.encodings = name, config, root, encodings
        self._on_exit = on_exit
        self.client: Optional[SidecarClient] = None
        self.state = "new"  # new -> starting -> running -> stopped
        self.ran = False
        """It answered `initialize` (the retry of one that never did keeps its `wait_until`: features.py)."""
        self.failure: Optional[str] = None
        """Why its start failed, when agent-lsp gave up on it (its own exit code then says nothing)."""
        self.wait_until: Optional[float] = None
        """The loop time until which callers wait for its start: set by the first one (`ensure_started`)."""
        self.methods: set[str] = set()
        self.encoding = "utf-16"
        self.documents = Documents(self._notify)
        self.stderr: deque[str] = deque(maxlen=20)
        self._starting: Optional[asyncio.Task] = None
        self._drain_task: Optional[asyncio.Task] = None
        self._tasks: list[asyncio.Task] = []
        self._closing = False
        self._late = False
        self.progress: dict[Any, tuple[str, str]] = {}
        """Work-done progress begun and not ended, by token: its title and latest message."""
        self.progressed = False
        """It reported work-done progress at least once (so its silence means it is done)."""
        self.status: Optional[tuple[bool, str]] = None
        """rust-analyzer's `experimental/serverStatus`: (quiescent, message)."""
        self.changed_on_disk: set[Path] = set()
        """Files changed on disk it was not told of yet."""
        self.told_at = time.time_ns()
        """When it last learnt of every change on disk (its start, then each workspace/didChangeWatchedFiles)."""
        self.server_name = ""
        """The name it gives itself (`serverInfo.name`), once it answered initialize."""
        self.disk_unknown: Optional[int] = None
        """Since when files may have changed on disk unseen (a command ran): looked for before its next request."""

    @property
    def pid(self) -> Optional[int]:
        process = self.client.process if self.client else None
        return process.pid if process and process.returncode is None else None

    def describe(self) -> str:
        return f"`{self.name}` ({self.config.describe()})"

    def index(self) -> IndexStatus:
        """How much it knows now, from what it said (work-done progress, rust-analyzer's serverStatus); never
        from the time that passed; with what it is known to leave out (core/server_limits.py)."""
        return replace(self._index(), reference_files=reference_files_limit(self.server_name))

    def _index(self) -> IndexStatus:
        if self.state in ("new", "starting"):
            return IndexStatus("loading", f"language server `{self.name}` has not answered initialize yet")
        if self.state == "stopped":
            return IndexStatus("unknown", f"language server `{self.name}` stopped")
        if self.changed_on_disk or self.disk_unknown is not None:
            return IndexStatus("stale", f"files changed on disk that `{self.name}` was not told of yet")
        if self.status is not None and not self.status[0]:
            return IndexStatus("loading", f"`{self.name}` is busy{': ' + self.status[1] if self.status[1] else ''}")
        if self.progress:
            title, message = next(reversed(self.progress.values()))
            said = f"{title} ({message})" if message else title
            return IndexStatus("loading", f"`{self.name}` reports work under way: {said}")
        if self.status is not None or self.progressed:
            return IndexStatus("ready", f"`{self.name}` reported its work done")
        return IndexStatus("unknown", f"`{self.name}` reports nothing of its indexing")

    # ---- start and stop ----------------------------------------------------------------------------------

    async def ensure_started(self, wait: Optional[float] = None) -> None:
        """Start and initialize the server unless it runs (within its `startTimeout`); LanguageFeatureError when it
        cannot, StillStarting when it has not answered `initialize` `wait` seconds after the first caller came
        (None: however long it takes). Callers that come later wait only what is left of those seconds. The start
        goes on in the background whatever its callers do (give up, are cancelled)."""
        if self.state == "new":
            self.state = "starting"
            self._starting = asyncio.create_task(self._start_or_kill(self.config.start_timeout))
            self._starting.add_done_callback(lambda t: t.cancelled() or t.exception())
        starting = self._starting
        if self.state == "starting" and starting is not None:
            if wait is None:
                await asyncio.wait([starting])  # asyncio.wait never cancels what it waits for
            else:
                loop = asyncio.get_running_loop()
                if self.wait_until is None:
                    self.wait_until = loop.time() + wait
                left = self.wait_until - loop.time()
                if left > 0:
                    await asyncio.wait([starting], timeout=left)
                if not starting.done():
                    if not self._late:
                        self._late = True
                        log.info("language server %s is still starting after %g s; language requests answer so "
                                 "until it has started", self.describe(), wait)
                    raise StillStarting(self, wait)
            if starting.cancelled():
                raise LanguageFeatureError(f"language server `{self.name}` was stopped while starting")
            await starting  # done: why it failed, if it did
        if self.state != "running":
            raise LanguageFeatureError(f"language server {self.describe()} is not running{self._last_words()}")

    async def _start_or_kill(self, timeout: float) -> None:
        try:
            await self._start(timeout)
        except BaseException as e:
            if self.pid is not None and not self._closing:  # ours to kill: its exit code will say nothing
                self.failure = str(e).removeprefix(f"language server `{self.name}` ") or type(e).__name__
            await self._kill()
            self.state = "stopped"
            raise
        self.state = "running"
        self.ran = True

    async def _start(self, timeout: float) -> None:
        executable = find_command(self.config.command[0], self.root)
        if executable is None:
            raise LanguageFeatureError(f"language server `{self.name}`: command `{self.config.command[0]}` "
                                       "was not found")
        command, args = dying_with_us(executable, list(self.config.command[1:]))
        self.client = client = SidecarClient(self._exited)
        self._register(client)
        await client.start_io(command, *args, cwd=str(self.root), start_new_session=True,
                              env=command_env(dict(os.environ)))
        assert client.process is not None and client.process.stderr is not None
        self._drain_task = asyncio.create_task(self._drain(client.process.stderr))
        self._tasks.append(self._drain_task)
        root_uri = self.root.as_uri()
        result = await self.request("initialize", {
            "processId": os.getpid(),
            "clientInfo": {"name": "agent-lsp"},
            "rootUri": root_uri,
            "rootPath": str(self.root),
            "workspaceFolders": [{"uri": root_uri, "name": self.root.name}],
            "initializationOptions": self.config.initialization_options,
            "capabilities": self._capabilities(),
        }, timeout, " (its `startTimeout`)")
        capabilities = (result or {}).get("capabilities") or {}
        info = (result or {}).get("serverInfo")
        self.server_name = str(info.get("name") or "") if isinstance(info, dict) else ""
        self.encoding = encoding_name(capabilities.get("positionEncoding"))
        self.methods |= methods_of(capabilities)
        client.plain.notify("initialized", {})
        if self.config.settings:
            client.plain.notify("workspace/didChangeConfiguration", {"settings": self.config.settings})
        log.info("language server %s started for %s (%s)", self.describe(), self.root, self.encoding)

    def _capabilities(self) -> dict[str, Any]:
        return {
            "general": {"positionEncodings": list(self.encodings)},
            "window": {"workDoneProgress": True},  # progress is how a server says it is still indexing
            "experimental": {"serverStatusNotification": True},  # rust-analyzer's way
            "workspace": {
                "configuration": True, "workspaceFolders": True, "applyEdit": False,
                "didChangeWatchedFiles": {"dynamicRegistration": False},
                "symbol": {"symbolKind": _SYMBOL_KINDS},
                "workspaceEdit": {"documentChanges": True, "resourceOperations": ["create", "rename", "delete"]},
            },
            "textDocument": {
                "synchronization": {"didSave": False, "willSave": False},
                "definition": {"linkSupport": False}, "typeDefinition": {"linkSupport": False},
                "implementation": {"linkSupport": False}, "references": {},
                "hover": {"contentFormat": ["markdown", "plaintext"]},
                "documentSymbol": {"hierarchicalDocumentSymbolSupport": True, "symbolKind": _SYMBOL_KINDS},
                "callHierarchy": {}, "rename": {"prepareSupport": True},
            },
        }

    def _register(self, client: SidecarClient) -> None:
        """The requests a server may send its client, answered."""

        @client.feature("workspace/configuration")
        def configuration(params: Any) -> list[Any]:
            items = params.get("items", []) if isinstance(params, dict) else []
            return [_section(self.config.settings, item.get("section") if isinstance(item, dict) else None)
                    for item in items]

        @client.feature("workspace/workspaceFolders")
        def folders(params: Any) -> list[dict[str, str]]:
            return [{"uri": self.root.as_uri(), "name": self.root.name}]

        @client.feature("client/registerCapability")
        def register(params: Any) -> None:
            for reg in (params or {}).get("registrations", []):
                method = reg.get("method")
                if method == "textDocument/prepareCallHierarchy":
                    self.methods |= {method, "callHierarchy/incomingCalls", "callHierarchy/outgoingCalls"}
                elif method in LANGUAGE_METHODS:
                    self.methods.add(method)
                    options = reg.get("registerOptions") or {}
                    if method == "textDocument/rename" and options.get("prepareProvider"):
                        self.methods.add("textDocument/prepareRename")

        @client.feature("client/unregisterCapability")
        def unregister(params: Any) -> None:
            for reg in (params or {}).get("unregisterations", []):
                self.methods.discard(reg.get("method"))

        for method in ("window/workDoneProgress/create", "window/showMessageRequest", "window/showDocument",
                       "workspace/semanticTokens/refresh", "workspace/codeLens/refresh",
                       "workspace/inlayHint/refresh", "workspace/inlineValue/refresh",
                       "workspace/diagnostic/refresh", "workspace/foldingRange/refresh"):
            client.feature(method)(lambda params: None)

        @client.feature("$/progress")
        def progress(params: Any) -> None:
            value = params.get("value") if isinstance(params, dict) else None
            if not isinstance(value, dict) or not isinstance(params.get("token"), (str, int)):
                return
            token = params["token"]
            if value.get("kind") == "begin":
                self.progressed = True
                self.progress[token] = (str(value.get("title") or ""), str(value.get("message") or ""))
            elif value.get("kind") == "report" and token in self.progress and value.get("message"):
                self.progress[token] = (self.progress[token][0], str(value["message"]))
            elif value.get("kind") == "end":
                self.progress.pop(token, None)

        @client.feature("experimental/serverStatus")
        def server_status(params: Any) -> None:
            if isinstance(params, dict) and isinstance(params.get("quiescent"), bool):
                self.status = (params["quiescent"], str(params.get("message") or ""))

        @client.feature("workspace/applyEdit")
        def apply_edit(params: Any) -> dict[str, Any]:  # edits go through the agent's own tools, never the server
            return {"applied": False, "failureReason": "agent-lsp applies no edits for a language server"}

    async def _drain(self, stream: asyncio.StreamReader) -> None:
        """Read the server's stderr (a full pipe would stall it), keeping its last lines."""
        while line := await stream.readline():
            text = line.decode("utf-8", "replace").rstrip()
            if text:
                self.stderr.append(text)
                log.debug("%s: %s", self.name, text)

    async def _stderr_read(self) -> None:
        """Wait (briefly) for the rest of a dead server's stderr: its last words explain why."""
        if self._drain_task is not None:
            await asyncio.wait([self._drain_task], timeout=1.0)

    def _last_words(self) -> str:
        return f" (it said: {self.stderr[-1][:200]})" if self.stderr else ""

    def _exited(self, returncode: Optional[int]) -> None:
        self.state = "stopped"
        if not self._closing:
            log.info("language server %s exited with %s%s", self.describe(), returncode, self._last_words())
            self._on_exit(self, returncode)

    async def stop(self) -> None:
        """shutdown and exit, then kill what is left; nothing pending afterwards."""
        self._closing = True
        if self._starting is not None and not self._starting.done():
            self._starting.cancel()
            await asyncio.gather(self._starting, return_exceptions=True)
        process = self.client.process if self.client else None
        if process is not None and process.returncode is None and self.state == "running":
            try:
                await self.request("shutdown", None, STOP_WAIT)
                self.client.plain.notify("exit", None)  # type: ignore[union-attr]
                async with asyncio.timeout(STOP_WAIT):  # not wait_for (models/retry.py says why)
                    await process.wait()
            except (LanguageFeatureError, TimeoutError):
                pass
        await self._kill()
        self.state = "stopped"

    async def _kill(self) -> None:
        process = self.client.process if self.client else None
        if process is not None and process.returncode is None:
            try:
                kill_group(process)
            except (ProcessLookupError, PermissionError):
                process.kill()
            await process.wait()
        if self.client is not None:
            await self.client.finished()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    # ---- requests ----------------------------------------------------------------------------------------

    async def request(self, method: str, params: Any, timeout: float, why: str = "") -> Any:
        """One request, bounded by `timeout` (the error says `why` that bound); a timeout or a cancelled caller
        sends $/cancelRequest."""
        assert self.client is not None
        if self.state == "stopped":  # gone between its start and this request: nothing would answer
            raise LanguageFeatureError(f"language server `{self.name}` stopped{self._last_words()}")
        protocol = self.client.plain
        msg_id = str(uuid.uuid4())
        future = asyncio.wrap_future(protocol.send_request(method, params, msg_id=msg_id))
        try:
            async with asyncio.timeout(timeout):  # not wait_for (models/retry.py says why)
                return await future
        except TimeoutError:
            raise LanguageFeatureError(f"language server `{self.name}` did not answer {method} "
                                       f"within {timeout:g} s{why}") from None
        except JsonRpcException as e:
            raise LanguageFeatureError(f"language server `{self.name}` answered {method} with an error: "
                                       f"{e.message}") from None
        except RuntimeError:  # pygls: the process exited with the request pending
            await self._stderr_read()
            raise LanguageFeatureError(f"language server `{self.name}` stopped while answering {method}"
                                       f"{self._last_words()}") from None
        finally:
            if future.cancelled() or not future.done():
                protocol.abandon(msg_id)

    async def ask(self, method: str, params: dict[str, Any], path: Optional[Path], timeout: float) -> Any:
        """A LANGUAGE_METHODS request with positions in characters, answered with positions in characters."""
        uri = path.as_uri() if path else None
        texts = Texts(self.documents.texts())
        if self.encoding != "utf-32":
            params = await asyncio.to_thread(convert, params, uri, self.encoding, texts.line, True)
        result = await self.request(method, params, timeout)
        if result is not None and self.encoding != "utf-32":
            result = await asyncio.to_thread(convert, result, uri, self.encoding, texts.line, False)
        if method == "textDocument/rename" and isinstance(result, dict):
            self._editor_versions(result)
        return result

    def _editor_versions(self, edit: dict[str, Any]) -> None:
        """A rename's document versions are the server's count of what it was sent: given as the editor's version
        of the buffer the edit was computed on (null for a file not open in the editor), as the editor would."""
        for change in edit.get("documentChanges") or []:
            document = change.get("textDocument") if isinstance(change, dict) else None
            path = uri_to_path(document["uri"]) if isinstance(document, dict) and "uri" in document else None
            if path is not None:
                document["version"] = self.documents.editor_version(path)

    async def sync(self, editor: Buffers, asked: Optional[Path], language: str) -> None:
        """Make the server see the editor's buffers and the files on disk as they are now (documents.py), and
        know of the files that changed on disk since it was last told."""
        await self._tell_disk()
        await self.documents.sync(editor, asked, language)

    def disk_changed(self, paths: Optional[list[Path]]) -> None:
        """Files changed on disk (None: which is not known, as after a command): told before the next request."""
        if paths is None:
            self.disk_unknown = self.told_at if self.disk_unknown is None else self.disk_unknown
        else:
            self.changed_on_disk |= {p for p in paths if p == self.root or self.root in p.parents}

    async def _tell_disk(self) -> None:
        """workspace/didChangeWatchedFiles for what changed on disk since it was last told (after a command: the
        files of its languages modified since, looked for in a thread)."""
        now = time.time_ns()
        if self.disk_unknown is not None:
            since, self.disk_unknown = self.disk_unknown, None
            shown = [p for p, d in self.documents.by_path.items() if not d.from_editor]

            def look() -> set[Path]:  # the files written since, and those it was shown that are gone
                written = modified_since(self.root, extensions(self.config), since)
                return {*written, *(p for p in shown if not p.exists())}

            self.changed_on_disk |= await asyncio.to_thread(look)
        if not self.changed_on_disk:
            return
        changed, self.changed_on_disk = sorted(self.changed_on_disk), set()
        gone = await asyncio.to_thread(lambda: {p for p in changed if not p.exists()})
        self._notify("workspace/didChangeWatchedFiles", {"changes": [
            {"uri": p.as_uri(), "type": 3 if p in gone else 2} for p in changed]})
        self.told_at = now

    def _notify(self, method: str, params: Any) -> None:
        if self.client is not None:
            self.client.plain.notify(method, params)
