"""The baseline: a bare pygls server with no features, started the same way as agent-lsp."""

from pygls.lsp.server import LanguageServer

if __name__ == "__main__":
    LanguageServer("bare", "0").start_io()
