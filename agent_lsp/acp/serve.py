"""`agent-lsp --acp`: the ACP agent on stdio, through the SDK's own connection (newline-delimited JSON-RPC).

`initialize` is answered before the SDK has loaded (acp/initialize.py), while `import acp` runs in a thread; the SDK's
connection then serves the same streams through acp/wire.py (every message checked before the SDK sees it), and
the model SDK loads in the background (models/preload.py).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any, Optional

from agent_lsp.acp.initialize import answer_initialize, stdio
from agent_lsp.models import preload
from agent_lsp.models.resolver import resolve

log = logging.getLogger(__name__)


def serve(launch_settings: dict[str, Any], data_dir: Optional[Path]) -> None:
    """Serve ACP on stdin/stdout until the client closes stdin."""

    async def main() -> None:
        loading = preload.load(("acp", "agent_lsp.acp.agent"))
        reader, writer = await stdio()
        params, reader = await answer_initialize(reader, writer)
        for future in loading:
            await asyncio.wrap_future(future)
        import acp

        from agent_lsp.acp.agent import AcpAgent
        from agent_lsp.acp.wire import StdioWire

        agent = AcpAgent(launch_settings, data_dir)
        # The SDK next, in the background: a prompt sent right away awaits this import rather than running its own.
        preload.load(resolve(agent.in_force.current([])).sdk)
        conn = acp.AgentSideConnection(agent, StdioWire(reader, writer), listening=False)
        try:
            if params is not None:  # answered early: the agent learns the client's capabilities all the same
                await agent.initialize(**_initialize_arguments(acp.schema, params))
            await conn.listen()
        finally:
            await asyncio.shield(conn.close())
            await agent.close()

    asyncio.run(main())


def _initialize_arguments(schema: Any, params: dict[str, Any]) -> dict[str, Any]:
    """An early-answered initialize's params as the SDK would have handed them to the agent."""
    try:
        request = schema.InitializeRequest.model_validate(params)
    except ValueError as e:  # answered already; the agent goes on without what it could not read
        log.warning("initialize: the client's capabilities could not be read (%s); assuming none", e)
        return {"protocol_version": params["protocolVersion"]}
    return {"protocol_version": request.protocol_version, "client_capabilities": request.client_capabilities,
            "client_info": request.client_info}
