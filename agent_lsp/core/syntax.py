"""Python syntax errors, computed without an editor: the diagnostics of last resort."""

from __future__ import annotations

import ast
from pathlib import Path

from agent_lsp.core.ports import Diagnostic


def python_syntax_errors(path: Path, text: str) -> list[Diagnostic]:
    """The syntax error of a Python source, if any, as a diagnostic."""
    try:
        ast.parse(text, filename=str(path))
    except SyntaxError as e:
        return [Diagnostic(path=path, line=e.lineno or 1, column=e.offset or 1, severity="error",
                           message=e.msg, source="agent-lsp")]
    except ValueError as e:  # e.g. source with NUL bytes
        return [Diagnostic(path=path, line=1, column=1, severity="error", message=str(e), source="agent-lsp")]
    return []
