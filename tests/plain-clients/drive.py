"""agent-lsp through a plain LSP client nobody here wrote: Emacs (`emacs -nw`) with Debian's lsp-mode and the
recipe of docs/plain-clients.md (init.el), driven as a person would, by its own keys and commands in tmux, and read
from the screen. The model is the scripted fake Messages API (tests/fakes/messages_api.py).

Each case prints `ok` or `FAIL` (with the screen); the last line is "N passed, M failed". Every wait is for
something on the screen, with a ceiling of CEILING seconds."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from tests.fakes.messages_api import FakeMessagesAPI
from tests.waiting import until_blocking

CEILING = 60.0
SOURCE = "def greet(name):\n    return 'hi ' + (name\n"
SCRIPT = [
    # "Fix with agent" on line 2: an edit (allowed), then the answer
    {"content": [{"type": "tool_use", "name": "edit_file",
                  "input": {"path": "app.py", "old_string": "(name\n", "new_string": "name\n"}}]},
    {"content": [{"type": "text", "text": "Fixed: closed the parenthesis on line 2."}]},
    # "Explain with agent" on a selection
    {"content": [{"type": "text", "text": "It greets someone by name."}]},
    # "Refactor with agent…" on a selection: a command (rejected), then the answer
    {"content": [{"type": "tool_use", "name": "run_command", "input": {"command": "echo ran > ran.txt"}}]},
    {"content": [{"type": "text", "text": "Left it as it is."}]},
]


class Emacs:
    """emacs -nw under a tmux server of its own."""

    def __init__(self, tmp: Path, base_url: str) -> None:
        self.socket = f"agent-lsp-plain-{os.getpid()}"
        self.root, state = tmp / "ws", tmp / "state"
        self.root.mkdir()
        state.mkdir()
        (self.root / "app.py").write_text(SOURCE)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENT_LSP_", "OPENAI_", "TMUX"))}
        env.update(ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=base_url, AGENT_LSP_OFFLINE="1",
                   XDG_CONFIG_HOME=str(state / "config"), HOME=str(state), LANG="C.UTF-8", TERM="xterm-256color",
                   PLAIN_ROOT=str(self.root), PLAIN_STATE=str(state))
        emacs = ["emacs", "-nw", "-q", "-l", str(Path(__file__).with_name("init.el")), str(self.root / "app.py")]
        self.tmux("new-session", "-d", "-s", "e", "-x", "200", "-y", "50", " ".join(emacs), env=env)

    def tmux(self, *args: str, env: dict | None = None) -> str:
        return subprocess.run(["tmux", "-L", self.socket, "-f", "/dev/null", *args], check=True, env=env,
                              capture_output=True, text=True).stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "e")

    def keys(self, *keys: str) -> None:
        """Keys as tmux names them (C-n, M-x, Enter, Tab)."""
        for key in keys:
            self.tmux("send-keys", "-t", "e", key)

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", "e", "-l", text)

    def command(self, name: str) -> None:
        """M-x NAME RET. A message that lands as M-x is read can take the minibuffer back (the screen then shows
        `Quit`): M-x is pressed again, up to three times."""
        for attempt in range(3):
            self.keys("M-x")
            try:
                self.wait(lambda s: s.rstrip().splitlines()[-1] == "M-x", "M-x", 10 if attempt < 2 else CEILING)
                break
            except TimeoutError:
                self.keys("C-g")
        self.type(name)
        self.wait(lambda s: s.rstrip().splitlines()[-1] == f"M-x {name}", name)
        self.keys("Enter")

    def wait(self, predicate: Callable[[str], bool], what: str = "the screen", timeout: float = CEILING) -> str:
        def shown() -> str:
            screen = self.screen()
            return screen if predicate(screen) else ""
        return until_blocking(shown, timeout, what, every=0.1)

    def shows(self, *texts: str) -> str:
        return self.wait(lambda s: all(t in s for t in texts), " and ".join(map(repr, texts)))

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], check=False, capture_output=True)


def buffer_lines(screen: str) -> list[str]:
    """The lines of app.py's window (above its mode line), as shown."""
    lines = screen.splitlines()[1:]
    end = next(i for i, line in enumerate(lines) if " app.py " in line)
    return [line.split("|")[0].rstrip() for line in lines[:end]]


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="alp-"))
    fake = FakeMessagesAPI(list(SCRIPT)).start()
    emacs = Emacs(tmp, fake.base_url)
    results: list[tuple[str, bool]] = []

    def case(name: str, body: Callable[[], None]) -> None:
        try:
            body()
            results.append((name, True))
            print(f"ok   {name}", flush=True)
        except Exception as e:  # one case failing still lets the others report
            results.append((name, False))
            print(f"FAIL {name}: {e}\n--- screen ---\n{emacs.screen()}--------------", flush=True)

    def starts():
        emacs.wait(lambda s: re.search(r"LSP\[agent-lsp:\d+\]", s) and "return 'hi ' + (name" in s, "the server")

    def plain_line_offers_fix():
        emacs.keys("M-<", "C-n")  # line 2, nothing selected, no diagnostic anywhere
        emacs.command("lsp-execute-code-action")
        emacs.shows("Select code action:")
        emacs.keys("Tab")  # completes: the one action offered
        emacs.wait(lambda s: s.rstrip().splitlines()[-1] == "Select code action: Fix with agent", "Fix with agent")
        emacs.keys("Enter")

    def question_shows_the_diff():
        emacs.shows("agent-lsp wants to run edit_file: Edit app.py.", "-    return 'hi ' + (name",
                    "+    return 'hi ' + name", "Allow?")

    def allowed_edit_lands():
        emacs.type("Allow once")
        emacs.keys("Enter")
        emacs.wait(lambda s: buffer_lines(s)[:2] == ["def greet(name):", "    return 'hi ' + name"], "the edit")

    def answer_is_shown():
        screen = emacs.shows("agent-lsp: Fixed: closed the parenthesis on line 2. (the whole answer: ")
        path = Path(re.search(r"the whole answer: (\S+)\)", screen).group(1))
        assert path.name == "transcript.md" and "Fixed: closed the parenthesis on line 2." in path.read_text()

    def undo_restores():
        emacs.keys("C-x", "u")
        emacs.wait(lambda s: buffer_lines(s)[:2] == ["def greet(name):", "    return 'hi ' + (name"], "the undo")

    def selection_offers_three():
        emacs.keys("C-g", "M-<", "C-Space", "M->")  # the whole buffer selected
        emacs.command("lsp-execute-code-action")
        emacs.shows("Select code action:")
        emacs.keys("Tab")  # no common prefix: the completions are listed
        emacs.shows("Possible completions are:", "Fix with agent", "Explain with agent", "Refactor with agent…")
        emacs.type("Explain with agent")
        emacs.keys("Enter")

    def explanation_is_shown():
        emacs.shows("agent-lsp: It greets someone by name. (the whole answer: ")

    def command_question_then_reject():
        emacs.keys("C-g", "M-<", "C-Space", "M->")
        emacs.command("lsp-execute-code-action")
        emacs.shows("Select code action:")
        emacs.type("R")
        emacs.keys("Tab")
        emacs.wait(lambda s: s.rstrip().splitlines()[-1] == "Select code action: Refactor with agent…", "Refactor")
        emacs.keys("Enter")
        emacs.shows("agent-lsp wants to run run_command: `echo ran > ran.txt`.", "$ echo ran > ran.txt", "Allow?")
        emacs.type("Reject")
        emacs.keys("Enter")
        emacs.shows("agent-lsp: Left it as it is.")
        assert not (emacs.root / "ran.txt").exists(), "the rejected command ran"

    try:
        for name, body in [
            ("the server starts beside python-mode", starts),
            ("a plain line offers Fix with agent, and it runs a chat", plain_line_offers_fix),
            ("the confirmation shows the diff", question_shows_the_diff),
            ("Allow once: the edit lands in the buffer", allowed_edit_lands),
            ("the answer is shown, and the transcript holds it", answer_is_shown),
            ("undo takes the edit back", undo_restores),
            ("a selection offers Fix, Explain, Refactor; Explain runs", selection_offers_three),
            ("the explanation is shown", explanation_is_shown),
            ("a command's question shows its command line; Reject runs nothing", command_question_then_reject),
        ]:
            case(name, body)
    finally:
        emacs.close()
        fake.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    passed = sum(ok for _, ok in results)
    print(f"{passed} passed, {len(results) - passed} failed")
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
