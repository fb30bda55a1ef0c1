"""run_command: exit codes, head and tail kept, timeouts kill the whole group."""

from __future__ import annotations

import pytest

from agent_lsp.core.tool import ToolContext, ToolError
from agent_lsp.tools.run_command import KEEP, TOOL, Output, RunCommandInput
from tests.fakes.editor import FakeEditor


async def test_exit_code_and_streamed_output(tmp_path):
    reports = []
    ctx = ToolContext(editor=FakeEditor(root=tmp_path.resolve()), report=reports.append)
    out = await TOOL.run(ctx, RunCommandInput(command="pwd; echo oops >&2; exit 4"))
    assert out.text == f"Exit code 4\n{tmp_path.resolve()}\noops"
    assert reports and reports[0].startswith(str(tmp_path.resolve()))


async def test_timeout_kills_the_group(tmp_path):
    ctx = ToolContext(editor=FakeEditor(root=tmp_path.resolve()))
    with pytest.raises(ToolError, match="timed out after 1 s and was killed"):
        await TOOL.run(ctx, RunCommandInput(command="echo started; sleep 30 & wait", timeout=1))


def test_output_keeps_head_and_tail():
    output = Output()
    output.add("h" * KEEP)
    output.add("m" * 1000)
    output.add("t" * KEEP)
    text = output.text()
    assert text.startswith("h" * KEEP + "\n[... 1000 characters cut from the middle ...]\n")
    assert text.endswith("t" * KEEP)
