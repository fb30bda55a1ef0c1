"""agent-lsp: a coding agent served over the Language Server Protocol."""

__version__ = "0.1.0"
