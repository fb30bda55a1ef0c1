"""`agent-lsp --acp`: the ACP agent on stdio, through the SDK's own connection (newline-delimited JSON-RPC)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Optional


def serve(launch_settings: dict[str, Any], data_dir: Optional[Path]) -> None:
    """Serve ACP on stdin/stdout until the client closes stdin."""
    import acp

    from agent_lsp.acp.agent import AcpAgent

    async def main() -> None:
        agent = AcpAgent(launch_settings, data_dir)
        try:
            await acp.run_agent(agent)
        finally:
            await agent.close()

    asyncio.run(main())
