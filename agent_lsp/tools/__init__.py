"""The model-facing tools, one file each, named after its tool (`read_file.py` is `read_file`).

`BUILTIN` and `LANGUAGE` name them in the order the model sees them, known without importing a tool (`initialize`
advertises them, and start-up imports no tool). `ALL` (the built-in tools), `BY_NAME` and `LANGUAGE_TOOLS` are
the tools themselves, imported on first use; `language_tools` picks those a language server answers (web_fetch
and skill are made per chat by sessions/assembly.py). A new built-in tool is its file (with a `TOOL`), its test and
its name here; a new language tool is its file (a LanguageTool with `needs`), its test and its name here."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    from agent_lsp.core.ports import LanguageFeatures
    from agent_lsp.core.tool import Tool
    from agent_lsp.tools.language_tool import LanguageTool

    ALL: list[Tool]
    BY_NAME: dict[str, Tool]
    LANGUAGE_TOOLS: tuple[type[LanguageTool], ...]

BUILTIN = ("list_open_buffers", "read_file", "list_files", "search", "get_diagnostics", "edit_file", "write_file",
           "run_command", "todo_write", "task")
"""The built-in tools every chat is offered, in order: the module of each name holds its `TOOL`."""
LANGUAGE = ("find_symbol", "go_to_definition", "find_references", "hover", "document_symbols", "call_hierarchy",
            "rename_symbol", "read_symbol", "replace_symbol", "insert_symbol", "delete_symbol", "impact")
"""The tools of PROTOCOL §9 "Language intelligence" and §11 "Edits by symbol", in order: the module of each name holds its LanguageTool."""


def _module(name: str) -> Any:
    return importlib.import_module(f"{__name__}.{name}")


def _language_tool(name: str) -> "type[LanguageTool]":
    """The LanguageTool class the module `name` defines."""
    from agent_lsp.tools.language_tool import LanguageTool

    module = _module(name)
    return next(v for v in vars(module).values() if isinstance(v, type) and issubclass(v, LanguageTool)
                and v.__module__ == module.__name__)


def __getattr__(name: str) -> Any:
    """ALL, BY_NAME and LANGUAGE_TOOLS, made on first use (then plain attributes)."""
    if name == "ALL":
        value: Any = [_module(n).TOOL for n in BUILTIN]
    elif name == "BY_NAME":
        from agent_lsp.tools.skill import SkillTool
        from agent_lsp.tools.web_fetch import WebFetch

        # every built-in tool by name, web_fetch and skill (made per chat) included: for describing past calls
        value = {t.name: t for t in [*__getattr__("ALL"), WebFetch(), SkillTool(())]}
    elif name == "LANGUAGE_TOOLS":
        value = tuple(_language_tool(n) for n in LANGUAGE)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def language_tools(features: "Optional[LanguageFeatures]") -> "list[Tool]":
    """The language tools whose methods `features` can answer somewhere in the workspace, each with the origin of
    its first method ("editor", "languageServer:<name>")."""
    methods = features.methods() if features is not None else {}
    return [cls(origin=methods[cls.needs[0]]) for cls in __getattr__("LANGUAGE_TOOLS")
            if all(m in methods for m in cls.needs)]
