"""Settings no one can use at start (a lone UTF-16 surrogate in a member name or a value of initializationOptions,
written as a JSON escape): a warning naming the setting, and the server up, never a failed start."""

from __future__ import annotations

import asyncio
import os

import pytest

from tests.reliability.conftest import server_env, tally
from tests.reliability.rawlsp import ANSWER_CEILING, RawServer, frame

CASES = [  # (initializationOptions as JSON text, the setting the warning names)
    (r'{"\ud800": 1, "maxTurns": 3}', r"\ud800"),
    (r'{"maxTurns": {"\udc00x": 1}}', r"maxTurns.\udc00x"),
    (r'{"model": "claude-\ud83d", "mcpServers": {"a": {"command": "x", "env": {"K": "\udfff"}}}}', "model"),
    (r'{"mcpServers": {"a": {"command": "x", "env": {"K": "\udfff"}}}}', "mcpServers.a.env.K"),
]


@pytest.mark.parametrize("options, named", CASES, ids=[c[1] for c in CASES])
async def test_a_lone_surrogate_in_initialization_options_is_a_warning_not_a_failed_start(
        options, named, fake_api, workspace, tmp_path):
    fake_api.default = {"content": [{"type": "text", "text": "up"}]}
    server = await RawServer.start("--data-dir", str(tmp_path / "state"), env=server_env(fake_api.base_url))
    try:
        uri = workspace.as_uri()
        server.pending[1] = asyncio.get_running_loop().create_future()
        server.send_raw(frame(
            '{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": %d, "rootUri": "%s", '
            '"capabilities": {}, "workspaceFolders": [{"uri": "%s", "name": "ws"}], "initializationOptions": %s}}'
            % (os.getpid(), uri, uri, options)))
        answer = await asyncio.wait_for(server.pending[1], ANSWER_CEILING)
        assert "capabilities" in answer.get("result", {}), answer
        server.notify("initialized", {})
        chat = await server.request("agent/chat", {"message": "still up?"})
        assert chat["result"]["stopReason"] == "end_turn"
        warnings = [n["params"]["message"] for n in server.notifications if n["method"] == "window/showMessage"]
        assert f"agent-lsp: setting `{named}` from initializationOptions contains a lone UTF-16 surrogate (not valid " \
               "Unicode); it is ignored." in warnings, warnings
        assert await server.stop() == 0
        assert b"Traceback" not in server.stderr
    finally:
        if server.proc.returncode is None:
            server.proc.kill()
        await server.wait_exit()
    tally("fuzz: requests, settings, frames", cases=1)
