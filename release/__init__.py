"""`python -m release`: the release artifacts of agent-lsp, built into dist/ (see release/README.md)."""
