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
            found |= {f"{node.module}.{a.name}" for a in node.names}  # `from agent_lsp import protocol`
    return found


def modules(folder: str) -> list[Path]:
    return sorted((PACKAGE / folder).rglob("*.py"))


@pytest.mark.parametrize("path", modules("core"), ids=lambda p: p.name)
def test_core_imports_only_core_and_no_vendor_sdk(path):
    bad = [m for m in imports(path) if m.split(".")[0] in VENDOR
           or (m.startswith("agent_lsp.") and not m.startswith("agent_lsp.core"))]
    assert bad == []


FRONT_ENDS = ("pygls", "lsprotocol", "acp")
FRONT_END_MODULES = ("agent_lsp.protocol", "agent_lsp.lsp", "agent_lsp.acp")


@pytest.mark.parametrize("path", modules("core") + modules("tools") + modules("sessions") + modules("models"),
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_nothing_below_the_front_ends_imports_their_wire_types(path):
    """sessions/, core/, tools/ and models/ are protocol-neutral: each front end converts at its own edge."""
    bad = [m for m in imports(path) if m.split(".")[0] in FRONT_ENDS
           or any(m == f or m.startswith(f + ".") for f in FRONT_END_MODULES)]
    assert bad == []


def test_no_module_of_the_package_imports_itself_through_a_circle():
    """Lazy imports inside functions count too: a circle there is one refactoring away from an ImportError."""
    graph = {}
    for path in PACKAGE.rglob("*.py"):
        name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
        graph[name] = {m for m in imports(path) if m.startswith("agent_lsp.")}
    graph = {n: {m if m in graph else m.rpartition(".")[0] for m in deps} & graph.keys() - {n}
             for n, deps in graph.items()}

    def circle_from(start: str) -> list[str]:
        stack, seen = [(start, [start])], set()
        while stack:
            node, trail = stack.pop()
            for dep in graph[node]:
                if dep == start:
                    return trail
                if dep not in seen:
                    seen.add(dep)
                    stack.append((dep, trail + [dep]))
        return []

    circles = {n: circle_from(n) for n in graph if n.startswith("agent_lsp.models")}
    assert {n: c for n, c in circles.items() if c} == {}


def test_starting_the_server_imports_no_sdk_and_no_models():
    code = ("import sys; from agent_lsp.lsp.server import create_server; create_server({}); "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'anthropic', 'httpx2', 'pydantic', 'pathspec', 'acp'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_advertised_capabilities_match_the_tools_and_the_protocol():
    from typing import get_args

    from agent_lsp import tools
    from agent_lsp.capabilities import TOOL_NAMES, server_agent_capabilities
    from agent_lsp.protocol import PermissionMode, ServerAgentCapabilities

    assert TOOL_NAMES == [t.name for t in tools.ALL]
    caps = server_agent_capabilities()
    assert caps["permissionModes"] == list(get_args(PermissionMode))
    assert ServerAgentCapabilities.model_validate(caps).wire() == caps
