"""A language server that does not answer: references, definitions and call hierarchy never come back, hover
fails. Beside a real one, it shows that agent/languageFeature waits a bounded time, keeps the answers that came,
and names the server that failed. Runs on the pygls of jedi-language-server's venv."""
import asyncio

from lsprotocol import types
from pygls.lsp.server import LanguageServer

server = LanguageServer("silent", "0")


@server.feature(types.TEXT_DOCUMENT_REFERENCES)
async def references(ls: LanguageServer, params: types.ReferenceParams):
    await asyncio.Event().wait()


@server.feature(types.TEXT_DOCUMENT_DEFINITION)
async def definition(ls: LanguageServer, params: types.DefinitionParams):
    await asyncio.Event().wait()


@server.feature(types.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY)
async def prepare_call_hierarchy(ls: LanguageServer, params: types.CallHierarchyPrepareParams):
    await asyncio.Event().wait()


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: LanguageServer, params: types.HoverParams):
    raise RuntimeError("hover is broken here")


server.start_io()
