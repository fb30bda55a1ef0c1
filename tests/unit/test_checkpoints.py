"""Checkpoints: the one edit that restores a text, and which files a multi-chat revert may touch."""

from pathlib import Path

import pytest

from agent_lsp.sessions.checkpoints import Checkpoint, FileChange, apply_text_edits, plan_revert
from agent_lsp.tools.editing import minimal_edit

A, B = Path("/ws/a.py"), Path("/ws/b.py")


@pytest.mark.parametrize("old, new", [
    ("abc", "abc"), ("", "x\n"), ("x\n", ""), ("hello world\n", "hello there world\n"),
    ("one\ntwo\nthree\n", "one\nthree\n"), ("aaaa", "aa"), ("é€😀", "é😀"), ("a\n", "a\n\nb\n"),
    ("a\r\n", "a\r\nb\r\n"),
])
def test_minimal_edit_restores_the_text_and_touches_only_the_difference(old, new):
    edit = minimal_edit(old, new)
    assert apply_text_edits(old, [edit]) == new
    kept_tail = len(old) - edit.end
    assert old[:edit.start] == new[:edit.start] and old[edit.end:] == new[len(new) - kept_tail:]
    assert edit.end - edit.start + len(edit.new_text) <= abs(len(old) - len(new)) + 2 * min(len(old), len(new))
    if old.endswith("\n") and new.startswith(old):  # an append: before the last line end, not on a line past it
        assert edit.start < len(old) and not old[edit.start:].strip("\r\n")


def test_a_revert_over_several_chats_restores_the_oldest_text_and_expects_the_newest():
    first = Checkpoint(chat=0, message="", files={A: FileChange(A, "a0", "a1", "edit a.py")})
    second = Checkpoint(chat=1, message="", files={A: FileChange(A, "a1", "a2", "edit a.py"),
                                                    B: FileChange(B, None, "b1", "write b.py")})
    plans = {p.path: p for p in plan_revert([second, first])}
    assert (plans[A].now, plans[A].before, plans[A].problem) == ("a2", "a0", None)
    assert (plans[B].now, plans[B].before) == ("b1", None)


def test_a_file_the_user_changed_between_two_chats_is_refused():
    first = Checkpoint(chat=0, message="", files={A: FileChange(A, "a0", "a1", "edit a.py")})
    second = Checkpoint(chat=2, message="", files={A: FileChange(A, "a1 + user", "a2", "edit a.py")})
    (plan,) = plan_revert([first, second])
    assert plan.problem == "it was changed between the chats being reverted"


def test_changed_lines_are_those_the_chat_wrote():
    change = FileChange(A, "one\ntwo\nthree\n", "one\n2\nthree\nfour\n", "edit a.py")
    assert change.changed_lines() == {1, 3}
    assert FileChange(A, None, "x\ny\n", "write a.py").changed_lines() == {0, 1}
