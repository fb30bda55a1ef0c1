"""A language server with none of the agent/* methods (pygls answers MethodNotFound), for the client's
"old server" path."""
from pygls.lsp.server import LanguageServer

LanguageServer("bare", "0").start_io()
