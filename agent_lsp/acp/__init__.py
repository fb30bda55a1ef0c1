"""The Agent Client Protocol front end: `agent-lsp --acp` (imported only on that path)."""
