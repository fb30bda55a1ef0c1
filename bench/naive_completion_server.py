"""The naive reference for suggestions: a pygls server whose every `textDocument/inlineCompletion` makes one model
call (the whole text before and after the cursor as FIM `prompt` and `suffix`, through the `openai` SDK), with no
reuse, no cache and no freshness check. `python bench/naive_completion_server.py BASE_URL`."""

import sys

from lsprotocol import types
from pygls.lsp.server import LanguageServer

server = LanguageServer("naive-completions", "0")
client = None


@server.feature(types.TEXT_DOCUMENT_INLINE_COMPLETION, types.InlineCompletionOptions())
async def inline_completion(ls: LanguageServer, params: types.InlineCompletionParams) -> types.InlineCompletionList:
    global client
    if client is None:
        import openai

        client = openai.AsyncOpenAI(base_url=sys.argv[1], api_key="naive", max_retries=0)
    document = ls.workspace.get_text_document(params.text_document.uri)
    offset = document.offset_at_position(params.position)
    answer = await client.completions.create(model="naive", prompt=document.source[:offset],
                                             suffix=document.source[offset:], max_tokens=128, stream=False)
    text = answer.choices[0].text if answer.choices else ""
    at = types.Range(params.position, params.position)
    return types.InlineCompletionList(items=[types.InlineCompletionItem(insert_text=text, range=at)] if text else [])


if __name__ == "__main__":
    server.start_io()
