"""The standard LSP requests a LanguageFeatures port may answer (PROTOCOL §9): the one list, light enough for
start-up (`initialize` sends it to the client as `experimental.agent.languageMethods`)."""

LANGUAGE_METHODS = (
    "textDocument/definition",
    "textDocument/typeDefinition",
    "textDocument/implementation",
    "textDocument/references",
    "textDocument/hover",
    "textDocument/documentSymbol",
    "workspace/symbol",
    "textDocument/prepareCallHierarchy",
    "callHierarchy/incomingCalls",
    "callHierarchy/outgoingCalls",
    "textDocument/prepareRename",
    "textDocument/rename",
)
