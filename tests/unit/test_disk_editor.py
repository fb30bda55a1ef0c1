"""DiskEditor: the Editor port over the local file system (headless runs; ACP clients without fs/*): an edit is
written only while the file is still the text it was computed on."""

from __future__ import annotations

from agent_lsp.core.ports import EditOutcome, FileEdit, TextEdit
from agent_lsp.sessions.disk_editor import DiskEditor

CHANGED = EditOutcome(applied=False, message="the file changed on disk since it was read")


def edit(path, base: str, create: bool = False) -> FileEdit:
    return FileEdit(path=path, base_text=base, version=None, edits=[TextEdit(start=0, end=2, new_text="hello")],
                    create=create)


async def test_an_edit_of_the_text_read_is_written(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("hi there")
    editor = DiskEditor([tmp_path])
    assert await editor.apply_edit(edit(path, "hi there")) == EditOutcome(applied=True)
    assert path.read_text() == "hello there" and editor.applied == {path: ("hi there", "hello there")}


async def test_an_edit_of_a_file_changed_since_it_was_read_is_refused(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("hi again")
    assert await DiskEditor([tmp_path]).apply_edit(edit(path, "hi there")) == CHANGED
    assert path.read_text() == "hi again"


async def test_a_new_file_is_made_with_its_folders_unless_it_appeared_meanwhile(tmp_path):
    path = tmp_path / "new" / "b.txt"
    editor = DiskEditor([tmp_path])
    made = FileEdit(path=path, base_text="", version=None, edits=[TextEdit(0, 0, "made")], create=True)
    assert await editor.apply_edit(made) == EditOutcome(applied=True)
    assert path.read_text() == "made" and editor.applied[path] == (None, "made")
    assert await editor.apply_edit(made) == CHANGED


async def test_nothing_is_open_and_diagnostics_are_python_syntax_errors_computed_here(tmp_path):
    (tmp_path / "bad.py").write_text("def f(:\n")
    editor = DiskEditor([tmp_path])
    report = await editor.diagnostics([tmp_path / "bad.py", tmp_path / "notes.txt"])
    assert editor.open_documents() == [] and editor.open_document(tmp_path / "bad.py") is None
    assert (report.from_editor, report.unavailable) == (False, "there is no editor here to give its diagnostics")
    assert [(d.path.name, d.line, d.severity) for d in report.items] == [("bad.py", 1, "error")]


async def test_a_file_that_cannot_be_written_is_refused_saying_why(tmp_path):
    (tmp_path / "dir").mkdir()
    outcome = await DiskEditor([tmp_path]).apply_edit(
        FileEdit(path=tmp_path / "dir", base_text="", version=None, edits=[TextEdit(0, 0, "x")]))
    assert outcome.applied is False and outcome.message.startswith("it could not be written: ")
