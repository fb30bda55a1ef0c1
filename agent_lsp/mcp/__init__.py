"""The MCP client: MCP servers' tools offered as agent-lsp's own, on the `mcp` SDK's public client (stdio and
streamable HTTP). The SDK is imported only once a server starts."""
