"""The model-facing tools, one file each; `ALL` lists them in the order the model sees them."""

from agent_lsp.core.tool import Tool
from agent_lsp.tools import (
    edit_file,
    get_diagnostics,
    list_files,
    list_open_buffers,
    read_file,
    run_command,
    search,
    task,
    todo_write,
    write_file,
)

ALL: list[Tool] = [
    list_open_buffers.TOOL,
    read_file.TOOL,
    list_files.TOOL,
    search.TOOL,
    get_diagnostics.TOOL,
    edit_file.TOOL,
    write_file.TOOL,
    run_command.TOOL,
    todo_write.TOOL,
    task.TOOL,
]
BY_NAME: dict[str, Tool] = {t.name: t for t in ALL}
