"""`agent-lsp demo`: a headless editor that runs the real server on a sample workspace and prints the session."""
