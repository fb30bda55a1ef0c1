"""The standard LSP requests a LanguageFeatures port may answer (PROTOCOL §9): the one list, light enough for
start-up (`initialize` sends it to the client as `experimental.agent.languageMethods`), each with the server
capability that promises it."""

CAPABILITIES = {
    "textDocument/definition": "definitionProvider",
    "textDocument/typeDefinition": "typeDefinitionProvider",
    "textDocument/implementation": "implementationProvider",
    "textDocument/references": "referencesProvider",
    "textDocument/hover": "hoverProvider",
    "textDocument/documentSymbol": "documentSymbolProvider",
    "workspace/symbol": "workspaceSymbolProvider",
    "textDocument/prepareCallHierarchy": "callHierarchyProvider",
    "callHierarchy/incomingCalls": "callHierarchyProvider",
    "callHierarchy/outgoingCalls": "callHierarchyProvider",
    "textDocument/prepareRename": "renameProvider",  # and its `prepareProvider` option
    "textDocument/rename": "renameProvider",
}
"""Each method, with the capability of a server's initialize result that promises it."""

LANGUAGE_METHODS = tuple(CAPABILITIES)
