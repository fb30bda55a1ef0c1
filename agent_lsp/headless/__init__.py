"""`agent-lsp run`: one chat without an editor, for scripts, git hooks and CI (PROTOCOL §10 "Headless runs")."""
