"""finish: offered only when a chat asks for structured output (`outputSchema`); its input schema is that schema,
and a call with valid input ends the chat with the input as the chat's `structuredOutput`.

A schema whose root is not an object is wrapped as `{value: <schema>}` (tool inputs are objects) and unwrapped
in the result. Invalid input is an error result listing what is wrong, and the model tries again.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict

from agent_lsp.core.ports import ToolSpec
from agent_lsp.core.tool import Tool, ToolContext, ToolError, ToolInput, ToolOutput

MAX_ERRORS = 10


class InvalidSchema(ValueError):
    """The schema is not a valid JSON Schema."""


class FinishInput(ToolInput):
    """Any object: the JSON Schema, not pydantic, decides what is valid."""

    model_config = ConfigDict(extra="allow", defer_build=True)


def _validator(schema: dict[str, Any]) -> Any:
    import jsonschema  # on the first chat with an outputSchema: it costs half a second to import

    cls = jsonschema.validators.validator_for(schema)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as e:
        raise InvalidSchema(e.message) from None
    return cls(schema)


class Finish(Tool):
    name = "finish"
    kind = "other"
    description = (
        "Call this once the task is done, with the final answer as input in exactly the required shape. The chat "
        "ends when the input is valid; otherwise you are told what is wrong and can call it again."
    )
    Input = FinishInput

    def __init__(self, schema: dict[str, Any]) -> None:
        self.wrapped = schema.get("type") != "object"
        self.schema = {"type": "object", "properties": {"value": schema}, "required": ["value"],
                       "additionalProperties": False} if self.wrapped else schema
        self._validate = _validator(self.schema)

    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.schema)

    def title(self, input: FinishInput) -> str:
        return "Finish"

    async def run(self, ctx: ToolContext, input: FinishInput) -> ToolOutput:
        value = input.model_dump()
        errors = sorted(self._validate.iter_errors(value), key=lambda e: list(e.absolute_path))
        if errors:
            listed = "\n".join(f"- {'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}"
                               for e in errors[:MAX_ERRORS])
            more = f"\n- … and {len(errors) - MAX_ERRORS} more" if len(errors) > MAX_ERRORS else ""
            raise ToolError(f"The input does not match the required schema:\n{listed}{more}\nCall finish again "
                            "with corrected input.")
        return ToolOutput("Accepted: the chat is done.", ends_chat=True,
                          value=value["value"] if self.wrapped else value)


def finish_tool(schema: Any) -> Finish:
    """The finish tool for an outputSchema; InvalidSchema when it is not an object or not a valid JSON Schema."""
    if not isinstance(schema, dict):
        raise InvalidSchema("must be a JSON Schema object")
    return Finish(schema)
