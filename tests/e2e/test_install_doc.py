"""docs/install.md run as written: every fenced block it names (```lang name) is read from the page and run by its
editor in a fresh home directory holding a release's files (`python -m release --skip-vsix`), with no `agent-lsp`
on PATH and no key: Neovim's lazy.nvim spec and init.lua in headless Neovim, Emacs's init and install in batch
Emacs, each then asked the page's first question of the demo model; Zed's two settings.json entries parsed and
their exact command started over ACP with the SDK's client, the demo answering one and the scripted Messages API
(a real provider) the other. The VS Code block is run by client-vscode/test/e2e-bundled.mjs (code-server)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import acp
import pytest
from acp import schema

from agent_lsp import __version__
from tests.e2e.acp_client import LIMIT, RecordingClient
from tests.fakes.messages_api import FakeMessagesAPI

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "install.md"
FENCE = re.compile(r"^([ \t]*)```(\w+) ([\w-]+)\n(.*?)^\1```$", re.M | re.S)
BLOCKS = {"vscode-install", "neovim-extract", "neovim-lazy", "neovim-init", "neovim-chat", "emacs-init",
          "emacs-install", "emacs-chat", "zed-demo", "zed-provider"}
APP_PY = 'def greet(name):\n    return "hi " + name\n'
QUESTION = "What does app.py do?"
INSTALL_CEILING = 600  # a venv and pip install of the server and its dependencies (pip's cache or the index)
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
NVIM011 = CACHE / "agent-lsp-client-tests/nvim-0.11.4/bin/nvim"  # where client-nvim/tests/run.sh installs it


def blocks() -> dict[str, str]:
    """The named fenced blocks of docs/install.md, each unindented, by name."""
    found: dict[str, str] = {}
    for match in FENCE.finditer(DOC.read_text()):
        indent, _, name, body = match.groups()
        assert name not in found, f"two blocks named {name}"
        found[name] = "".join(line[len(indent):] if line.startswith(indent) else line
                              for line in body.splitlines(keepends=True))
    return found


def test_every_block_of_the_page_is_run_here():
    """A block added to the page, or one renamed, must come with the test that runs it."""
    assert set(blocks()) == BLOCKS
    text = DOC.read_text()
    named = set(re.findall(r"(?:agent-lsp-vscode|agent-lsp-nvim|agent_lsp_server)-(\d+\.\d+\.\d+)", text))
    assert named == {__version__}, f"docs/install.md names versions {named}; the release is {__version__}"


@pytest.fixture(scope="module")
def release_home(tmp_path_factory) -> Path:
    """A home directory holding the release's files, as a user who downloaded them has it."""
    home = tmp_path_factory.mktemp("home")
    built = subprocess.run([sys.executable, "-m", "release", "--skip-vsix", "--out", str(home)], cwd=ROOT,
                           capture_output=True, text=True, timeout=INSTALL_CEILING)
    assert built.returncode == 0, built.stdout + built.stderr
    (home / "project").mkdir()
    (home / "project" / "app.py").write_text(APP_PY)
    return home


def user_env(home: Path) -> dict[str, str]:
    """A new user's environment: this home, no agent-lsp on PATH, no key, no model setting, no state yet."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "OPENAI_", "AGENT_LSP_", "XDG_"))
           and k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    path = [d for d in env["PATH"].split(os.pathsep) if d and not (Path(d) / "agent-lsp").exists()]
    # pip's cache stays the machine's (the installs would otherwise download every dependency again)
    env.update(HOME=str(home), PATH=os.pathsep.join(path), AGENT_LSP_OFFLINE="1",
               PIP_CACHE_DIR=os.environ.get("PIP_CACHE_DIR") or str(Path.home() / ".cache" / "pip"))
    assert shutil.which("agent-lsp", path=env["PATH"]) is None
    return env


def run_sh(block: str, home: Path) -> None:
    done = subprocess.run(["bash", "-euc", block], cwd=home, env=user_env(home), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, f"{block}\n{done.stdout}{done.stderr}"


# -- Neovim ----------------------------------------------------------------------------------------------------------

NVIM_HARNESS = """
-- lazy.nvim cannot be installed here (no package registry ships it and its repository is out of reach), so this
-- does with the spec what lazy.nvim does with a local `dir` plugin: adds the folder to the runtimepath and sources
-- its plugin/ files, calls require(main).setup(opts), then runs `build` (a string starting with ':' is an Ex
-- command) -- lazy.nvim's build task loads the plugin (and its config) before it builds.
-- With no spec (spec_file ''), Neovim has loaded ~/.config/nvim/init.lua and the plugin files itself.
local out, spec_file, chat_line, project = unpack(vim.fn.json_decode(vim.env.INSTALL_DOC_ARGS))
local notes, failure = {}, nil
vim.notify = function(msg, level)
  table.insert(notes, msg)
  if level == vim.log.levels.ERROR then failure = msg end
end
local function wait(what, cond)
  if not vim.wait(%(ceiling)d, cond, 20) then error('timed out waiting for ' .. what) end
end
local ok, err = xpcall(function()
  if spec_file ~= '' then
    local spec = dofile(spec_file)
    local dir = vim.fn.expand(spec.dir)
    vim.opt.runtimepath:prepend(dir)
    for _, file in ipairs(vim.fn.glob(dir .. '/plugin/**/*.lua', false, true)) do
      vim.cmd('source ' .. vim.fn.fnameescape(file))
    end
    require(spec.main).setup(spec.opts)
    assert(spec.build:sub(1, 1) == ':', 'build is an Ex command')
    vim.cmd(spec.build:sub(2))
    wait(':AgentInstall', function()
      return failure or (notes[#notes] or ''):find('^agent%%-lsp: installed ')
    end)
    assert(not failure, failure)
  end
  vim.cmd('cd ' .. vim.fn.fnameescape(project))
  vim.cmd('edit app.py')
  vim.cmd((chat_line:gsub('^:', '')))
  local transcript
  wait('the chat to end', function()
    for _, buf in ipairs(vim.api.nvim_list_bufs()) do
      local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
      for _, line in ipairs(lines) do
        if line:find('^%%-%%- ') then transcript = table.concat(lines, '\\n') return true end
      end
    end
  end)
  vim.fn.writefile(vim.split(vim.fn.json_encode({ transcript = transcript, notes = notes,
    cmd = require('agent_lsp.config').options.cmd }), '\\n'), out)
end, debug.traceback)
if not ok then vim.fn.writefile(vim.split(vim.fn.json_encode({ error = err, notes = notes }), '\\n'), out) end
vim.cmd('qa!')
"""


def run_neovim(home: Path, spec_file: str) -> dict:
    """Neovim started as the user starts it (with a spec: as lazy.nvim would load it, -u NONE and the harness
    doing lazy.nvim's part; without: ~/.config/nvim/init.lua and the plugins, as any start), then the harness."""
    nvim = str(NVIM011) if NVIM011.exists() else shutil.which("nvim")
    if nvim is None:
        pytest.skip("Neovim is not installed (tests/run.sh and client-nvim/tests/run.sh install it)")
    harness = home / "harness.lua"
    harness.write_text(NVIM_HARNESS % {"ceiling": INSTALL_CEILING * 1000})
    out = home / "neovim.json"
    out.unlink(missing_ok=True)
    env = user_env(home)
    env["INSTALL_DOC_ARGS"] = json.dumps([str(out), spec_file, blocks()["neovim-chat"].strip(), str(home / "project")])
    start = ["-u", "NONE"] if spec_file else []
    done = subprocess.run([nvim, "--headless", *start, "-i", "NONE", "-n", "-c", f"luafile {harness}"],
                          env=env, capture_output=True, text=True, timeout=INSTALL_CEILING + 120,
                          stdin=subprocess.DEVNULL)
    assert out.exists(), done.stdout + done.stderr
    result = json.loads(out.read_text())
    assert "error" not in result, result
    return result


def test_neovim_lazy_spec_then_init_lua(release_home):
    home = release_home
    page = blocks()
    run_sh(page["neovim-extract"], home)
    assert (home / "agent-lsp.nvim" / "plugin" / "agent_lsp.lua").is_file()
    spec = home / ".config" / "nvim" / "lua" / "plugins" / "agent-lsp.lua"
    spec.parent.mkdir(parents=True)
    spec.write_text(page["neovim-lazy"])
    venv = home / ".local" / "share" / "nvim" / "agent-lsp" / "venv"

    lazy = run_neovim(home, str(spec))
    installed = (f"agent-lsp: installed agent-lsp-server {__version__} (protocol 1) in {venv}; "
                 ":checkhealth agent_lsp checks it")
    assert lazy["notes"][-1] == installed, lazy["notes"]
    assert lazy["cmd"] == [str(venv / "bin" / "agent-lsp")]
    transcript = lazy["transcript"]
    assert QUESTION in transcript and "defines `greet`" in transcript and "\n-- done (" in transcript, transcript

    # The plain way, in the same home: init.lua's two lines find the server :AgentInstall put there.
    init = home / ".config" / "nvim" / "init.lua"
    init.write_text(page["neovim-init"])
    plain = run_neovim(home, "")
    assert plain["cmd"] == [str(venv / "bin" / "agent-lsp")]
    assert "defines `greet`" in plain["transcript"] and "\n-- done (" in plain["transcript"], plain["transcript"]


# -- Emacs -----------------------------------------------------------------------------------------------------------

EMACS_HARNESS = """
(let ((args (json-read-from-string (getenv "INSTALL_DOC_ARGS")))
      (result nil))
  (condition-case err
      (let ((end (+ (float-time) %(ceiling)d)))
        (load (aref args 1) nil t)                        ; ~/.emacs.d/init.el, as Emacs loads it at start
        (eval (car (read-from-string (concat "(progn " (aref args 2) ")"))) t)   ; the install
        (while (not agent-lsp--install-result)
          (when (> (float-time) end) (error "Timed out waiting for agent-lsp-install"))
          (accept-process-output nil 0.1))
        (unless (eq agent-lsp--install-result 'ok) (error "agent-lsp-install: %%s" agent-lsp--install-result))
        (find-file (expand-file-name "app.py" (aref args 3)))
        (eval (car (read-from-string (concat "(progn " (aref args 4) ")"))) t)   ; the first chat
        (while agent-lsp--busy
          (when (> (float-time) end) (error "Timed out waiting for the chat"))
          (accept-process-output nil 0.05))
        (setq result (list (cons 'transcript (with-current-buffer "*agent-lsp*" (buffer-string)))
                           (cons 'command (agent-lsp-server-command))
                           (cons 'mode (and agent-lsp-mode t)))))
    (error (setq result (list (cons 'error (error-message-string err))))))
  (with-temp-file (aref args 0) (insert (json-encode result)))
  (ignore-errors (agent-lsp-shutdown-all))
  (kill-emacs 0))
"""


def test_emacs_init_install_and_first_chat(release_home):
    emacs = shutil.which("emacs")
    if emacs is None:
        pytest.skip("Emacs is not installed (tests/run.sh installs it)")
    home = release_home
    page = blocks()
    (home / "agent-lsp").mkdir(exist_ok=True)
    checkout = home / "agent-lsp" / "client-emacs"  # "a checkout of agent-lsp (here in ~/agent-lsp)"
    if not checkout.exists():
        checkout.symlink_to(ROOT / "client-emacs")
    init = home / ".emacs.d" / "init.el"
    init.parent.mkdir(parents=True)
    init.write_text(page["emacs-init"])
    harness = home / "harness.el"
    harness.write_text(EMACS_HARNESS % {"ceiling": INSTALL_CEILING})
    out = home / "emacs.json"
    env = user_env(home)
    env["INSTALL_DOC_ARGS"] = json.dumps([str(out), str(init), page["emacs-install"], str(home / "project"),
                                          page["emacs-chat"]])
    done = subprocess.run([emacs, "--batch", "-l", "json", "-l", str(harness)], env=env, capture_output=True,
                          text=True, timeout=INSTALL_CEILING + 120, stdin=subprocess.DEVNULL)
    assert out.exists(), done.stdout + done.stderr
    result = json.loads(out.read_text())
    assert "error" not in result, (result, done.stderr[-3000:])
    venv = home / ".emacs.d" / "agent-lsp" / "venv"
    assert result["command"] == [str(venv / "bin" / "agent-lsp")], result
    assert result["mode"] is True, "agent-lsp-global-mode turned agent-lsp-mode on in app.py's buffer"
    transcript = result["transcript"]
    assert transcript.startswith(f"> {QUESTION}\n"), transcript
    assert "defines `greet`" in transcript and "Error" not in transcript, transcript


# -- Zed (ACP) -------------------------------------------------------------------------------------------------------

async def zed_first_chat(entry: dict, env: dict[str, str], project: Path) -> tuple[str, str]:
    """What Zed does with an agent_servers entry: start `command args` in `env`, initialize, a new session in the
    project, one prompt; the answer's text and stop reason."""
    program = shutil.which(entry["command"], path=env["PATH"])
    assert program is not None, f"{entry['command']} is on PATH"
    process = await asyncio.create_subprocess_exec(program, *entry["args"], stdin=asyncio.subprocess.PIPE,
                                                   stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                                                   env={**env, **entry.get("env", {})}, cwd=project, limit=LIMIT)
    client = RecordingClient({str(project / "app.py"): APP_PY})
    conn = acp.connect_to_agent(client, process.stdin, process.stdout)
    try:
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION, client_capabilities=schema.ClientCapabilities(
            fs=schema.FileSystemCapabilities(read_text_file=True, write_text_file=True)),
            client_info=schema.Implementation(name="zed", version="0"))
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        answer = await conn.prompt(session_id=session.session_id,
                                   prompt=[schema.TextContentBlock(type="text", text=QUESTION)])
        text = "".join(u.content.text for u in client.updates
                       if getattr(u, "session_update", "") == "agent_message_chunk" and hasattr(u.content, "text"))
        return text, answer.stop_reason
    finally:
        process.stdin.close()
        await asyncio.wait_for(process.wait(), 60)
        await conn.close()


def zed_entry(name: str) -> dict:
    entry = json.loads(blocks()[name])["agent_servers"]["agent-lsp"]
    assert entry["type"] == "custom" and "env" not in entry, "the key comes from Zed's environment, never the file"
    return entry


def test_zed_demo_entry_answers_with_no_key(tmp_path):
    entry = zed_entry("zed-demo")
    env = user_env(tmp_path)
    env["PATH"] = os.pathsep.join([str(Path(shutil.which("agent-lsp")).parent), env["PATH"]])  # as pipx put it there
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text(APP_PY)
    text, stop = asyncio.run(zed_first_chat(entry, env, project))
    # ACP tells the agent of no open buffer or active file (the demo's material), so the demo says what it found
    assert stop == "end_turn"
    assert f"You asked: “{QUESTION}”. Here is what I found in your editor (demo model, no API call)." in text, text


def test_zed_provider_entry_uses_the_key_of_zeds_environment(tmp_path):
    entry = zed_entry("zed-provider")
    assert "--model" not in entry["args"]
    reply = "app.py defines greet(name), which says hi."
    api = FakeMessagesAPI([{"content": [{"type": "text", "text": reply}]}]).start()
    try:
        env = user_env(tmp_path)
        env["PATH"] = os.pathsep.join([str(Path(shutil.which("agent-lsp")).parent), env["PATH"]])
        env.update(ANTHROPIC_API_KEY="sk-ant-from-zeds-environment", ANTHROPIC_BASE_URL=api.base_url)
        project = tmp_path / "project"
        project.mkdir()
        (project / "app.py").write_text(APP_PY)
        text, stop = asyncio.run(zed_first_chat(entry, env, project))
    finally:
        api.stop()
    assert (text, stop) == (reply, "end_turn")
    assert api.requests[0]["model"] == "claude-sonnet-5-5"
