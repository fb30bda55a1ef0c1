"""Checkpoints that survive restarts (PROTOCOL §9): a chat's edits are reverted by a server started afterwards on
the same data directory, or by another window on it; a file over 2 MB is refused by its hash."""

from __future__ import annotations

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from tests.e2e.conftest import chat, open_doc, text, tool_use

SOURCE = "def greet(name):\n    return 'hi ' + name\n"


async def revert(client, session_id: str, **params) -> dict:
    return await client.protocol.send_request_async("agent/revert", {"sessionId": session_id, **params})


def edit(old: str, new: str, path: str = "app.py") -> dict:
    return tool_use("edit_file", {"path": path, "old_string": old, "new_string": new})


async def test_a_revert_after_the_server_restarted_undoes_the_earlier_chats(lsp):
    lsp.fake_api.add(edit("'hi '", "'hello '"), text("Done."), edit("'hello '", "'hey '"), text("Again."))
    first = await lsp.start()
    assert "persistentCheckpoints" in first.initialize_result.capabilities.experimental["agent"]["features"]
    uri = open_doc(first, lsp.workspace / "app.py", SOURCE)
    one = await chat(first, "greet warmly", permissionMode="bypassPermissions")
    await chat(first, "greet briefly", sessionId=one["sessionId"], permissionMode="bypassPermissions")
    version, edited = first.docs[uri]
    assert edited == SOURCE.replace("'hi '", "'hey '")
    await lsp.stop_client(first)

    second = await lsp.start()  # the same --data-dir; the editor still has its buffer
    open_doc(second, lsp.workspace / "app.py", edited, version)
    assert await revert(second, one["sessionId"], toChat=0) == {"reverted": [uri], "refused": []}
    assert second.docs[uri][1] == SOURCE
    assert second.applied[-1].label == "agent-lsp: revert app.py"
    await lsp.stop_client(second)

    third = await lsp.start()  # what was reverted is gone from the store too
    open_doc(third, lsp.workspace / "app.py", SOURCE)
    with pytest.raises(JsonRpcInvalidParams, match="nothing to revert"):
        await revert(third, one["sessionId"], toChat=0)


async def test_another_window_on_the_same_data_dir_reverts_a_chat_of_the_first(lsp):
    lsp.fake_api.add(edit("'hi '", "'yo '"), text("Done."))
    first = await lsp.start()
    second = await lsp.start()
    uri = open_doc(first, lsp.workspace / "app.py", SOURCE)
    one = await chat(first, "greet", permissionMode="bypassPermissions")
    open_doc(second, lsp.workspace / "app.py", first.docs[uri][1])
    assert await revert(second, one["sessionId"]) == {"reverted": [uri], "refused": []}
    assert second.docs[uri][1] == SOURCE


async def test_a_file_over_2_mb_is_recorded_by_hash_and_refused_on_revert(lsp):
    big = lsp.workspace / "big.txt"
    original = "first line\n" + ("x" * 99 + "\n") * 25_000  # 2.5 MB
    big.write_text(original)
    lsp.fake_api.add(edit("first line", "top", "big.txt"), text("Done."))
    first = await lsp.start()
    uri = open_doc(first, big, original)
    one = await chat(first, "rename the first line", permissionMode="bypassPermissions")
    version, edited = first.docs[uri]
    assert edited == original.replace("first line", "top", 1)
    await lsp.stop_client(first)
    stored = sum(p.stat().st_size for p in lsp.data_dir.glob("sessions.db*"))
    assert stored < 2_000_000  # the text itself was not kept

    second = await lsp.start()
    open_doc(second, big, edited, version)
    assert await revert(second, one["sessionId"]) == {"reverted": [], "refused": [{"uri": uri, "reason": (
        "it is over 2 MB, so only its hash was kept and its earlier text cannot be restored")}]}
    assert second.docs[uri][1] == edited
