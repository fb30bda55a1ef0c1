"""What the suggestion areas share: a typist over a raw server (documents opened, edited, closed; inline completions
asked and judged against PROTOCOL §10), the suggestion models' answers (the cursor's line continued to one target
line and tagged with the document's tag, so that an answer meant for another version shows), and a lane of chats
run beside it all, each checked whole (its updates in order with no gap and none lost, its answer, its history)."""

from __future__ import annotations

import asyncio
import json
import random
import re
from pathlib import Path
from typing import Any, Optional

from tests.fakes.messages_api import FakeMessagesAPI
from tests.reliability.conftest import tally
from tests.reliability.rawlsp import ANSWER_CEILING, RawServer

COMPLETION = "textDocument/inlineCompletion"
ACCEPTED = "agent.completionAccepted"
FIM_MODEL = "qwen2.5-coder:1.5b"
TARGET = "total = compute_the_total(alpha, beta, gamma)"
"""The line the suggestion models continue: typed up to any point, they answer the rest of it."""
OTHER = "value()"
"""What the suggestion models answer anywhere else."""
BOUND_SLACK = 30.0
"""Beyond `completions.timeout`, how long a suggestion may take on a loaded machine before it counts as a hang."""


# ---- the suggestion models -----------------------------------------------------------------------------------

def answer_for(prefix: str) -> str:
    """What the suggestion models answer for the text before the cursor: the rest of TARGET when the cursor's line is
    the start of it, tagged with the last `# tag: X` of the text (so a suggestion shows which version it was made
    for); OTHER anywhere else."""
    line = prefix.rsplit("\n", 1)[-1]
    tags = re.findall(r"# tag: (\w+)", prefix)
    if line and TARGET.startswith(line) and len(line) < len(TARGET):
        return TARGET[len(line):] + (f"  # {tags[-1]}" if tags else "")
    return OTHER


def expected_item_text(line: str, tag: str) -> str:
    """The suggestion the server must give at the end of `line` in a document tagged `tag`."""
    return TARGET[len(line):] + (f"  # {tag}" if tag else "")


def messages_prefix(body: dict) -> str:
    """The text before the cursor in its file, as a Messages API request for a suggestion carries it ("" for a
    request whose client went away before its body: the fakes record it as {})."""
    if not body:
        return ""
    context, hole = body["messages"][0]["content"][:2]
    file = context["text"].rsplit("\n<file path=", 1)[-1].split("\n", 1)[1]  # not the other buffers' snippets
    return file + hole["text"].split("<hole/>", 1)[0]


def fim_prefix(body: dict) -> str:
    return body.get("prompt", "")


def messages_says(text: str, **extra: Any) -> dict:
    """A Messages API reply suggesting `text`, in the wrapper the hole prompt asks for."""
    return {"content": [{"type": "text", "text": f"<completion>{text}</completion>"}], **extra}


def fim_says(text: str, **extra: Any) -> dict:
    return {"text": text, **extra}


def completions_settings(kind: str, fake: Any, **extra: Any) -> dict:
    """The `completions` setting that points suggestions at `fake` (`anthropic`: a Messages API; `fim`: a legacy
    completions API)."""
    if kind == "anthropic":
        return {"baseUrl": fake.base_url, **extra}
    return {"provider": "openai", "api": "fim", "model": FIM_MODEL, "baseUrl": fake.api_url, **extra}


def configure(server: RawServer, completions: dict) -> None:
    """The client's settings now hold `completions` (workspace/didChangeConfiguration)."""
    server.notify("workspace/didChangeConfiguration", {"settings": {"agentLsp": {"completions": completions}}})


class WatchedServer(RawServer):
    """A RawServer that also keeps each log record of its stderr carrying a traceback (`tracebacks`), however much
    it writes (its `stderr` keeps only the end); pygls's own "Unable to deserialize message" is not kept (what it
    logs for a notification of hostile params, which the wire then drops with a line of its own)."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.tracebacks: list[str] = []
        self._record = ""
        super().__init__(proc)

    async def _drain_stderr(self) -> None:
        while chunk := await self.proc.stderr.read(65536):
            self.stderr += chunk
            del self.stderr[:-200_000]
            self._scan(chunk.decode(errors="replace"))
        self._scan("\n2000-01-01 00:00:00 end")

    def _scan(self, text: str) -> None:
        *records, self._record = _RECORD.split(self._record + text)
        self.tracebacks += [r[:3000] for r in records if "Traceback" in r and "Unable to deserialize message" not in r]


_RECORD = re.compile(r"\n(?=\d{4}-\d\d-\d\d \d\d:\d\d:\d\d|Exception ignored in)")
"""Where a record of the log begins: its timestamp, or Python's own report of an exception it could not raise."""


# ---- the typist ------------------------------------------------------------------------------------------------

class Typist:
    """Documents as the client holds them, kept in step with what it sends (ASCII edits within a line)."""

    def __init__(self, server: RawServer, root: Path) -> None:
        self.server = server
        self.root = root
        self.docs: dict[str, list] = {}
        """uri -> [version, text]"""

    def open(self, name: str, text: str, language_id: str = "python") -> str:
        uri = (self.root / name).as_uri()
        self.docs[uri] = [1, text]
        self.server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": language_id,
                                                                      "version": 1, "text": text}})
        return uri

    def replace(self, uri: str, text: str) -> int:
        """The whole text replaced; the new version."""
        version = self.docs[uri][0] + 1
        self.docs[uri] = [version, text]
        self.server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                      "contentChanges": [{"text": text}]})
        return version

    def edit(self, uri: str, line: int, start: int, end: int, new: str) -> int:
        """Characters `start`..`end` of `line` replaced by `new` (an incremental change); the new version."""
        version, text = self.docs[uri]
        lines = text.split("\n")
        lines[line] = lines[line][:start] + new + lines[line][end:]
        self.docs[uri] = [version + 1, "\n".join(lines)]
        self.server.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": version + 1},
            "contentChanges": [{"range": {"start": {"line": line, "character": start},
                                          "end": {"line": line, "character": end}}, "text": new}]})
        return version + 1

    def close(self, uri: str) -> None:
        self.docs.pop(uri, None)
        self.server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})

    def ask(self, uri: str, line: int, character: int, trigger: int = 2, msg_id: Any = None,
            **extra: Any) -> tuple[dict, Any, asyncio.Future]:
        """(params, id, the future of the whole answer) of one inline completion request."""
        params = {"textDocument": {"uri": uri}, "position": {"line": line, "character": character},
                  "context": {"triggerKind": trigger}, **extra}
        msg_id = self.server.next_id() if msg_id is None else msg_id
        return params, msg_id, self.server.request_future(COMPLETION, params, msg_id=msg_id)

    def cancel(self, msg_id: Any) -> None:
        self.server.notify("$/cancelRequest", {"id": msg_id})


async def answered(future: asyncio.Future, bound: float) -> Optional[dict]:
    """The answer, or None when there was none within `bound` (a hang)."""
    try:
        return await asyncio.wait_for(future, bound)
    except asyncio.TimeoutError:
        return None


class Typed:
    """A document being typed in: `# tag: X` on its first line, TARGET typed up to `k` on its last line, which the
    cursor ends; each step types, backspaces, retags (an edit elsewhere) or does nothing, at random."""

    LINE = 3

    def __init__(self, typist: Typist, name: str, kind_line: str = "") -> None:
        self.typist, self.k, self.tags = typist, 1, 0
        self.uri = typist.open(name, f"# tag: T0\n{kind_line}\n\n{TARGET[:1]}")

    @property
    def tag(self) -> str:
        return f"T{self.tags}"

    def step(self, rng: random.Random) -> None:
        r = rng.random()
        if r < 0.55 and self.k < len(TARGET) - 2:
            self.typist.edit(self.uri, self.LINE, self.k, self.k, TARGET[self.k])
            self.k += 1
        elif r < 0.8 and self.k > 1:
            self.typist.edit(self.uri, self.LINE, self.k - 1, self.k, "")
            self.k -= 1
        elif r < 0.9:
            old = self.tag
            self.tags += 1
            self.typist.edit(self.uri, 0, 7, 7 + len(old), self.tag)

    def ask(self, **extra: Any) -> tuple[dict, Any, asyncio.Future, str]:
        """A request at the cursor: (params, id, future, the one suggestion it may get)."""
        params, msg_id, future = self.typist.ask(self.uri, self.LINE, self.k, **extra)
        return params, msg_id, future, expected_item_text(TARGET[:self.k], self.tag)


async def pace(loop: asyncio.AbstractEventLoop, start: float, sent: int, rate: float) -> None:
    """Keep to `rate` requests a second (a typist's pace, not a wait for the server)."""
    ahead = start + sent / rate - loop.time()
    if ahead > 0:
        await asyncio.sleep(ahead)
    elif sent % 50 == 0:
        await asyncio.sleep(0)


# ---- what a correct answer is (PROTOCOL §10) ----------------------------------------------------------------

def _natural(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2 ** 31


def well_formed(params: Any) -> bool:
    """Whether inlineCompletion params are as LSP and §10 describe them (then -32602 is a wrong answer); the
    server reads a missing `context` or `triggerKind` as Automatic, and so does this."""
    if not isinstance(params, dict):
        return False
    document, position, context = params.get("textDocument"), params.get("position"), params.get("context")
    if not isinstance(document, dict) or not isinstance(document.get("uri"), str) or not document["uri"]:
        return False
    if "version" in document and document["version"] is not None and not _natural(document["version"]):
        return False
    if not isinstance(position, dict) or not _natural(position.get("line")) or not _natural(position.get("character")):
        return False
    trigger = (context or {}).get("triggerKind", 2) if context is None or isinstance(context, dict) else None
    if trigger not in (1, 2) or isinstance(trigger, bool):  # no context, or none of its kind: Automatic
        return False
    return not has_surrogate(params)  # a lone surrogate anywhere: malformed


def has_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    if isinstance(value, dict):
        return any(has_surrogate(k) or has_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(has_surrogate(v) for v in value)
    return False


def answer_problems(answer: dict, params: Any, cancelled: bool = False) -> list[str]:
    """Why `answer` is not one PROTOCOL §10 allows for `params` (empty when it is)."""
    text = json.dumps(answer)[:600]
    if "Traceback" in text or "site-packages" in text:
        return [f"a traceback in the answer: {text}"]
    if "error" in answer:
        error = answer["error"]
        if error.get("code") == -32800 and cancelled:
            return []
        if error.get("code") == -32602 and (error.get("data") or {}).get("fields") and not well_formed(params):
            return []
        return [f"an error answer: {text}"]
    result = answer.get("result")
    if not isinstance(result, dict) or not isinstance(result.get("items"), list):
        return [f"not an InlineCompletionList with items (null instead of items?): {text}"]
    items = result["items"]
    if not items:
        return []
    if not well_formed(params):
        return [f"items for malformed params {json.dumps(params)[:300]}: {text}"]
    automatic = (params.get("context") or {}).get("triggerKind", 2) == 2
    problems = []
    if len(items) > (1 if automatic else 3):
        problems.append(f"{len(items)} items for a {'Automatic' if automatic else 'Invoked'} request: {text}")
    position = params["position"]
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("insertText"), str) or not item["insertText"].strip():
            problems.append(f"an item whose insertText is not text: {text}")
            continue
        place = item.get("range")
        try:
            start, end = place["start"], place["end"]
            on_line = start["line"] == end["line"] == position["line"]
            contains = start["character"] <= position["character"] <= end["character"]
        except (KeyError, TypeError):
            problems.append(f"an item without a range: {text}")
            continue
        if not (on_line and contains):
            problems.append(f"a range not on the cursor's line or not containing the position: {text}")
        command = item.get("command")
        if command is not None and (command.get("command") != ACCEPTED or len(command.get("arguments") or []) != 1):
            problems.append(f"a command other than {ACCEPTED} with one argument: {text}")
    return problems


def version_problems(answer: dict, params: Any, expected: str, cancelled: bool) -> list[str]:
    """Why `answer` is not right for a request whose one possible suggestion is `expected` ("" for none)."""
    found = answer_problems(answer, params, cancelled)
    got = [i["insertText"] for i in items_of(answer)]
    if got and got != [expected]:
        found.append(f"{got} where only {[expected] if expected else 'no item'} fits its version")
    return found


def items_of(answer: dict) -> list[dict]:
    return ((answer or {}).get("result") or {}).get("items") or []


def warnings(server: RawServer) -> list[str]:
    """The window/showMessage warnings so far."""
    return [n["params"]["message"] for n in server.notifications
            if n["method"] == "window/showMessage" and n["params"].get("type") == 2]


# ---- chats beside --------------------------------------------------------------------------------------------

SHAPE = ["turn_start", "text_delta", "usage", "tool_call", "tool_call_update:running", "tool_call_update:completed",
         "turn_start", "text_delta", "usage"]
"""A chat of the lane: it says something and reads a file, then answers in several words."""
CHATS_PER_SESSION = 20


def chat_reply(body: dict) -> dict:
    """The lane's model: a first request reads a.py; the tool result gets a closing text of a few words."""
    last = body["messages"][-1]["content"]
    n = int(re.findall(r"chat (\d+): what does a\.py hold", json.dumps(body["messages"]))[-1])
    if any(b.get("type") == "tool_result" for b in last):
        return {"content": [{"type": "text", "text": final_text(n)}], "delay": 0.004}
    return {"content": [{"type": "text", "text": "Let me look"},
                        {"type": "tool_use", "name": "read_file", "input": {"path": "a.py"}}]}


def final_text(n: int) -> str:
    return f"Chat {n} read a.py and it holds one assignment, nothing else to do."


def shape(updates: list[dict]) -> list[str]:
    kinds = [f"{u['kind']}:{u['status']}" if u["kind"] == "tool_call_update" else u["kind"] for u in updates]
    return [k for i, k in enumerate(kinds) if not (k == "text_delta" and i and kinds[i - 1] == k)]


class ChatLane:
    """Chats one after another on `server` (the fake `chat` answering them) until stopped, each checked whole: its
    answer, every update of it in order with no gap in `seq`, and at the end of each session its history. Counts
    go to the area `area`; `durations` holds (phase, durationMs) per chat."""

    def __init__(self, server: RawServer, chat: FakeMessagesAPI, area: str) -> None:
        self.server = server
        self.area = area
        chat.default = chat_reply
        self.phase = "alone"
        self.durations: list[tuple[str, int]] = []
        self.cases = self.hangs = self.wrong = self.lost = 0
        self.problems: list[str] = []
        self._stop = asyncio.Event()
        self._task: Optional[asyncio.Task] = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        """Stop after the chat under way, and tally."""
        self._stop.set()
        if self._task is not None:
            await self._task
        tally(self.area, cases=self.cases, hangs=self.hangs, wrong=self.wrong, lost=self.lost)

    async def until_chats(self, count: int) -> None:
        """Wait until `count` more chats have finished."""
        target = self.cases + count
        loop = asyncio.get_running_loop()
        deadline = loop.time() + ANSWER_CEILING * count
        while self.cases < target and loop.time() < deadline and not self._stop.is_set():
            await asyncio.sleep(0.01)

    def _problem(self, what: str, kind: str = "wrong") -> None:
        setattr(self, kind, getattr(self, kind) + 1)
        if len(self.problems) < 20:
            self.problems.append(what[:800])

    async def _run(self) -> None:
        n = 0
        while not self._stop.is_set():
            session, seq, said = None, 0, []
            for _ in range(CHATS_PER_SESSION):
                if self._stop.is_set():
                    break
                n += 1
                outcome = await self._one(n, session, seq)
                if outcome is None:
                    return
                session, seq = outcome
                said.append(n)
            if session is not None:
                await self._history(session, said)

    async def _one(self, n: int, session: Optional[str], seq: int) -> Optional[tuple[str, int]]:
        params = {"message": f"chat {n}: what does a.py hold?", "permissionMode": "bypassPermissions"}
        if session:
            params["sessionId"] = session
        phase, since = self.phase, len(self.server.notifications)
        try:
            answer = await self.server.request("agent/chat", params)
        except asyncio.TimeoutError:
            self._problem(f"chat {n}: no answer within {ANSWER_CEILING} s", "hangs")
            return None
        except ConnectionError:
            return None
        self.cases += 1
        result = answer.get("result") or {}
        session = result.get("sessionId") or session
        mine = [x["params"] for x in self.server.notifications[since:]
                if x["method"] == "agent/update" and x["params"]["sessionId"] == session and x["params"]["seq"] > seq]
        seqs = [p["seq"] for p in mine]
        updates = [p["update"] for p in mine]
        texts = "".join(u["text"] for u in updates if u["kind"] == "text_delta")
        if result.get("stopReason") != "end_turn" or result.get("finalMessage") != final_text(n):
            self._problem(f"chat {n}: {answer}")
        elif seqs != list(range(seq + 1, seq + 1 + len(seqs))) or shape(updates) != SHAPE or \
                texts != "Let me look" + final_text(n):
            self._problem(f"chat {n}: updates seq {seqs}, shape {shape(updates)}, text {texts!r}", "lost")
        else:
            self.durations.append((phase, result["metadata"]["durationMs"]))
        return session, (seqs[-1] if seqs else seq)

    async def _history(self, session: str, said: list[int]) -> None:
        answer = await self.server.request("agent/history", {"sessionId": session})
        messages = (answer.get("result") or {}).get("messages") or []
        got = [(m["role"], m["content"], [(c["name"], c["status"]) for c in m.get("toolCalls", [])])
               for m in messages]
        want = []
        for n in said:
            want += [("user", f"chat {n}: what does a.py hold?", []),
                     ("assistant", "Let me look", [("read_file", "completed")]),
                     ("assistant", final_text(n), [])]
        if got != want:
            missing = [w for w in want if w not in got]
            self._problem(f"history of {session}: {len(got)} messages of {len(want)}; missing {missing[:3]}", "lost")

    def figures(self) -> dict[str, tuple[int, int]]:
        """Per phase: (chats, median durationMs)."""
        out = {}
        for phase in dict.fromkeys(p for p, _ in self.durations):
            ms = sorted(d for p, d in self.durations if p == phase)
            out[phase] = (len(ms), ms[len(ms) // 2])
        return out
