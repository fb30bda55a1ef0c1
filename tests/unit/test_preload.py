"""models/preload.py: whoever asks first starts the import; everyone else waits for that same one."""

from __future__ import annotations

import asyncio
import sys

from agent_lsp.models import preload


def test_two_askers_share_one_import_in_one_thread(tmp_path, monkeypatch):
    (tmp_path / "preload_probe.py").write_text("import threading\nTHREAD = threading.current_thread().name\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    first, second = preload.load(["preload_probe"]), preload.load(["preload_probe"])
    assert first[0] is second[0]
    asyncio.run(preload.imported("preload_probe"))
    assert preload.IMPORTED.count("preload_probe") == 1
    assert sys.modules["preload_probe"].THREAD == "agent-lsp-preload"


def test_a_failed_import_is_left_to_the_caller_s_own_import():
    asyncio.run(preload.imported("preload_no_such_module"))  # returns; the caller's `import` then says what failed
    assert "preload_no_such_module" not in preload.IMPORTED
