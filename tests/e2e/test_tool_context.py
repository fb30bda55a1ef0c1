"""What a chat assembles for its tools reaches them through the session: the secretEnv setting hides a variable
from run_command."""

from __future__ import annotations

from tests.e2e.conftest import chat, sent, server_env, text, tool_use


async def test_secret_env_hides_a_variable_from_commands(lsp):
    lsp.fake_api.add(tool_use("run_command", {"command": "echo phrase=${DEPLOY_PASS_PHRASE:-hidden}"}, id="toolu_c"),
                     text("Done."))
    client = await lsp.start(init_options={"secretEnv": ["DEPLOY_*"]},
                             env=server_env(lsp.fake_api.base_url, DEPLOY_PASS_PHRASE="s3cret"))
    result = await chat(client, "run it", permissionMode="bypassPermissions")
    assert result["finalMessage"] == "Done."
    (block,) = [b for b in sent(lsp.fake_api, 1)[-1]["content"] if b.get("type") == "tool_result"]
    assert "phrase=hidden" in block["content"] and "s3cret" not in block["content"]
