"""The naive reference for next edits: a pygls server whose every `textDocument/copilotInlineEdit` makes one model
call (agent-lsp's own window and prompt, on `{baseUrl}/completions` through the `openai` SDK) and answers the
rewritten window's one edit, with no filter, no freshness check and no reuse.
`python bench/naive_next_edit_server.py BASE_URL`."""

import sys
from pathlib import Path

from pygls.lsp.server import LanguageServer

sys.path.insert(0, str(Path(__file__).parents[1]))
from agent_lsp.completions.next_edit import build_prompt, fim_arguments, max_tokens, minimal_edit, \
    rewritten, window_at  # noqa: E402

server = LanguageServer("naive-next-edits", "0")
client = None


def _position(text: str, offset: int) -> dict:
    line_start = text.rfind("\n", 0, offset) + 1
    return {"line": text.count("\n", 0, offset), "character": len(text[line_start:offset].encode("utf-16-le")) // 2}


@server.feature("textDocument/copilotInlineEdit")
async def inline_edit(ls: LanguageServer, params) -> dict:
    global client
    if client is None:
        import openai

        client = openai.AsyncOpenAI(base_url=sys.argv[1], api_key="naive", max_retries=0)
    document = ls.workspace.get_text_document(params.textDocument.uri)
    text = document.source
    offset = document.offset_at_position(params.position)
    window = window_at(text, offset, 3, 8)
    prompt = build_prompt(Path(document.path).name, "python", window, ())
    answer = await client.completions.create(model="naive", max_tokens=max_tokens(prompt), stream=False,
                                             **fim_arguments(prompt))
    new = rewritten(answer.choices[0].text if answer.choices else "")
    edit = minimal_edit(window, new) if new is not None else None
    if edit is None:
        return {"edits": []}
    return {"edits": [{"range": {"start": _position(text, edit.start), "end": _position(text, edit.end)},
                       "text": edit.text, "textDocument": {"uri": params.textDocument.uri,
                                                           "version": params.textDocument.version}}]}


if __name__ == "__main__":
    server.start_io()
