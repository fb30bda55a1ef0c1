"""session/update notifications of one connection, sent in order by one task."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Optional

log = logging.getLogger(__name__)


class Outbox:
    """session/update notifications, sent in order by one task; `flush` waits until all are on the wire."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn
        self._queue: asyncio.Queue = asyncio.Queue()
        self._task: Optional[asyncio.Task] = None

    def push(self, session_id: str, update: Any) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._send())
        self._queue.put_nowait((session_id, update))

    async def flush(self) -> None:
        # The loop runs tools in a worker task whose updates reach us through the chat task: one pass of the
        # event loop lets an update emitted just before this call arrive here before we wait for the queue.
        await asyncio.sleep(0)
        await self._queue.join()

    async def _send(self) -> None:
        while True:
            session_id, update = await self._queue.get()
            try:
                await self._conn.session_update(session_id=session_id, update=update)
            except Exception as e:  # a client gone away: the history is in the store all the same
                log.info("session/update not sent: %r", e)
            finally:
                self._queue.task_done()
