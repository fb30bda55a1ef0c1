"""The editor snippets of docs/acp.md, read from the page: each evaluated by its editor's own language (JSON; Lua
in headless Neovim with CodeCompanion's two entry points recorded; Emacs Lisp in Emacs with acp.el's
`acp-make-client` recorded), and the command it gives started as that editor would, with and without a key in the
environment: it answers ACP's initialize and session/new, and never receives a key the snippet made up."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "acp.md"
CEILING = 60


def snippet(heading: str, language: str) -> str:
    """The first ```language block after `### heading` in docs/acp.md."""
    text = DOC.read_text()
    section = text[text.index(f"### {heading}\n"):]
    return re.search(rf"```{language}\n(.*?)```", section, re.S).group(1)


def zed() -> tuple[list[str], dict[str, str]]:
    entry = json.loads(snippet("Zed", "json"))["agent_servers"]["agent-lsp"]
    assert entry["type"] == "custom"
    return [entry["command"], *entry["args"]], entry.get("env", {})


def codecompanion(tmp_path: Path) -> tuple[list[str], dict[str, str]]:
    nvim = shutil.which("nvim")
    if nvim is None:
        pytest.skip("Neovim is not installed (tests/run.sh installs it)")
    (tmp_path / "snippet.lua").write_text(snippet("Neovim: CodeCompanion", "lua"))
    out = tmp_path / "adapter.json"
    (tmp_path / "run.lua").write_text(f"""
local adapter
package.preload['codecompanion.adapters'] = function()
  return {{ extend = function(base, opts) opts.base = base return opts end }}
end
package.preload['codecompanion'] = function()
  return {{ setup = function(config)
    adapter = config.adapters.acp[config.strategies.chat.adapter]()
  end }}
end
dofile({json.dumps(str(tmp_path / 'snippet.lua'))})
vim.fn.writefile({{ vim.fn.json_encode({{ cmd = adapter.commands.default, env = adapter.env, base = adapter.base }}) }},
  {json.dumps(str(out))})
""")
    done = subprocess.run([nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {tmp_path}/run.lua",
                           "-c", "qa!"], capture_output=True, text=True, timeout=CEILING, stdin=subprocess.DEVNULL)
    assert out.exists(), done.stderr
    adapter = json.loads(out.read_text())
    assert adapter["base"] == "gemini_cli"
    env = adapter["env"] or {}
    return adapter["cmd"], {} if env == [] else env


def agent_shell(tmp_path: Path) -> tuple[list[str], dict[str, str]]:
    emacs = shutil.which("emacs")
    if emacs is None:
        pytest.skip("Emacs is not installed (tests/run.sh installs it)")
    out = tmp_path / "client.json"
    program = (f"(progn (require 'json) (defun acp-make-client (&rest args) (with-temp-file {json.dumps(str(out))} "
               "(insert (json-encode (cons (plist-get args :command) (plist-get args :command-params))))))"
               f" {snippet('Emacs: agent-shell', 'elisp')})")
    done = subprocess.run([emacs, "--batch", "--eval", program], capture_output=True, text=True, timeout=CEILING)
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text()), {}


def acp_exchange(command: list[str], env: dict[str, str], cwd: Path) -> list[dict]:
    """initialize, then session/new, over the command's stdio; the two answers."""
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}}}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(cwd), "mcpServers": []}},
    ]
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=env, cwd=cwd, text=True)
    answers = []
    try:
        for request in requests:
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
            while True:
                message = json.loads(process.stdout.readline())
                if message.get("id") == request["id"] and "method" not in message:
                    answers.append(message)
                    break
    finally:
        process.stdin.close()
        process.wait(timeout=CEILING)
        process.stdout.close()
        process.stderr.close()
    return answers


@pytest.mark.parametrize("editor", ["zed", "codecompanion", "agent-shell"])
@pytest.mark.parametrize("key", [None, "sk-ant-from-the-environment"])
def test_the_documented_snippet_starts_an_acp_agent(editor, key, tmp_path):
    command, snippet_env = {"zed": lambda: zed(), "codecompanion": lambda: codecompanion(tmp_path),
                            "agent-shell": lambda: agent_shell(tmp_path)}[editor]()
    assert command == ["agent-lsp", "--acp"]
    assert snippet_env == {}, "the key comes from the editor's environment, never from the snippet"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "AGENT_LSP_"))}
    env.update(XDG_STATE_HOME=str(tmp_path / "state"), AGENT_LSP_OFFLINE="1", **({"ANTHROPIC_API_KEY": key} if key else {}))
    program = shutil.which(command[0], path=env.get("PATH"))
    assert program is not None, "agent-lsp is on PATH (pip install -e .)"
    initialized, session = acp_exchange([program, *command[1:]], env, tmp_path)
    assert initialized["result"]["protocolVersion"] == 1, initialized
    assert initialized["result"]["agentInfo"]["name"] == "agent-lsp-server", initialized
    assert isinstance(session["result"]["sessionId"], str), session
