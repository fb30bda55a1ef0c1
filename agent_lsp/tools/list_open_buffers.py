"""list_open_buffers: the documents open in the editor, and which have unsaved changes."""

from __future__ import annotations

import asyncio

from agent_lsp.core.tool import Tool, ToolContext, ToolInput, ToolOutput, bound


class ListOpenBuffersInput(ToolInput):
    pass


class ListOpenBuffers(Tool):
    name = "list_open_buffers"
    kind = "read"
    description = (
        "List the documents open in the user's editor: uri, languageId, version, line count, and whether "
        "the buffer has unsaved changes (read_file returns the unsaved text)."
    )
    Input = ListOpenBuffersInput

    def title(self, input: ListOpenBuffersInput) -> str:
        return "List open buffers"

    async def run(self, ctx: ToolContext, input: ListOpenBuffersInput) -> ToolOutput:
        docs = ctx.editor.open_documents()
        if not docs:
            return ToolOutput("No documents are open in the editor.")

        def describe() -> list[str]:  # may read every buffer's file: in a thread, not on the event loop
            return [f"{d.uri}  languageId={d.language_id}  version={d.version}  lines={len(d.text.splitlines())}"
                    f"  {'unsaved changes' if d.unsaved else 'saved'}" for d in docs]

        return ToolOutput(bound("\n".join(await asyncio.to_thread(describe))))


TOOL = ListOpenBuffers()
