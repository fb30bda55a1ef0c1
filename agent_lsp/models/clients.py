"""The process's SDK clients: one per provider, endpoint and timeout, made on first use."""

from __future__ import annotations

from typing import Any, Callable, Hashable

_CLIENTS: dict[tuple[str, Hashable], Any] = {}


def shared_client(provider: str, key: Hashable, make: Callable[[], Any]) -> Any:
    """The one client of `provider` for `key` (its base URL, credentials, timeout): its connection pool and TLS
    context serve every chat of every session instead of being built again for each."""
    client = _CLIENTS.get((provider, key))
    if client is None:
        client = _CLIENTS[(provider, key)] = make()
    return client


def forget(provider: str) -> None:
    """Drop the clients of `provider` (tests that point a provider at another endpoint)."""
    for key in [k for k in _CLIENTS if k[0] == provider]:
        del _CLIENTS[key]
