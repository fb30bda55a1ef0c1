"""Next edits under fire (PROTOCOL §11), on the real server through raw JSON-RPC:

- `textDocument/copilotInlineEdit` fuzzed (hostile values in every member, positions past the end, versions the
  server never saw, documents never opened): each answer `{edits: [...]}` of its shape or `-32602`, never null;
- a burst of requests with a didChange between each two: every edit for its request's version, the last one
  answered from a model request begun after its version;
- cancel in every state (waiting for a newer request, the model streaming, answered already, an unknown id): every
  request answered, the model request closed;
- the model failing over the Messages API and the raw prompt on /completions (500, 429, an HTML page, a cut
  stream, a stall): `{edits: []}`, the next edit given after it;
- 1,000 requests a second on a document being typed in (suggesting.py's typist), an inline completion asked beside
  every other one and a lane of chats running all the while: every edit for its version, inside its window and
  fitting that version's text, every inline item for its version, every chat whole.

Counts: crashes (the server died), hangs (no answer within the ceiling), wrong (an answer §11 does not allow),
lost (a chat's update or history lost).
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from typing import Any

from tests.fakes.legacy_completions import FakeLegacyCompletions
from tests.fakes.messages_api import FakeMessagesAPI
from tests.reliability.conftest import server_env, tally
from tests.reliability.suggesting import (
    ChatLane, Typed, Typist, WatchedServer, answer_for, completions_settings, messages_prefix, messages_says, pace,
    version_problems)
from tests.waiting import until

AREA_FUZZ = "next edits: requests fuzzed"
AREA_BURST = "next edits: a burst with edits"
AREA_CANCEL = "next edits: cancel in every state"
AREA_FAULTS = "next edits: model faults"
METHOD = "textDocument/copilotInlineEdit"
START, END = "<|editable_region_start|>", "<|editable_region_end|>"
SOURCE = "def f(count):\n    return count + 1\n"
RENAMED = SOURCE.replace("f(count)", "f(total)")
CARRIED = RENAMED.replace("return count", "return total")
CEILING = 60.0
HOSTILE = [None, True, -1, 2 ** 53, 1.5, "", "x", "\ud800", [], {}, [1, 2], {"uri": 1}, "file:///nowhere.py"]


def problems(message: dict, uri: str, version: Any) -> list[str]:
    """What is wrong with a copilotInlineEdit response to a request about (uri, version)."""
    if "error" in message:
        return [] if message["error"].get("code") in (-32602, -32800) else [f"error {message['error']}"]
    result = message.get("result")
    if not isinstance(result, dict) or not isinstance(result.get("edits"), list) or len(result["edits"]) > 1:
        return [f"not {{edits: [0 or 1]}}: {result!r}"[:200]]
    for edit in result["edits"]:
        if not isinstance(edit.get("text"), str) or edit.get("textDocument") != {"uri": uri, "version": version} \
                or edit.get("command", {}).get("command") != "agent.nextEditAccepted" or "range" not in edit:
            return [f"a malformed edit: {edit!r}"[:200]]
    return []


async def open_renamed(server: Any, workspace: Any) -> str:
    uri = (workspace / "app.py").as_uri()
    server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                            "text": SOURCE}})
    server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                             "contentChanges": [{"text": RENAMED}]})
    return uri


def ask(server: Any, uri: Any, version: Any, line: Any = 0, character: Any = 11, msg_id: Any = None) -> Any:
    return server.request_future(METHOD, {"textDocument": {"uri": uri, "version": version},
                                          "position": {"line": line, "character": character}}, msg_id=msg_id)


async def answered(future: Any) -> Any:
    try:
        return await asyncio.wait_for(future, CEILING)
    except asyncio.TimeoutError:
        return None


async def test_fuzzed_requests_are_answered_in_shape(start_server, workspace):
    server = await start_server("--model", "demo")
    uri = await open_renamed(server, workspace)
    rng = random.Random(42)
    wrong = hangs = 0
    for n in range(300):
        params: Any = {"textDocument": {"uri": rng.choice([uri, uri, *HOSTILE]),
                                        "version": rng.choice([2, 2, 1, 99, *HOSTILE])},
                       "position": {"line": rng.choice([0, 1, 5, 10 ** 9, *HOSTILE]),
                                    "character": rng.choice([0, 11, 16, 10 ** 9, *HOSTILE])},
                       "context": rng.choice(HOSTILE)}
        for member in rng.sample(["textDocument", "position", "context"], rng.randint(0, 1)):
            params[member] = rng.choice(HOSTILE)
        if n % 25 == 0:
            params = rng.choice(HOSTILE)
        message = await answered(server.request_future(METHOD, params))
        if message is None:
            hangs += 1
            continue
        document = params.get("textDocument") if isinstance(params, dict) else None
        wrong += bool(problems(message, document.get("uri") if isinstance(document, dict) else None,
                               document.get("version") if isinstance(document, dict) else None))
    stats = await server.request("agent/completionStats", {})
    crashed = server.proc.returncode is not None
    tally(AREA_FUZZ, cases=300, crashes=int(crashed), hangs=hangs, wrong=wrong)
    assert (crashed, hangs, wrong) == (False, 0, 0)
    assert stats["result"]["nextEdits"]["errors"] == 0


async def test_a_burst_with_edits_answers_each_for_its_version(start_server, workspace, fake_api):
    fake_api.default = lambda body: {"content": [{"type": "text", "text": f"{START}\n{carried(body)}\n{END}"}]}
    server = await start_server()
    uri = await open_renamed(server, workspace)
    pending = []
    for version in range(3, 203):  # typing a comment below, a request after each key
        text = RENAMED + "# " + "x" * (version - 3) + "\n"
        server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                 "contentChanges": [{"text": text}]})
        pending.append((version, ask(server, uri, version)))
        await asyncio.sleep(0.005)
    wrong = hangs = 0
    for version, future in pending:
        message = await answered(future)
        hangs += message is None
        wrong += bool(message is not None and problems(message, uri, version))
    last = (await pending[-1][1])["result"]["edits"]
    wrong += last == [] or last[0]["text"] != "total"
    wrong += "x" * 199 not in str(fake_api.requests[-1])  # the last answer's model request saw the last edit
    crashed = server.proc.returncode is not None
    tally(AREA_BURST, cases=len(pending), crashes=int(crashed), hangs=hangs, wrong=wrong)
    assert (crashed, hangs, wrong) == (False, 0, 0)
    assert len(fake_api.requests) < len(pending) // 4


def carried(body: dict) -> str:
    excerpt = body["messages"][0]["content"][1]["text"]
    window = excerpt.split(START + "\n", 1)[1].split("\n" + END, 1)[0].replace("<|user_cursor_is_here|>", "")
    return window.replace("return count", "return total")


async def test_cancel_in_every_state_answers_and_closes(start_server, workspace, fake_api):
    fake_api.add({"hold": True})
    server = await start_server()
    uri = await open_renamed(server, workspace)
    cases = hangs = wrong = 0
    early = ask(server, uri, 2, msg_id="early")  # cancelled while it waits for a newer request
    server.notify("$/cancelRequest", {"id": "early"})
    streaming = ask(server, uri, 2, 0, 10, msg_id="streaming")  # cancelled while the model is asked
    await until(lambda: fake_api.requests)
    server.notify("$/cancelRequest", {"id": "streaming"})
    for future in (early, streaming):
        cases += 1
        message = await answered(future)
        hangs += message is None
        wrong += bool(message is not None and problems(message, uri, 2))
    await until(lambda: fake_api.disconnects == [1])
    fake_api.add({"content": [{"type": "text", "text": f"{START}\n{CARRIED}\n{END}"}]})
    done = await answered(ask(server, uri, 2, msg_id="done"))
    server.notify("$/cancelRequest", {"id": "done"})  # answered already
    server.notify("$/cancelRequest", {"id": "never-sent"})
    server.notify("$/cancelRequest", {"id": [1]})
    cases += 1
    wrong += done is None or done["result"]["edits"][0]["text"] != "total"
    stats = await server.request("agent/completionStats", {})
    crashed = server.proc.returncode is not None
    tally(AREA_CANCEL, cases=cases, crashes=int(crashed), hangs=hangs, wrong=wrong)
    assert (crashed, hangs, wrong) == (False, 0, 0)
    assert stats["result"]["nextEdits"]["cancelled"] >= 1  # (one cancelled before it began is not counted)


FAULTS = [{"status": 500, "error": {"type": "api_error", "message": "boom"}},
          {"status": 429, "error": {"type": "rate_limit_error", "message": "slow down"}},
          {"raw": "<html>login</html>", "content_type": "text/html"},
          {"stall": 5}]


async def test_model_faults_over_both_wires_are_no_edit_then_the_next_is_given(start_server, workspace, fake_api):
    fim = FakeLegacyCompletions().start()
    try:
        cases = hangs = wrong = crashes = 0
        for kind in ("anthropic", "fim"):
            window = (RENAMED + "\n" * (len(FAULTS) + 1)).replace("return count", "return total")  # after the faults
            good = {"content": [{"type": "text", "text": f"{START}\n{window}\n{END}"}]} if kind == "anthropic" \
                else {"text": f"{START}\n{window}\n{END}"}
            faults = [*FAULTS, {**good, "cut_after": 3}]
            if kind == "anthropic":
                fake_api.add(*faults, good)
                env, options = server_env(fake_api.base_url), {"nextEdits": {"timeout": 1}}
            else:
                fim.add(*[{**f, "error": {"message": "boom", "type": "server_error"}} if "status" in f else f
                          for f in faults], good)
                env = server_env(None, AGENT_LSP_PROVIDER="openai", OPENAI_BASE_URL=fim.api_url,
                                 OPENAI_API_KEY="test-key")
                options = {"nextEdits": {"timeout": 1, "api": "fim", "model": "zeta"}}
            server = await start_server(env=env, init_options=options)
            uri = await open_renamed(server, workspace)
            for n in range(len(faults) + 1):
                server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 3 + n},
                                                         "contentChanges": [{"text": RENAMED + "\n" * n}]})
                message = await answered(ask(server, uri, 3 + n))
                cases += 1
                hangs += message is None
                if message is None:
                    continue
                edits = message.get("result", {}).get("edits")
                wrong += edits != [] if n < len(faults) else (not edits or edits[0]["text"] != "total")
            crashes += server.proc.returncode is not None
        tally(AREA_FAULTS, cases=cases, crashes=crashes, hangs=hangs, wrong=wrong)
        assert (crashes, hangs, wrong) == (0, 0, 0)
    finally:
        fim.stop()


# ---- a thousand a second with edits, inline completions and a chat lane beside ---------------------------------

AREA_RATE = "next edits: 1,000 a second, edits between"
AREA_INLINE = "next edits: inline completions beside"
AREA_CHATS = "next edits: chats beside"
CHECKED = " checked"
"""What the next-edit model adds to the `# tag: X` line of the window it is sent (away from the cursor)."""


def rate_model(body: dict) -> dict:
    """The suggestion model of both kinds on one fake: a next-edit request (Zeta's markers) gets its window with
    ` checked` after the tag line; an inline completion request, suggesting.py's tagged answer."""
    if START not in json.dumps(body):
        return messages_says(answer_for(messages_prefix(body)))
    excerpt = body["messages"][0]["content"][1]["text"]
    window = excerpt.split(START + "\n", 1)[1].split("\n" + END, 1)[0].replace("<|user_cursor_is_here|>", "")
    new = re.sub(r"^(# tag: \w+)$", r"\1" + CHECKED, window, count=1, flags=re.M)
    return {"content": [{"type": "text", "text": f"{START}\n{new}\n{END}"}]}


def edit_problems(message: dict, uri: str, version: int, text: str, tag: str, cursor_line: int) -> list[str]:
    """Why a next-edit answer is wrong for the request about `version` (whose text and tag are given): its shape,
    an edit for another version, one outside the window (3 lines above the cursor's, 8 below), or one that does
    not fit that version's text (the tag line it changes must read that version's tag)."""
    found = problems(message, uri, version)
    for edit in (message.get("result") or {}).get("edits") or [] if not found else []:
        start, end = edit["range"]["start"], edit["range"]["end"]
        if start["line"] < cursor_line - 3 or end["line"] > cursor_line + 8:
            found.append(f"an edit outside the window: {edit}")
            continue
        lines = text.split("\n")
        if not (end["line"] < len(lines) and end["character"] <= len(lines[end["line"]])):
            found.append(f"an edit past the end of version {version}: {edit}")
            continue
        offset = [sum(len(x) + 1 for x in lines[:n]) for n in range(len(lines))]
        after = text[:offset[start["line"]] + start["character"]] + edit["text"] + \
            text[offset[end["line"]] + end["character"]:]
        if after.split("\n", 1)[0] != f"# tag: {tag}{CHECKED}":
            found.append(f"an edit that does not fit version {version} (tag {tag}): {edit}")
    return found


async def judged(area: str, found: list[str], pending: list[tuple[Any, asyncio.Future, Any]]) -> list[dict]:
    """Each (what, future, check) counted under `area`: a hang when unanswered, wrong when `check(answer)` names a
    problem (the first kept in `found`); the answers."""
    answers = []
    for what, future, check in pending:
        tally(area, cases=1)
        message = await answered(future)
        if message is None:
            tally(area, hangs=1)
            found.append(f"no answer to {what}")
            continue
        answers.append(message)
        wrong = check(message)
        if wrong:
            tally(area, wrong=1)
            found += wrong[:1]
    return answers


async def test_a_thousand_a_second_with_edits_and_inline_completions_and_chats_beside(tmp_path, long_run):
    """Next edits asked 1,000 times a second on a document being typed in (a didChange before each; every 100
    a pause until the latest is answered), an inline
    completion asked beside every other one, a lane of chats running all the while: every request answered,
    every edit for its version and inside its window, every inline item the one for its version, every chat
    whole; once the typing stops, the next edit is given."""
    chat, model = FakeMessagesAPI().start(), FakeMessagesAPI().start()
    model.default = rate_model
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    server = await WatchedServer.start("--data-dir", str(tmp_path / "state"), env=server_env(chat.base_url))
    lane = ChatLane(server, chat, AREA_CHATS)
    problems_found: list[str] = []
    try:
        server.handlers["workspace/applyEdit"] = lambda params: {"applied": True}
        await server.initialize(root, init_options={"completions": completions_settings("anthropic", model,
                                                                                          timeout=30.0)})
        lane.start()
        await lane.until_chats(2)
        typist = Typist(server, root)
        doc = Typed(typist, "rate.py")
        rng, loop = random.Random(42), asyncio.get_running_loop()
        count = 10_000 if long_run else 1000
        edits, inline = [], []
        start, sent = loop.time(), 0
        for i in range(count + 1):
            if i < count:
                doc.step(rng)
            version, text = typist.docs[doc.uri]
            edits.append((version, text, doc.tag, ask(server, doc.uri, version, Typed.LINE, doc.k)))
            if i % 2 == 0 or i == count:
                params, _, future, expected = doc.ask()
                inline.append((params, future, expected))
            if i < count and i % 100 == 99:  # a pause in the typing until the latest request is answered
                await answered(edits[-1][3])
                start, sent = loop.time(), i + 1
            if i < count:
                await pace(loop, start, i + 1 - sent, 1000)
            else:  # once the typing stops, the answers to the last requests
                await until(lambda: all(f.done() for *_, f in edits), CEILING + 30, "every next edit answered")
        answers = await judged(AREA_RATE, problems_found, [
            (f"version {version}", future, lambda m, v=version, t=text, g=tag: edit_problems(
                m, doc.uri, v, t, g, Typed.LINE)) for version, text, tag, future in edits])
        given = sum(bool((m.get("result") or {}).get("edits")) for m in answers)
        last = await answered(edits[-1][3])
        if not (last or {}).get("result", {}).get("edits"):
            tally(AREA_RATE, wrong=1)
            problems_found.append(f"no next edit once the typing stopped: {last}")
        await judged(AREA_INLINE, problems_found, [
            (params, future, lambda m, p=params, e=expected: version_problems(m, p, e, False))
            for params, future, expected in inline])
        await lane.until_chats(1)  # the lane still runs once the burst is over
        stats = (await server.request("agent/completionStats", {}))["result"]
        print(f"next edits at 1,000 a second: {count + 1} requests, {given} edits given, "
              f"{len(inline)} inline completions, {lane.cases} chats beside; stats {stats}")
    finally:
        await lane.stop()
        alive = server.proc.returncode is None
        tally(AREA_RATE, crashes=int(not alive), wrong=len(server.tracebacks))
        await server.stop()
        chat.stop()
        model.stop()
    assert alive and not server.tracebacks, server.tracebacks[:3]
    assert not (lane.hangs or lane.wrong or lane.lost), lane.problems
    assert not problems_found, problems_found[:10]
