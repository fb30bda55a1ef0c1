"""An MCP server's tool as one of ours: named `mcp__<server>__<tool>`, the server's JSON Schema as its input
schema, kind "read" when the tool declares `readOnlyHint` (else "execute": asked in default mode, hidden in plan)."""

from __future__ import annotations

import re
from typing import Any, Awaitable, Callable, Optional

from pydantic import ConfigDict

from agent_lsp.core.ports import ToolSpec
from agent_lsp.core.tool import Tool, ToolContext, ToolError, ToolInput, ToolOutput, bound

Call = Callable[[str, dict[str, Any]], Awaitable[tuple[str, bool]]]
"""Calls a tool of the server by its own name: (text, is_error); raises ToolError when the server is gone."""


class McpInput(ToolInput):
    """Any object: the server's JSON Schema, checked by the server, decides what is valid."""

    model_config = ConfigDict(extra="allow", defer_build=True)


def model_name(server: str, tool: str) -> str:
    """`mcp__<server>__<tool>`, in the characters and length model APIs accept for tool names."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", f"mcp__{server}__{tool}")[:64]


def schema_problem(schema: Any) -> Optional[str]:
    """Why a tool's input schema is not a JSON Schema a model API accepts, or None: a request offering such a tool
    would be refused whole (every chat failing), so the tool is left out instead."""
    if not isinstance(schema, dict):
        return "it is not an object"
    import jsonschema  # only once an MCP server is configured (it costs half a second to import)

    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as e:
        where = "/".join(str(p) for p in e.absolute_path)
        return f"{e.message}{f' at {where}' if where else ''}"
    return None


class McpTool(Tool):
    Input = McpInput

    def __init__(self, server: str, tool: str, description: str, schema: dict[str, Any], read_only: bool,
                 call: Call) -> None:
        self.server, self.tool, self._call = server, tool, call
        self.name = model_name(server, tool)
        self.kind = "read" if read_only else "execute"
        self.description = description or f"The `{tool}` tool of the MCP server `{server}`."
        self.schema = schema if isinstance(schema, dict) and schema.get("type") == "object" else {"type": "object"}

    @property
    def origin(self) -> str:
        return f"mcp:{self.server}"

    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.schema)

    def title(self, input: McpInput) -> str:
        return f"{self.server}: {self.tool}"

    async def run(self, ctx: ToolContext, input: McpInput) -> ToolOutput:
        text, is_error = await self._call(self.tool, input.model_dump())
        if is_error:
            raise ToolError(bound(text) or f"{self.tool} failed.")
        return ToolOutput(text)
