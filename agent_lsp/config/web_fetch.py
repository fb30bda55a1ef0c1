"""The `webFetch` setting, checked: where web_fetch may go (tools/web_fetch.py's FetchPolicy takes it as is)."""

from __future__ import annotations

from agent_lsp.config.section import Section, number, strings, switch, then


def _hosts(names: tuple[str, ...]) -> tuple[str, ...]:
    hosts = tuple(name.strip(" .").lower() for name in names)
    if not all(hosts):
        raise ValueError("must be a list of host names")
    return hosts


class WebFetchSettings(Section):
    """Where web_fetch may go."""

    allow_private: switch() = False
    """Let it reach loopback, link-local and private addresses."""
    allowed_domains: then(strings("must be a list of host names"), _hosts) = ()
    """Only these hosts and their subdomains (none: every public host)."""
    timeout: number(1, 300, " of seconds") = 30.0
    """Seconds a whole fetch may take, redirects included."""
