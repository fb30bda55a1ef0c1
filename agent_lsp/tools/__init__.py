"""The model-facing tools, one file each; `ALL` lists the built-in ones in the order the model sees them,
`language_tools` those a language server answers (web_fetch and skill are made per chat by sessions/assembly.py)."""

from typing import Optional

from agent_lsp.core.ports import LanguageFeatures
from agent_lsp.core.tool import Tool
from agent_lsp.tools import (
    call_hierarchy,
    delete_symbol,
    document_symbols,
    edit_file,
    find_references,
    find_symbol,
    get_diagnostics,
    go_to_definition,
    hover,
    impact,
    insert_symbol,
    list_files,
    list_open_buffers,
    read_file,
    read_symbol,
    rename_symbol,
    replace_symbol,
    run_command,
    search,
    skill,
    task,
    todo_write,
    web_fetch,
    write_file,
)

ALL: list[Tool] = [
    list_open_buffers.TOOL,
    read_file.TOOL,
    list_files.TOOL,
    search.TOOL,
    get_diagnostics.TOOL,
    edit_file.TOOL,
    write_file.TOOL,
    run_command.TOOL,
    todo_write.TOOL,
    task.TOOL,
]
BY_NAME: dict[str, Tool] = {t.name: t for t in [*ALL, web_fetch.WebFetch(), skill.SkillTool(())]}
"""Every built-in tool by name, web_fetch and skill (made per chat) included: for describing past calls."""

LANGUAGE_TOOLS = (
    find_symbol.FindSymbol,
    go_to_definition.GoToDefinition,
    find_references.FindReferences,
    hover.Hover,
    document_symbols.DocumentSymbols,
    call_hierarchy.CallHierarchy,
    rename_symbol.RenameSymbol,
    read_symbol.ReadSymbol,
    replace_symbol.ReplaceSymbol,
    insert_symbol.InsertSymbol,
    delete_symbol.DeleteSymbol,
    impact.Impact,
)
"""The tools of PROTOCOL §9 "Language intelligence" and §11 "Edits by symbol", in the order the model sees them."""


def language_tools(features: Optional[LanguageFeatures]) -> list[Tool]:
    """The language tools whose methods `features` can answer somewhere in the workspace, each with the origin of
    its first method ("editor", "languageServer:<name>")."""
    methods = features.methods() if features is not None else {}
    return [cls(origin=methods[cls.needs[0]]) for cls in LANGUAGE_TOOLS if all(m in methods for m in cls.needs)]
