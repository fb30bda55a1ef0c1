"""Suggestions as you type (PROTOCOL §10): a small cancellable pipeline per request, buffer → context → provider →
post-process → item, with per-document freshness. Never touches sessions/."""
