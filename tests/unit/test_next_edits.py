"""The decisions of the next-edit engine (agent_lsp/completions/next_edits.py) with a model the test answers by
hand and a clock it sets: when a request waits before its model request (inside a burst) and when it asks at
once (after a pause); the model's rewrite kept and the one edit covering what is left of it offered with no model
call while the user makes its changes (accepted, or typed key by key); the rewrite dropped as soon as the text
departs from it; the filters applied to what is left."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from typing import AsyncIterator, Optional

from agent_lsp.completions.next_edit import END, START, NextEditPrompt, Window, ahead, left_of, predict, window_at
from agent_lsp.completions.next_edits import QUIET, THROTTLE, NextEdit, NextEdits, _Document
from agent_lsp.completions.recent_edits import RecentEdits
from agent_lsp.config import Settings
from agent_lsp.config.completions import CompletionsSettings
from agent_lsp.config.next_edits import NextEditsSettings
from agent_lsp.core.ports import OpenDocument

ROOT = Path("/ws")
URI = (ROOT / "app.py").as_uri()
SOURCE = "def f(count):\n    a = count\n    b = count + 1\n    return g(a, b, count)\n\n\nprint(f(2))\n" + \
    "".join(f"v{n} = {n}\n" for n in range(12))
RENAMED = SOURCE.replace("f(count)", "f(total)")
"""The user renamed the parameter; the model carries the rename on to its three uses."""


class Model:
    """Answers each window rewritten by `rewrite` when the test releases it (`answer()`); records the windows."""

    name = "hand"

    def __init__(self) -> None:
        self.windows: list[Window] = []
        self.release: list[asyncio.Event] = []
        self.rewrite = lambda old: old.replace("count", "total")

    async def complete(self, prompt: NextEditPrompt) -> AsyncIterator[str]:
        self.windows.append(prompt.window)
        released = asyncio.Event()
        self.release.append(released)
        await released.wait()
        yield f"{START}\n{self.rewrite(prompt.window.old)}\n{END}"

    def answer(self) -> None:
        self.release[-1].set()


class Buffers:
    def __init__(self) -> None:
        self.docs: dict[str, OpenDocument] = {}
        self.roots = [ROOT]

    def get(self, uri: str) -> Optional[OpenDocument]:
        return self.docs.get(uri)


class Rig:
    def __init__(self, options: NextEditsSettings = NextEditsSettings()) -> None:
        self.model = Model()
        self.buffers = Buffers()
        self.now = 1000.0
        self.engine = NextEdits(self.buffers, lambda: (Settings(model="script:none"), CompletionsSettings(), options),
                                lambda message: None, RecentEdits(clock=lambda: self.now), clock=lambda: self.now,
                                completer_for=lambda choice: self.model)
        self.version = 0

    def open(self, text: str) -> OpenDocument:
        self.version = 1
        self.engine.history.opened(URI, text)
        self.buffers.docs[URI] = OpenDocument(URI, Path("/ws/app.py"), "python", 1, text, True)
        return self.buffers.docs[URI]

    def type(self, text: str, pause: float = 2.0) -> OpenDocument:
        """The buffer now holds `text`, `pause` seconds after the last thing the test did."""
        self.now += pause
        self.version += 1
        self.buffers.docs[URI] = OpenDocument(URI, Path("/ws/app.py"), "python", self.version, text, True)
        self.engine.changed(URI, text)
        return self.buffers.docs[URI]

    def ask(self, doc: OpenDocument, offset: int, pause: float = 0.6) -> asyncio.Task:
        self.now += pause
        return asyncio.ensure_future(self.engine.suggest(doc, offset, doc.version))


async def asked(rig: Rig, calls: int) -> None:
    """Until the model has been asked `calls` times (a request that waits needs a timer: it never gets there)."""
    for _ in range(200):
        if len(rig.model.windows) == calls:
            return
        await asyncio.sleep(0)
    raise AssertionError(f"the model was asked {len(rig.model.windows)} times, not {calls}")


def replaced(text: str, edit: Optional[NextEdit]) -> str:
    assert edit is not None
    return text[:edit.start] + edit.text + text[edit.end:]


def covering(text: str, first: str, last: str) -> tuple[int, int, str]:
    """The one edit renaming every `count` of `text` from the one that begins `first` to the one that ends `last`."""
    start = text.index(first) + first.index("count")
    end = text.index(last) + last.rindex("count") + 5
    return start, end, text[start:end].replace("count", "total")


def seen(edit: Optional[NextEdit]) -> Optional[tuple[int, int, str]]:
    return None if edit is None else (edit.start, edit.end, edit.text)


# ---- when a request waits ------------------------------------------------------------------------------------


def test_a_request_waits_only_inside_a_burst_and_never_begins_sooner_than_throttle():
    pause = _Document(asked=90.0, changed=(95.0, 99.99))
    assert pause.wait(100.0) == 0.0  # its own change just before it: that is no burst
    assert _Document(asked=99.95, changed=(90.0, 99.99)).wait(100.0) == QUIET  # another request just before
    assert _Document(asked=90.0, changed=(99.95, 99.99)).wait(100.0) == QUIET  # typing fast
    throttled = _Document(asked=99.8, changed=(90.0, 99.99), started=99.8)
    assert abs(throttled.wait(100.0) - (THROTTLE - 0.2)) < 1e-9
    assert _Document(asked=99.8, changed=(99.99, 99.99), started=99.99).wait(100.0) > QUIET


async def test_a_request_after_a_pause_asks_the_model_at_once():
    rig = Rig()
    rig.open(SOURCE)
    doc = rig.type(RENAMED)
    request = rig.ask(doc, 11)
    await asked(rig, 1)  # no timer ran: loop turns only
    rig.model.answer()
    assert seen(await request) == covering(RENAMED, "a = count", "b, count)")  # the three uses: one edit


async def test_a_request_inside_a_burst_waits_and_the_newer_one_is_asked():
    rig = Rig()
    rig.open(SOURCE)
    first = rig.ask(rig.type(RENAMED), 11)
    await asked(rig, 1)
    rig.model.answer()
    await first
    burst = rig.ask(rig.type(RENAMED + "#", pause=0.01), len(RENAMED) + 1, pause=0.001)
    newer = rig.ask(rig.type(RENAMED + "#x", pause=0.01), len(RENAMED) + 2, pause=0.001)
    assert await burst is None  # answered at once by the newer, having asked nothing
    await asyncio.wait_for(asked(rig, 1), 1)
    assert rig.engine.stats.cancelled == 1 and len(rig.model.windows) == 1
    newer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await newer


# ---- the rewrite kept ----------------------------------------------------------------------------------------


async def first_offer(rig: Rig) -> tuple[OpenDocument, NextEdit]:
    rig.open(SOURCE)
    doc = rig.type(RENAMED)
    request = rig.ask(doc, 11)
    await asked(rig, 1)
    rig.model.answer()
    return doc, await request


async def test_what_is_left_of_the_rewrite_is_offered_as_one_edit_with_no_model_call_as_the_user_makes_it():
    rig = Rig()
    doc, edit = await first_offer(rig)
    assert seen(edit) == covering(doc.text, "a = count", "b, count)")
    doc = rig.type(doc.text.replace("a = count", "a = total"))  # the first use made by hand, not taken with Tab
    edit = await rig.ask(doc, doc.text.index("a = total") + 9)
    assert seen(edit) == covering(doc.text, "b = count", "b, count)")  # what is left: the other two uses
    assert (rig.engine.stats.model_calls, rig.engine.stats.accepted) == (1, 0)
    doc = rig.type(replaced(doc.text, edit))  # taken: nothing is left, the model is asked again
    assert doc.text == SOURCE.replace("count", "total")
    last = rig.ask(doc, edit.end)
    await asked(rig, 2)
    rig.model.answer()
    assert await last is None
    assert (rig.engine.stats.model_calls, rig.engine.stats.accepted, rig.engine.stats.filtered) == (2, 1, 1)


async def test_a_change_typed_key_by_key_keeps_the_rewrite_and_the_rest_of_it_is_one_edit():
    rig = Rig()
    doc, edit = await first_offer(rig)
    at = edit.start
    for typed in ("t", "to", "tot"):  # the old word typed over, a key at a time
        doc = rig.type(doc.text[:at] + typed + doc.text[at + (5 if typed == "t" else len(typed) - 1):], pause=0.15)
    assert doc.text == RENAMED.replace("a = count", "a = tot")
    after = await rig.ask(doc, at + 3)
    end = doc.text.index("b, count)") + 8
    assert seen(after) == (at + 3, end, "al" + doc.text[at + 3:end].replace("count", "total"))
    assert (rig.engine.stats.model_calls, rig.engine.stats.filtered) == (1, 0)


async def test_the_rest_of_a_word_being_typed_is_ghost_text_and_asks_nothing_until_it_is_typed():
    rig = Rig()
    rig.model.rewrite = lambda old: old.replace("a = count", "a = total")  # the rewrite: one use
    doc, edit = await first_offer(rig)
    at = edit.start
    doc = rig.type(doc.text[:at] + "tot" + doc.text[at + 5:])
    assert await rig.ask(doc, at + 3) is None  # "al" at the cursor: textDocument/inlineCompletion offers it
    assert rig.engine._states[URI].prediction is not None and rig.engine.stats.model_calls == 1
    doc = rig.type(doc.text[:at + 3] + "al" + doc.text[at + 3:])
    request = rig.ask(doc, at + 5)  # all of it made: the model is asked
    await asked(rig, 2)
    rig.model.answer()
    assert await request is None
    assert rig.engine.stats.model_calls == 2


async def test_a_rewrite_too_large_as_a_whole_is_offered_once_what_is_left_of_it_fits():
    rig = Rig(NextEditsSettings(max_lines=2))
    doc, edit = await first_offer(rig)
    assert edit is None  # three lines: "too large"
    assert rig.engine.stats.filtered == 1
    doc = rig.type(doc.text.replace("a = count", "a = total"))
    edit = await rig.ask(doc, doc.text.index("a = total") + 9)
    assert seen(edit) == covering(doc.text, "b = count", "b, count)")
    assert rig.engine.stats.model_calls == 1


async def test_a_change_that_departs_from_the_rewrite_drops_it_and_the_model_is_asked_again():
    rig = Rig()
    doc, edit = await first_offer(rig)
    departed = rig.type(doc.text.replace("b = count + 1", "b = count + 2"))
    assert rig.engine._states[URI].prediction is None  # at the change, not at the next request
    again = rig.ask(departed, departed.text.index("+ 2") + 3)
    await asked(rig, 2)
    rig.model.answer()
    assert seen(await again) == covering(departed.text, "a = count", "b, count)")
    assert rig.engine.stats.model_calls == 2


async def test_a_change_outside_the_window_of_the_rewrite_drops_it():
    rig = Rig()
    doc, _ = await first_offer(rig)
    rig.type(doc.text + "x = 1\n")
    assert rig.engine._states[URI].prediction is None


async def test_a_request_whose_window_holds_none_of_the_changes_left_asks_the_model():
    rig = Rig()
    doc, _ = await first_offer(rig)
    request = rig.ask(doc, len(doc.text) - 1)  # the last line: its window is far below the changes
    await asked(rig, 2)
    rig.model.answer()
    assert await request is None  # nothing to rename there


async def test_a_request_whose_window_holds_only_some_of_what_is_left_asks_the_model():
    rig = Rig()
    doc, _ = await first_offer(rig)
    request = rig.ask(doc, doc.text.index("\n\n\n") + 2)  # line 5: its window begins at line 2, below the first use
    await asked(rig, 2)
    assert rig.model.windows[-1].old.startswith("    b = count")
    rig.model.answer()
    assert seen(await request) == covering(doc.text, "b = count", "b, count)")
    assert rig.engine._states[URI].prediction.start == rig.model.windows[-1].start  # the new rewrite kept


# ---- the kept rewrite as text work ---------------------------------------------------------------------------


def test_a_rewrite_is_followed_as_its_changes_are_made_and_what_is_left_is_the_window_rewritten():
    window = window_at(RENAMED, 11, 3, 8)
    kept = predict(window, window.old.replace("count", "total"))
    assert [RENAMED[e.start:e.end] + ">" + e.text for e in ahead(kept, RENAMED)] == ["count>total"] * 3
    assert left_of(kept, window) == window.old.replace("count", "total")
    first = RENAMED.replace("a = count", "a = total")
    assert len(ahead(kept, first)) == 2
    half = RENAMED.replace("a = count", "a = to")
    assert [(half[e.start:e.end], e.text) for e in ahead(kept, half)] == [("", "tal"), ("count", "total"),
                                                                           ("count", "total")]
    at_half = window_at(half, half.index("a = to") + 6, 3, 8)
    assert left_of(kept, at_half) == at_half.old.replace("a = to", "a = total").replace("count", "total")
    assert ahead(kept, RENAMED.replace("a = count", "a = tx")) is None
    assert ahead(kept, RENAMED.replace("print(f(2))", "print(f(3))")) is None
    done = RENAMED.replace("count", "total")
    assert ahead(kept, done) == [] and left_of(kept, window_at(done, 11, 3, 8)) is None
    assert left_of(kept, window_at(RENAMED, RENAMED.index("print"), 3, 8)) is None  # the first use lies above it
    assert predict(window, window.old) is None
