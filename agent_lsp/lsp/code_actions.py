"""Code actions that hand a problem to the agent (PROTOCOL §8): "Fix with agent" on each diagnostic of the
request's context, or once on the line or selection when the context holds none (most clients send a server only
its own diagnostics, and agent-lsp publishes none), "Explain with agent" and "Refactor with agent…" on a selection.

Built from the request alone, so answering `textDocument/codeAction` stays cheap: nothing here loads the agent
stack, a model or an SDK. The chat starts only when the user picks an action (`workspace/executeCommand`).
"""

from __future__ import annotations

from typing import Any, Callable

from lsprotocol import types

FIX, EXPLAIN, REFACTOR = "agent.fix", "agent.explain", "agent.refactor"
COMMANDS = (FIX, EXPLAIN, REFACTOR)
MAX_TITLE_MESSAGE = 60


def _wanted(kind: str, only: Any) -> bool:
    """Whether the client asked for actions of `kind` (`only` limits by kind and its sub-kinds)."""
    return not only or any(kind == k or kind.startswith(f"{k}.") for k in only)


def _fix_title(diagnostic: types.Diagnostic, several: bool) -> str:
    if not several:
        return "Fix with agent"
    first_line = diagnostic.message.strip().splitlines()[0] if diagnostic.message.strip() else ""
    cut = first_line if len(first_line) <= MAX_TITLE_MESSAGE else first_line[: MAX_TITLE_MESSAGE - 1] + "…"
    return f"Fix with agent: {cut}"


def code_actions(params: types.CodeActionParams, unstructure: Callable[[Any], Any]) -> list[types.CodeAction]:
    """The agent's actions for a request; `unstructure` turns lsprotocol objects into JSON for the arguments."""
    uri = params.text_document.uri
    only = params.context.only
    actions: list[types.CodeAction] = []
    if _wanted(types.CodeActionKind.QuickFix, only):
        diagnostics = list(params.context.diagnostics)
        if not diagnostics:  # "fix this" on any line: the chat gathers the diagnostics there itself
            argument = {"uri": uri, "range": unstructure(params.range)}
            actions.append(types.CodeAction(
                title="Fix with agent", kind=types.CodeActionKind.QuickFix,
                command=types.Command(title="Fix with agent", command=FIX, arguments=[argument])))
        for diagnostic in diagnostics:
            argument = {"uri": uri, "range": unstructure(diagnostic.range), "diagnostics": [unstructure(diagnostic)]}
            actions.append(types.CodeAction(
                title=_fix_title(diagnostic, len(diagnostics) > 1), kind=types.CodeActionKind.QuickFix,
                diagnostics=[diagnostic], command=types.Command(title="Fix with agent", command=FIX, arguments=[argument])))
    selection = params.range
    if selection.start != selection.end and _wanted(types.CodeActionKind.Refactor, only):
        argument = {"uri": uri, "range": unstructure(selection)}
        for title, command in (("Explain with agent", EXPLAIN), ("Refactor with agent…", REFACTOR)):
            actions.append(types.CodeAction(title=title, kind=types.CodeActionKind.Refactor,
                                            command=types.Command(title=title, command=command, arguments=[argument])))
    return actions
