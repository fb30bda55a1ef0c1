"""The dependency direction holds: core imports nothing outside core, pygls stays at the LSP edge."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parents[2] / "agent_lsp"
VENDOR = ("pygls", "lsprotocol", "anthropic", "httpx", "httpx2", "openai")


def imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def modules(folder: str) -> list[Path]:
    return sorted((PACKAGE / folder).rglob("*.py"))


@pytest.mark.parametrize("path", modules("core"), ids=lambda p: p.name)
def test_core_imports_only_core_and_no_vendor_sdk(path):
    bad = [m for m in imports(path) if m.split(".")[0] in VENDOR
           or (m.startswith("agent_lsp.") and not m.startswith("agent_lsp.core"))]
    assert bad == []


@pytest.mark.parametrize("path", modules("tools") + modules("sessions") + modules("models"), ids=lambda p: p.name)
def test_only_the_lsp_edge_imports_pygls(path):
    assert [m for m in imports(path) if m.split(".")[0] in ("pygls", "lsprotocol") or m.startswith("agent_lsp.lsp")] == []


def test_starting_the_server_does_not_import_the_sdk():
    code = ("import sys; from agent_lsp.lsp.server import create_server; create_server({}); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('anthropic', 'httpx2')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
