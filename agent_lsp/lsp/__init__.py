"""The LSP edge: the only package that imports pygls or lsprotocol."""
