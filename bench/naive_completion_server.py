"""The naive reference for suggestions: a pygls server whose every `textDocument/inlineCompletion` makes one model
call with the whole text before and after the cursor, not streamed, with no reuse, no cache and no freshness check:
FIM `prompt` and `suffix` (the `openai` SDK), or the text with a hole marker to a chat model (`chat`: the `openai`
SDK; `anthropic`: the `anthropic` SDK). `python bench/naive_completion_server.py BASE_URL [fim|chat|anthropic]`."""

import sys

from lsprotocol import types
from pygls.lsp.server import LanguageServer

server = LanguageServer("naive-completions", "0")
client = None
API = sys.argv[2] if len(sys.argv) > 2 else "fim"


async def ask(before: str, after: str) -> str:
    global client
    if API == "anthropic":
        import anthropic

        client = client or anthropic.AsyncAnthropic(base_url=sys.argv[1].removesuffix("/v1"), api_key="naive",
                                                    max_retries=0)
        answer = await client.messages.create(model="naive", max_tokens=128, messages=[
            {"role": "user", "content": f"{before}<hole/>{after}"}])
        text = "".join(block.text for block in answer.content if block.type == "text")
        return text.removeprefix("<completion>").removesuffix("</completion>")
    import openai

    client = client or openai.AsyncOpenAI(base_url=sys.argv[1], api_key="naive", max_retries=0)
    if API == "chat":
        answer = await client.chat.completions.create(model="naive", max_tokens=128, messages=[
            {"role": "user", "content": f"{before}<hole/>{after}"}])
        text = answer.choices[0].message.content or "" if answer.choices else ""
        return text.removeprefix("<completion>").removesuffix("</completion>")
    answer = await client.completions.create(model="naive", prompt=before, suffix=after, max_tokens=128, stream=False)
    return answer.choices[0].text if answer.choices else ""


@server.feature(types.TEXT_DOCUMENT_INLINE_COMPLETION, types.InlineCompletionOptions())
async def inline_completion(ls: LanguageServer, params: types.InlineCompletionParams) -> types.InlineCompletionList:
    document = ls.workspace.get_text_document(params.text_document.uri)
    offset = document.offset_at_position(params.position)
    text = await ask(document.source[:offset], document.source[offset:])
    at = types.Range(params.position, params.position)
    return types.InlineCompletionList(items=[types.InlineCompletionItem(insert_text=text, range=at)] if text else [])


if __name__ == "__main__":
    server.start_io()
