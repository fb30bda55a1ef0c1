"""models/preload.py: whoever asks first starts the import; everyone else waits for that same one."""

from __future__ import annotations

import asyncio
import sys
import threading

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


GATE = (threading.Event(), threading.Event())
"""(the import has begun, the import may end): a slow import held by the test."""


def test_an_asker_cancelled_while_the_import_runs_leaves_it_to_the_others(tmp_path, monkeypatch):
    """A suggestion cancelled while the SDK loads (or a chat aborted then) must not cancel the shared import: every
    later asker would wait for it for ever, and the import thread die on setting its result."""
    (tmp_path / "preload_slow_a.py").write_text(f"from {__name__} import GATE\nGATE[0].set()\nGATE[1].wait(30)\n")
    (tmp_path / "preload_slow_b.py").write_text("VALUE = 2\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    modules = ("preload_slow_a", "preload_slow_b")

    async def go() -> None:
        first = asyncio.ensure_future(preload.imported(*modules))
        await asyncio.to_thread(GATE[0].wait, 30)
        first.cancel()
        await asyncio.gather(first, return_exceptions=True)
        GATE[1].set()
        await asyncio.wait_for(preload.imported(*modules), 10)

    asyncio.run(go())
    assert [f.result() for f in preload.load(modules)] == [None, None]
    assert preload.IMPORTED[-2:] == list(modules)
