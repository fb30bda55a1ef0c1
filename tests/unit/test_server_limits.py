"""core/server_limits.py: a server's known limits found by the names it and its clients give it."""

from __future__ import annotations

import pytest

from agent_lsp.core.server_limits import reference_files_limit


@pytest.mark.parametrize("name", ["jedi-language-server", "jedi_language_server", "jedi", "Jedi Language Server"])
def test_jedi_by_every_name_it_goes_by_reads_at_most_30_files_per_reference_search(name):
    assert reference_files_limit(name) == 30


@pytest.mark.parametrize("name", [None, "", "pyright", "basedpyright", "pylsp", "jedix", "rust-analyzer"])
def test_other_servers_have_no_known_limit(name):
    assert reference_files_limit(name) is None
