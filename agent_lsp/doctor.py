"""`agent-lsp doctor`: checks what agent-lsp needs on this machine and says how to fix what fails.

Each check gives a status ("ok", "fail" or "skip"), what it found, and the fix when it failed. Nothing here writes
outside the data directory's own probe file, nor prints a key's value: only which keys are present.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sqlite3
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Mapping, Optional
from urllib.parse import urlparse

from agent_lsp import DISTRIBUTION, __version__
from agent_lsp.capabilities import PROTOCOL_VERSION
from agent_lsp.config import Layers, Settings, clean, default_data_dir, environment_layer
from agent_lsp.config.in_force import SettingsInForce
from agent_lsp.config.user_file import UserSettingsFile, user_settings_path
from agent_lsp.models.resolver import KEYS, ModelChoice, offline_refuses, resolve, resolve_completions

CONNECT_TIMEOUT = 5.0
"""Seconds the base URL's host may take to accept a connection before it counts as unreachable."""


@dataclass(frozen=True)
class Check:
    """One line of the report."""

    name: str
    status: str
    """"ok", "fail", or "skip" (does not apply here)."""
    detail: str
    fix: str = ""


def user_settings_file(env: Mapping[str, str] = os.environ) -> Path:
    """<XDG_CONFIG_HOME or ~/.config>/agent-lsp/settings.json."""
    return user_settings_path(env)


def read_settings(cli_model: Optional[str], env: Mapping[str, str] = os.environ,
                  editor: Any = None) -> tuple[Settings, list[str]]:
    """The settings the server would start with (the user settings file, then the environment and --model, then
    an editor's initializationOptions `editor` over them, as config's layers stack them), and a warning for each
    thing that could not be read."""
    environment, bad_env = clean(environment_layer(cli_model, env), "the environment")
    given, bad_editor = clean(editor, "--settings")
    warnings: list[str] = []
    in_force = SettingsInForce(Layers(environment=environment, initialization_options=given), warnings.extend,
                               user_file=UserSettingsFile(user_settings_file(env)))
    return in_force.current([]), warnings + bad_env + bad_editor


def check_python() -> Check:
    import agent_lsp

    version = ".".join(map(str, sys.version_info[:3]))
    where = f"Python {version} at {sys.executable}; agent_lsp from {Path(agent_lsp.__file__).parent}"
    if sys.version_info < (3, 11):
        return Check("python", "fail", where, "agent-lsp needs Python 3.11 or newer: reinstall it with one "
                     "(pipx install --python python3.11 agent-lsp-server).")
    return Check("python", "ok", where)


def check_version() -> Check:
    return Check("version", "ok", f"{DISTRIBUTION} {__version__} (protocol {PROTOCOL_VERSION})")


def check_settings(warnings: list[str], env: Mapping[str, str]) -> Check:
    path = user_settings_file(env)
    found = f"user settings {path}" if path.exists() else f"no user settings file ({path})"
    if warnings:
        return Check("settings", "fail", f"{found}: " + "; ".join(warnings),
                     f"Correct {path} (a JSON object of agentLsp settings, e.g. {{\"model\": \"demo\"}}).")
    return Check("settings", "ok", found)


def check_keys(settings: Settings, env: Mapping[str, str]) -> Check:
    present = [name for names in KEYS.values() for name in names if env.get(name)]
    found = f"present: {', '.join(present)}" if present else "no provider key in the environment"
    choice = resolve(settings, env)
    if choice.provider in ("demo", "scripted"):
        return Check("keys", "ok", f"{found}; the demo model needs none")
    if choice.lacks not in ("provider", "key"):
        return Check("keys", "ok", f"{found}; provider {choice.provider}")
    needed = "OPENAI_API_KEY (or the `baseUrl` setting of a local server)" if choice.provider == "openai" \
        else "ANTHROPIC_API_KEY"
    return Check("keys", "fail", found,
                 f"Set {needed} in the environment your editor starts agent-lsp with, or try the offline demo "
                 "model (`agent-lsp demo`, or the `model` setting \"demo\").")


def check_base_url(settings: Settings, env: Mapping[str, str]) -> Check:
    choice = resolve(settings, env)
    if choice.endpoint is None:  # demo, scripted, or no provider
        return Check("base URL", "skip", "no remote model is configured")
    return Check("base URL", *_probe(choice.endpoint, env, "`baseUrl` (or the provider's *_BASE_URL variable)"))


def _probe(url: str, env: Mapping[str, str], setting: str) -> tuple[str, str, str]:
    """(status, detail, fix) of whether `url` accepts a TCP connection; `setting` names where the URL is set."""
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        return "fail", f"{url} is not an http(s) URL", f"Set {setting} to an http(s) URL."
    if offline_refuses(url, env):
        return "skip", f"{url} not probed: AGENT_LSP_OFFLINE=1 allows loopback only", ""
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        with socket.create_connection((parsed.hostname, port), timeout=CONNECT_TIMEOUT):
            pass
    except OSError as e:
        return "fail", f"{url} cannot be reached ({e.strerror or e})", (
            f"Check the network (a proxy or firewall), or correct {setting}; for a local server (Ollama, vLLM, "
            "llama.cpp) start it first.")
    return "ok", f"{url} accepts connections", ""


def suggestion_model(settings: Settings, env: Mapping[str, str]) -> ModelChoice:
    """The model suggestions as you type use with these settings (the resolver's answer, as the server asks it)."""
    options = settings.completions
    return resolve_completions(settings, options.provider, options.model, options.base_url, options.api, env)


def describe_suggestions(choice: ModelChoice) -> str:
    """Which model suggests, where, with which key (its name), in a few words."""
    if choice.provider == "demo":
        return "the demo model (lines completed from the open buffers, offline)"
    if choice.provider == "scripted":
        return f"the scripted model {choice.model}"
    return (f"{choice.provider} {choice.model or '(no model)'}, api {choice.api}, at {choice.endpoint}, "
            + (f"key {choice.key}" if choice.key else "no key"))


SUGGESTIONS_OFF = " Or turn suggestions off: `completions.enabled` false."
SUGGESTION_FIXES = {
    ("key", "anthropic"): "Set ANTHROPIC_API_KEY in the environment your editor starts agent-lsp with, or choose "
                          "another `completions.provider`.",
    ("key", "openai"): "Set OPENAI_API_KEY in the environment your editor starts agent-lsp with, or "
                       "`completions.baseUrl` to a local server (Ollama, llama.cpp), which needs no key.",
    ("model", "openai"): "Set `completions.model` to the model's name as its server knows it (e.g. "
                         "\"qwen2.5-coder:1.5b-base\" on Ollama; docs/providers.md).",
    ("api", "anthropic"): "Set `completions.provider` to \"openai\" and `completions.baseUrl` to a server of the "
                          "legacy /completions shape (Ollama, llama.cpp, DeepSeek), or `completions.api` to \"chat\".",
}
"""The fix of what suggestions lack, by (what, provider)."""


def check_suggestions(settings: Settings, env: Mapping[str, str]) -> Check:
    """Suggestions as you type: on or off, which model, and what keeps them from working (the `completions`
    setting over the chat's, as the server resolves it); their base URL probed when it is not the chat's."""
    choice = suggestion_model(settings, env)
    found = describe_suggestions(choice)
    if not settings.completions.enabled:
        return Check("suggestions", "skip", f"off (`completions.enabled` is false); when on: {found}")
    if choice.lacks == "provider":  # the server is quiet then; the keys check says what to set
        return Check("suggestions", "skip", "off: no model provider is configured (see keys)")
    if choice.lacks == "loopback":  # as the base URL check: what the test suites' offline mode refuses is no fault
        return Check("suggestions", "skip", f"{found}; not asked: AGENT_LSP_OFFLINE=1 allows loopback only")
    if choice.problem:
        fix = SUGGESTION_FIXES.get((choice.lacks or "", choice.provider), choice.problem)
        return Check("suggestions", "fail", f"on: {found}; {choice.problem}", fix + SUGGESTIONS_OFF)
    if choice.endpoint is None or choice.endpoint == resolve(settings, env).endpoint:  # probed as the chat's
        return Check("suggestions", "ok", f"on: {found}")
    status, reached, fix = _probe(choice.endpoint, env, "`completions.baseUrl`")
    return Check("suggestions", "fail" if status == "fail" else "ok", f"on: {found}; {reached}",
                 fix + SUGGESTIONS_OFF if fix else "")


def check_data_dir(data_dir: Path) -> Check:
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=data_dir, prefix=".doctor-"):
            pass
    except OSError as e:
        return Check("data directory", "fail", f"{data_dir} is not writable ({e.strerror or e})",
                     "Make it a writable directory, or choose another with --data-dir (or XDG_STATE_HOME).")
    return Check("data directory", "ok", f"{data_dir} is writable")


def check_sessions_db(data_dir: Path) -> Check:
    path = data_dir / "sessions.db"
    if not path.is_file():
        return Check("sessions database", "ok", f"{path} does not exist yet (made on the first session)")
    try:
        db = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=5.0)
        try:
            rows = [r[0] for r in db.execute("PRAGMA integrity_check").fetchall()]
        finally:
            db.close()
    except sqlite3.Error as e:
        rows = [str(e)]
    if rows == ["ok"]:
        return Check("sessions database", "ok", f"{path} passes its integrity check")
    return Check("sessions database", "fail", f"{path} is damaged: {'; '.join(rows[:3])}",
                 f"Move {path} aside (agent-lsp then starts a new, empty one; the server also does this itself "
                 "when it cannot read the file).")


def check_ripgrep() -> Check:
    from agent_lsp.core.tool import ToolError
    from agent_lsp.tools.ripgrep import rg_binary

    try:
        return Check("ripgrep", "ok", f"rg at {rg_binary()}")
    except ToolError as e:
        return Check("ripgrep", "fail", str(e),
                     f"Install the `ripgrep` package into agent-lsp's environment ({sys.prefix}), e.g. "
                     "`pipx runpip agent-lsp-server install ripgrep`, or install ripgrep on PATH "
                     "(apt install ripgrep).")


def check_sandbox(settings: Settings) -> Check:
    from agent_lsp.processes import open_sandbox

    wanted = settings.sandbox
    enabled = wanted is not None and wanted.enabled
    sandbox = asyncio.run(open_sandbox([], wanted.network if enabled else False))
    can = f"{sandbox.bwrap} starts it" if sandbox.ready else f"it cannot start ({sandbox.problem})"
    if not enabled:
        return Check("sandbox", "skip", f"off (the `sandbox` setting); {can}")
    if sandbox.ready:
        return Check("sandbox", "ok", f"on, {'with' if wanted.network else 'without'} network; {can}")
    return Check("sandbox", "fail", f"on, but {can}: commands run outside it, each asked first",
                 "Install bubblewrap (apt install bubblewrap) where agent-lsp runs, or let unprivileged users make "
                 "namespaces (sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu "
                 "kernel.apparmor_restrict_unprivileged_userns=0); on macOS the sandbox is not available yet: turn "
                 "`sandbox.enabled` off.")


async def _start_mcp(name: str, config: Any) -> Check:
    from agent_lsp.mcp.servers import McpServers
    from agent_lsp.processes import dying_with_us

    warnings: list[str] = []
    servers = McpServers(warnings.append, dying_with_us)
    try:
        tools = await servers.tools({name: config}, wait=None)
    finally:
        await servers.close()
    if warnings:
        return Check(f"MCP server {name}", "fail", warnings[0].removeprefix("agent-lsp: "),
                     f"Correct `mcpServers.{name}` in your settings, or run `{config.describe()}` yourself to "
                     "see why it does not start.")
    return Check(f"MCP server {name}", "ok", f"{config.describe()} started with {len(tools)} tools")


def check_mcp(settings: Settings) -> list[Check]:
    if not settings.mcp_servers:
        return [Check("MCP servers", "skip", "none configured")]

    async def all_of() -> list[Check]:
        return list(await asyncio.gather(*(_start_mcp(n, c) for n, c in settings.mcp_servers.items())))

    return asyncio.run(all_of())


def run_checks(data_dir: Optional[Path] = None, cli_model: Optional[str] = None,
               env: Mapping[str, str] = os.environ) -> list[Check]:
    """Every check, in the order they are printed."""
    settings, warnings = read_settings(cli_model, env)
    data_dir = data_dir or default_data_dir(env)
    return [check_python(), check_version(), check_settings(warnings, env), check_keys(settings, env),
            check_base_url(settings, env), check_suggestions(settings, env), check_data_dir(data_dir),
            check_sessions_db(data_dir),
            check_ripgrep(), check_sandbox(settings), *check_mcp(settings)]


def main(data_dir: Optional[Path], cli_model: Optional[str], as_json: bool) -> int:
    """Print the report; 1 when a check failed, else 0."""
    checks = run_checks(data_dir, cli_model)
    failed = [c for c in checks if c.status == "fail"]
    if as_json:
        print(json.dumps({"ok": not failed, "version": __version__, "protocol": PROTOCOL_VERSION,
                          "checks": [{k: v for k, v in asdict(c).items() if v or k != "fix"} for c in checks]},
                         indent=2))
    else:
        width = max(len(c.name) for c in checks)
        for c in checks:
            print(f"{c.status.upper():<5} {c.name:<{width}}  {c.detail}")
            if c.fix:
                print(f"{'':<5} {'':<{width}}  fix: {c.fix}")
        print(f"{len(failed)} problem{'s' if len(failed) != 1 else ''} found" if failed else "all checks passed")
    return 1 if failed else 0


def which_model(cli_model: Optional[str], editor: Any, as_json: bool, env: Mapping[str, str] = os.environ) -> int:
    """`agent-lsp model`: print which provider, model, base URL and key chats would use with these settings, and
    suggestions as you type beside them (the resolver's answers, which the editors' health checks read); 1 when no
    chat can be had, else 0."""
    settings, warnings = read_settings(cli_model, env, editor)
    choice = resolve(settings, env)
    suggestions = suggestion_model(settings, env)
    enabled = settings.completions.enabled
    if as_json:
        print(json.dumps({**choice.as_json(), "completions": {**suggestions.as_json(), "enabled": enabled},
                          "warnings": warnings}, indent=2))
        return 1 if choice.problem else 0
    rows = [("", "chats", "suggestions" if enabled else "suggestions (off: completions.enabled)")]
    for name, field in (("provider", "provider"), ("model", "model"), ("base URL", "endpoint"), ("key", "key"),
                        ("api", "api")):
        rows.append((name, *(getattr(c, field) or "none" for c in (choice, suggestions))))
    width = max(len(row[1]) for row in rows)
    for name, chats, suggests in rows:
        print(f"{name:<9} {chats:<{width}}  {suggests}".rstrip())
    problems = [choice.problem] if choice.problem else []
    if enabled and suggestions.problem and suggestions.problem != choice.problem:
        problems.append(f"suggestions: {suggestions.problem}")
    for name, lines in (("problem", problems), ("warning", warnings)):
        for line in lines:
            print(f"{name:<9} {line}")
    return 1 if choice.problem else 0
