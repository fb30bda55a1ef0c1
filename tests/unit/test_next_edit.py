"""Next edits as text work (completions/next_edit.py, recent_edits.py, next_edit_offline.py): the window, the
prompt, the answer read back, the one minimal edit, each filter, the recent edits as diffs, the demo model."""

from __future__ import annotations

import asyncio

import pytest

from agent_lsp.completions.next_edit import CURSOR, END, START, Change, Edit, build_prompt, key_of, minimal_edit, \
    refused, rewritten, window_at
from agent_lsp.completions.next_edit_offline import DemoNextEditor
from agent_lsp.completions.recent_edits import RecentEdits, unified_diff

TEXT = "".join(f"line {n}\n" for n in range(20))


def test_the_window_is_whole_lines_around_the_cursor():
    cursor = TEXT.index("line 5") + 3
    window = window_at(TEXT, cursor, 3, 8)
    assert window.old == "".join(f"line {n}\n" for n in range(2, 14)).rstrip("\n")
    assert window_at(TEXT, 2, 3, 1).old == "line 0\nline 1"  # at the top, fewer above
    assert window_at("x", 1, 3, 8).old == "x"
    assert window_at("a" * 20_000, 5, 3, 8) is None  # one huge line: nothing sensible to rewrite


def test_the_prompt_has_the_markers_the_cursor_and_the_context():
    text = "a = 1\nb = a\n"
    prompt = build_prompt("m.py", "python", window_at(text, 5, 3, 8), ("--- a/m.py",))
    assert prompt.excerpt == f"```m.py\n<|start_of_file|>\n{START}\na = 1{CURSOR}\nb = a\n\n{END}\n```"
    assert prompt.events == ("--- a/m.py",)


@pytest.mark.parametrize("answer, window", [
    (f"{START}\nnew\n{END}", "new"),
    (f"Sure!\n{START}\nnew{CURSOR} text\n", "new text"),  # the end marker was a stop sequence
    ("```python\nfenced\n```\nmore ```x\n```", "fenced"),
    ("\nwhole\n", "whole"),
    (f"{START}\n{START}\nx\n{END}", None),
    (f"x\n{END}", None),
])
def test_the_answer_is_read_back_as_the_window(answer, window):
    assert rewritten(answer) == window


def test_the_edit_is_minimal():
    window = window_at("def f(total):\n    return count + 1\n", 11, 3, 8)
    edit = minimal_edit(window, "def f(total):\n    return total + 1\n")
    assert edit == Edit(25, 30, "total")
    assert minimal_edit(window, window.old) is None


def decide(text: str, cursor: int, new: str, latest=None, dismissed=(), max_lines: int = 10):
    window = window_at(text, cursor, 3, 8)
    return refused(window, new, minimal_edit(window, new), max_lines, latest, dismissed)


SOURCE = "def f(total):\n    return count + 1\n"


@pytest.mark.parametrize("new, latest, why", [
    (SOURCE, None, "unchanged"),
    (SOURCE.replace("count + 1", "count+1"), None, "whitespace"),
    (SOURCE.replace("(total)", "(total, step)"), None, "insertion at the cursor"),
    (SOURCE + "x\n" * 11, None, "too large"),
    ("nothing like it", None, "rewrites the whole window"),
    (SOURCE.replace("f(total)", "f(count)"), Change(6, "count", "total"), "undoes the latest change"),
    (SOURCE.replace("f(total)", "f(t)"), Change(6, "", "total"), "undoes the latest change"),
    (SOURCE.replace("    return", "    x = 1\n    return"), Change(14, "    x = 1\n", ""), "undoes the latest change"),
    (SOURCE.replace("return count", "return total"), Change(6, "count", "total"), None),
    (SOURCE.replace("+ 1\n", "+ 1 * 2 * 3\n"), Change(34, " * 2", ""), "undoes the latest change"),  # put back
])
def test_each_filter(new, latest, why):
    assert decide(SOURCE, 11, new, latest) == why


def test_an_edit_covering_several_changes_does_not_undo_what_its_unchanged_text_already_holds():
    typing = "def f(p):\n    \"\"\"From params.\"\"\"\n    return params + 1\n"  # "params" typed over: "p" so far
    new = typing.replace("f(p)", "f(request)").replace("return params", "return request")
    assert decide(typing, 7, new, Change(6, "params", "p")) is None  # "params" in the docstring, kept
    longer = new.replace("request", "new_params")  # the new name holds the old one
    assert decide(typing, 7, longer, Change(6, "params", "p")) is None


def test_a_dismissed_edit_is_known_by_its_place_not_its_line_number():
    new = SOURCE.replace("return count", "return total")
    window = window_at(SOURCE, 11, 3, 8)
    key = key_of(SOURCE, minimal_edit(window, new))
    moved = "# a line above\n" + SOURCE
    assert decide(moved, 26, "# a line above\n" + new, dismissed={key}) == "dismissed"


def test_recent_edits_are_diffs_grouped_by_place_and_pause():
    now = [0.0]
    history = RecentEdits(clock=lambda: now[0])
    history.opened("file:///a.py", "x = 1\ny = 2\n")
    history.changed("file:///a.py", "x = 12\ny = 2\n")
    history.changed("file:///a.py", "x = 123\ny = 2\n")  # typing on: the same group
    history.changed("file:///a.py", "x = 123\nz = 2\n")  # elsewhere: a group of its own
    now[0] = 5.0
    history.changed("file:///b.py", "new")  # never seen opened: history starts here
    history.changed("file:///b.py", "newer")
    assert history.diffs(lambda uri: None if uri.endswith("b.py") else "a.py") == (
        "--- a/a.py\n+++ b/a.py\n@@ -1,3 +1,3 @@\n-x = 1\n+x = 123\n y = 2\n ",
        "--- a/a.py\n+++ b/a.py\n@@ -1,3 +1,3 @@\n x = 123\n-y = 2\n+z = 2\n ")
    assert history.latest("file:///a.py") == Change(8, "y", "z")
    history.closed("file:///a.py")
    assert history.latest("file:///a.py") is None


def test_a_word_typed_over_key_by_key_is_one_group():
    history = RecentEdits(clock=lambda: 0.0)
    history.opened("file:///t.py", "count = 0\nx = count\n")
    typed = ["t = 0", "ta = 0", "tal = 0", "tall = 0", "tally = 0"]  # "count" selected, then t, a, l, l, y
    for line in typed:
        history.changed("file:///t.py", line + "\nx = count\n")
    assert history.diffs(lambda uri: "t.py") == (
        "--- a/t.py\n+++ b/t.py\n@@ -1,3 +1,3 @@\n-count = 0\n+tally = 0\n x = count\n ",)


def test_a_diff_too_long_is_left_out():
    assert unified_diff("a.py", "x\n", "x\n" + "y\n" * 50) is None
    assert unified_diff("a.py", "same", "same") is None


def test_the_demo_model_carries_a_rename_on_to_the_next_line_with_the_word():
    before = "def f(count):\n    n = counter\n    return count + 1\n"
    after = before.replace("f(count)", "f(total)")
    prompt = build_prompt("m.py", "python", window_at(after, 11, 3, 8), (unified_diff("m.py", before, after),))

    async def answer() -> str:
        return "".join([part async for part in DemoNextEditor().complete(prompt)])

    assert rewritten(asyncio.run(answer())) == after.replace("return count", "return total").rstrip("\n") + "\n"
