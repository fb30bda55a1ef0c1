"""lsp/documents.py: a suggestion request's document pinned as it was read, and what its handler gets once the
pin was dropped in a burst (the document while it is still at the version pinned, else nothing — never a later
version)."""

from __future__ import annotations

from types import SimpleNamespace

from agent_lsp.lsp import documents


class Connection:
    """A server whose protocol and workspace hold one open document (pins are kept per protocol, weakly)."""

    def __init__(self, version: int, text: str) -> None:
        doc = SimpleNamespace(uri="file:///a.py", version=version, source=text, language_id="python")
        self.workspace = SimpleNamespace(text_documents={"file:///a.py": doc})
        self.protocol = self


def params() -> dict:
    return {"textDocument": {"uri": "file:///a.py"}, "position": {"line": 0, "character": 0}}


def test_a_request_reads_its_document_as_it_was_read_not_as_it_is_now():
    ls = Connection(1, "one")
    asked = params()
    documents.pin(ls.protocol, asked)
    ls.workspace.text_documents["file:///a.py"].version = 2
    found = documents.as_of_request(ls, asked, "file:///a.py")
    assert (found.version, found.source) == (1, "one")


def test_a_request_whose_pin_was_dropped_in_a_burst_gets_no_document_not_a_later_one():
    ls = Connection(1, "one")
    burst = [params() for _ in range(documents.PINS_KEPT + 5)]
    for asked in burst:
        documents.pin(ls.protocol, asked)
    doc = ls.workspace.text_documents["file:///a.py"]
    doc.version, doc.source = 9, "nine"
    assert [documents.as_of_request(ls, asked, "file:///a.py") for asked in burst[:5]] == [None] * 5
    assert [documents.as_of_request(ls, asked, "file:///a.py").version for asked in burst[5:]] == \
        [1] * documents.PINS_KEPT
    assert documents.as_of_request(ls, params(), "file:///a.py").version == 9  # never pinned: as it is now


def test_a_request_whose_pin_was_dropped_gets_the_document_while_it_is_still_at_the_version_pinned():
    ls = Connection(1, "one")
    burst = [params() for _ in range(documents.PINS_KEPT + 5)]
    for asked in burst:
        documents.pin(ls.protocol, asked)
    assert [documents.as_of_request(ls, asked, "file:///a.py").source for asked in burst] == \
        ["one"] * (documents.PINS_KEPT + 5)
