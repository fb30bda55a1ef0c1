"""`python -m agent_lsp`: the same as the `agent-lsp` command."""

from agent_lsp.cli import main

if __name__ == "__main__":
    main()
