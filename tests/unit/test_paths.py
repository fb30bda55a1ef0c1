"""One rule for paths: a symlinked file has one name whatever route named it; file: URIs parse alike on POSIX and
Windows."""

from __future__ import annotations

import os
from pathlib import PurePosixPath, PureWindowsPath

import pytest

from agent_lsp.acp.convert import acp_path
from agent_lsp.core.paths import display, folder_uri, is_inside, real, uri_to_path, uri_to_pure_path
from agent_lsp.sidecar.positions import Texts
from agent_lsp.tools.paths import resolve


def test_a_symlinked_file_gets_one_name_from_every_route(tmp_path):
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "real.py").write_text("x = 1\n")
    os.symlink(root / "src" / "real.py", root / "link.py")
    os.symlink(root, tmp_path / "ws-link")  # a workspace folder opened through a link too
    one = root / "src" / "real.py"
    link_uri = (root / "link.py").as_uri()
    through_folder = (tmp_path / "ws-link" / "link.py").as_uri()
    names = {
        "a URI (editor buffers, language answers, suggestions)": uri_to_path(link_uri),
        "a URI through a linked folder": uri_to_path(through_folder),
        "a tool's relative path": resolve([root], "link.py"),
        "a tool's URI": resolve([root], link_uri),
        "a tool's path in a linked folder": resolve([tmp_path / "ws-link"], "link.py"),
        "ACP": real(acp_path(link_uri)),
        "real()": real(root / "link.py"),
    }
    assert names == dict.fromkeys(names, one)
    assert str(acp_path(link_uri)) == str(one)
    assert display([tmp_path / "ws-link"], uri_to_path(through_folder)) == "src/real.py"
    assert is_inside(uri_to_path(link_uri), tmp_path / "ws-link")
    assert folder_uri((tmp_path / "ws-link").as_uri() + "/") == root.as_uri()
    assert Texts({}).line(link_uri, 0) == "x = 1"


@pytest.mark.parametrize("uri, path", [
    ("file:///C:/Users/me/a%20b.py", r"C:\Users\me\a b.py"),
    ("file:///c%3A/Users/me/x.py", r"c:\Users\me\x.py"),  # VS Code's spelling
    ("file:///C:", "C:\\"),
    ("file://localhost/D:/x", r"D:\x"),
    ("file://server/share/dir/x.py", r"\\server\share\dir\x.py"),  # a UNC share
    ("FILE:///C:/x", r"C:\x"),
    ("untitled:Untitled-1", None),
    ("file:///C:/a%00b", None),
])
def test_file_uris_on_windows(uri, path):
    found = uri_to_pure_path(uri, PureWindowsPath)
    assert (str(found) if found is not None else None) == path
    if found is not None and found.drive:
        assert uri_to_pure_path(found.as_uri(), PureWindowsPath) == found  # and back


@pytest.mark.parametrize("uri, path", [
    ("file:///w/a%20b.py", "/w/a b.py"),
    ("file://localhost/w/x", "/w/x"),
    ("file://server/share/x", None),  # another host: no local file
    ("file:///C:/x", "/C:/x"),  # a drive letter means nothing on POSIX
    ("https://example.com/x", None),
])
def test_file_uris_on_posix(uri, path):
    found = uri_to_pure_path(uri, PurePosixPath)
    assert (str(found) if found is not None else None) == path
