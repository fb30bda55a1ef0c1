"""Stop during a long search: the abort is served while rg runs, rg dies with it, and no model request follows."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.e2e.conftest import chat, server_process, shape, text, tool_use, updates_of
from tests.waiting import until

# Unicode word boundaries over non-ASCII text keep ripgrep off its fast paths: seconds, not milliseconds.
SLOW_PATTERN = r"(?:\b\w+\b\W+){1,8}\d{9}"


def make_tree(root: Path, files: int = 10_000) -> None:
    body = "".join(f"λ line {n} αβγ δέλτα {n * 7} ωμέγα\n" for n in range(25))
    for n in range(files):
        folder = root / f"pkg{n // 100:03d}"
        folder.mkdir(exist_ok=True)
        (folder / f"m{n % 100:03d}.py").write_text(body, encoding="utf-8")


def rg_children(pid: int) -> list[int]:
    """The rg processes whose parent is `pid`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name, rest = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()
        if name == "rg" and int(rest[1]) == pid:
            found.append(int(entry.name))
    return found


async def test_abort_during_a_search_over_ten_thousand_files(lsp):
    await asyncio.to_thread(make_tree, lsp.workspace)
    lsp.fake_api.add(tool_use("search", {"pattern": SLOW_PATTERN}, id="toolu_s1"), text("never asked for"))
    client = await lsp.start()
    server_pid = server_process(client).pid
    task = asyncio.ensure_future(chat(client, "find it"))
    await until(lambda: rg_children(server_pid) != [], timeout=60)
    session_id = client.updates[0]["sessionId"]
    assert await client.protocol.send_request_async("agent/abort", {"sessionId": session_id}) == {"aborted": True}
    result = await task
    assert result["stopReason"] == "aborted"
    assert shape(updates_of(client)) == ["turn_start", "usage", "tool_call", "tool_call_update:running",
                                         "tool_call_update:cancelled"]
    assert len(lsp.fake_api.requests) == 1  # the chat ended without another model request
    await until(lambda: rg_children(server_pid) == [], timeout=30)  # killed and reaped (a zombie shows in /proc)

