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


BELOW_FRONT_ENDS = modules("core") + modules("tools") + modules("mcp") + modules("sessions") + modules("models")


def test_the_settings_in_force_are_decided_in_config_alone():
    """Only config/ stacks the layers (`Layers.resolve`) and reads the user's file: chats, suggestions and the
    server ask config/in_force.py, so a key follows one rule for every consumer."""
    calls = [f"{p.relative_to(PACKAGE)}: {ast.unparse(n)}" for p in PACKAGE.rglob("*.py") if p.parent.name != "config"
             for n in ast.walk(ast.parse(p.read_text())) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and (n.func.attr, ast.unparse(n.func.value).split(".")[-1]) in (("resolve", "layers"), ("refresh", "user_file"))]
    assert calls == []


@pytest.mark.parametrize("path", BELOW_FRONT_ENDS,
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_nothing_below_the_front_ends_imports_their_wire_types(path):
    """sessions/, mcp/, core/, tools/ and models/ are protocol-neutral: each front end converts at its own edge."""
    bad = [m for m in imports(path) if m.split(".")[0] in FRONT_ENDS
           or any(m == f or m.startswith(f + ".") for f in FRONT_END_MODULES)]
    assert bad == []


def _module_imports() -> dict[str, set[str]]:
    """Each module of agent_lsp and the modules of agent_lsp it imports, at any depth of the file (a lazy import
    is a dependency all the same)."""
    names = {".".join(("agent_lsp", *p.relative_to(PACKAGE).with_suffix("").parts)).removesuffix(".__init__"): p
             for p in PACKAGE.rglob("*.py")}
    graph = {}
    for name, path in names.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                # `from package import module` depends on that module; `from module import name`, on the module
                targets = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in names else node.module
                           for a in node.names]
            else:
                continue
            found |= {t for t in targets if t in names and t != name}
        graph[name] = found
    return graph


def test_no_circle_inside_agent_lsp():
    """The dependency direction holds everywhere: no two modules depend on each other, however indirectly (lazy
    imports inside functions count too: a circle there is one refactoring away from an ImportError)."""
    graph = _module_imports()
    index, low, stack, on_stack, circles, counter = {}, {}, [], set(), [], [0]

    def visit(node):  # Tarjan's strongly connected components
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    assert circles == []


def test_the_capabilities_import_no_tool():
    """initialize advertises the tools and the language methods by name: start-up imports no tool module."""
    code = ("import sys; from agent_lsp.capabilities import server_agent_capabilities; server_agent_capabilities(); "
            "print(sorted(m for m in sys.modules if m.startswith('agent_lsp.tools.') or m == 'agent_lsp.core.ports'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_starting_the_server_imports_no_sdk_and_no_models():
    code = ("import sys; from agent_lsp.lsp.server import create_server; create_server({}); "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'anthropic', 'httpx2', 'h2', 'pydantic', 'pathspec', 'acp'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_advertised_capabilities_match_the_tools_and_the_protocol():
    from typing import get_args

    from agent_lsp import tools
    from agent_lsp.capabilities import server_agent_capabilities
    from agent_lsp.core.ports import LANGUAGE_METHODS
    from agent_lsp.protocol import PermissionMode, ServerAgentCapabilities

    caps = server_agent_capabilities()
    assert caps["tools"] == list(tools.BUILTIN) == [t.name for t in tools.ALL]  # each module named after its tool
    assert [cls.name for cls in tools.LANGUAGE_TOOLS] == list(tools.LANGUAGE)
    assert {m for cls in tools.LANGUAGE_TOOLS for m in cls.needs} <= set(LANGUAGE_METHODS)
    assert caps["languageMethods"] == list(LANGUAGE_METHODS)
    assert {t.name for t in tools.ALL if t.file_tool} == {"read_file", "edit_file", "write_file"}
    assert [t.name for t in tools.ALL if t.runs_command] == ["run_command"]
    assert caps["permissionModes"] == list(get_args(PermissionMode))
    assert ServerAgentCapabilities.model_validate(caps).wire() == caps


def test_a_chat_is_composed_in_one_place_below_the_front_ends():
    """Only sessions/assembly.py makes a ChatRequest: a tool or setting added there reaches LSP and ACP alike."""
    makers = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                    if any(isinstance(n, ast.Call) and getattr(n.func, "id", None) == "ChatRequest"
                           for n in ast.walk(ast.parse(p.read_text()))))
    assert makers == ["sessions/assembly.py"]


@pytest.mark.parametrize("path", BELOW_FRONT_ENDS,
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_nothing_below_the_front_ends_imports_the_sidecar(path):
    """agent_lsp.sidecar (language servers of its own, on pygls's client) is an adapter at the edge like lsp/: it is
    handed in as a LanguageFeatures port."""
    assert [m for m in imports(path) if m == "agent_lsp.sidecar" or m.startswith("agent_lsp.sidecar.")] == []


def top_level_imports(path: Path) -> set[str]:
    """The modules a file imports when it is imported (not those imported inside a function)."""
    found = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


@pytest.mark.parametrize("path", modules("completions"), ids=lambda p: p.relative_to(PACKAGE / "completions").as_posix())
def test_suggestions_never_touch_sessions_nor_the_wire_nor_the_lsp_edge(path):
    """completions/ is a pipeline of its own beside the chats: it reads the editor through the ports it owns
    (completions/ports.py), never climbing into lsp/ or sessions/."""
    bad = [m for m in imports(path) if m.split(".")[0] in FRONT_ENDS or m.startswith("agent_lsp.sessions")
           or any(m == f or m.startswith(f + ".") for f in FRONT_END_MODULES)]
    assert bad == []


@pytest.mark.parametrize("path", modules("completions"), ids=lambda p: p.relative_to(PACKAGE / "completions").as_posix())
def test_suggestions_import_a_vendor_sdk_only_in_a_provider_and_lazily(path):
    """Only completions/providers/ reaches a vendor SDK, and only when a suggestion is asked (start-up is measured)."""
    in_provider = path.parent.name == "providers"
    bad = [m for m in (top_level_imports(path) if in_provider else imports(path)) if m.split(".")[0] in VENDOR]
    assert bad == []
