"""The `sandbox` setting, checked key by key (the sandbox itself: agent_lsp/processes.py). A bad key is a warning
naming `sandbox.<key>` and the other keys still apply; a `writable` path that does not exist is left out with a
warning naming it. A workspace's settings file may turn the sandbox on or tighten it, never turn it off or loosen it
(PROTOCOL §10 "Sandboxed commands")."""

from __future__ import annotations

import os
from typing import Any, Iterable, Mapping, Optional

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, ValidationError

from agent_lsp.config.mcp_servers import PartlyValid


class SandboxSettings(BaseModel):
    """`sandbox: {enabled?, network?, writable?, autoAllow?}`; the keys a source named are its `model_fields_set`."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    enabled: StrictBool = Field(False, description="Run run_command and hook commands in the OS sandbox "
                                                  "(Linux: bubblewrap).")
    network: StrictBool = Field(False, description="Let sandboxed commands reach the network.")
    writable: tuple[StrictStr, ...] = Field((), description="Absolute paths sandboxed commands may write, "
                                                             "besides the workspace folders and a private /tmp.")
    auto_allow: StrictBool = Field(True, alias="autoAllow", description="Sandboxed commands run without asking "
                                                                        "(not in plan mode).")


KEYS = {(info.alias or name): name for name, info in SandboxSettings.model_fields.items()}
"""Each key as written in settings, by the field that holds it."""
MUST = {"enabled": "must be true or false", "network": "must be true or false",
        "writable": "must be a list of absolute paths", "autoAllow": "must be true or false"}
LOOSENING = {"enabled": False, "network": True, "autoAllow": True}
"""The values that would loosen the sandbox (`writable` always does)."""


def parse_sandbox(value: Any) -> SandboxSettings:
    """The setting, checked; PartlyValid (keeping the good keys) naming `sandbox.<key>` for each bad one, ValueError
    when it is not an object."""
    if not isinstance(value, Mapping):
        raise ValueError("must be an object with enabled, network, writable, autoAllow")
    good: dict[str, Any] = {}
    problems = []
    for key, raw in value.items():
        if key not in KEYS:
            problems.append(f"`sandbox.{key}` is unknown (enabled, network, writable, autoAllow)")
            continue
        try:
            good[key] = getattr(SandboxSettings.model_validate({key: raw}), KEYS[key])
        except ValidationError:
            problems.append(f"`sandbox.{key}` {MUST[key]} (its default applies)")
    if "writable" in good:
        good["writable"], missing = _existing(good["writable"])
        problems += missing
    settings = SandboxSettings.model_validate(good)
    if problems:
        raise PartlyValid("has problems: " + "; ".join(problems), settings)
    return settings


def _existing(paths: Iterable[str]) -> tuple[tuple[str, ...], list[str]]:
    """The paths (with ~ expanded) that are absolute and exist, and a problem naming each other one."""
    kept, problems = [], []
    for path in paths:
        full = os.path.expanduser(path)
        if not os.path.isabs(full):
            problems.append(f"the `sandbox.writable` path `{path}` is not absolute (left out)")
        elif not os.path.exists(full):
            problems.append(f"the `sandbox.writable` path `{path}` does not exist (left out)")
        else:
            kept.append(full)
    return tuple(kept), problems


def only_tightening(settings: SandboxSettings, source: str) -> tuple[SandboxSettings, list[str]]:
    """The setting of a workspace's settings file without what would turn the sandbox off or loosen it (`enabled:
    false`, `network: true`, `writable`, `autoAllow: true`), and a warning naming each key left out."""
    given = settings.model_dump(by_alias=True, exclude_unset=True)
    dropped = [key for key, value in given.items() if key == "writable" or LOOSENING.get(key) == value]
    kept = SandboxSettings.model_validate({k: v for k, v in given.items() if k not in dropped})
    return kept, [f"agent-lsp: `sandbox.{key}` from {source} is ignored: a workspace's settings file may turn the "
                  "sandbox on or tighten it, never turn it off or loosen it." for key in dropped]


def stacked(layers: Iterable[Optional[SandboxSettings]]) -> SandboxSettings:
    """The setting in force, key by key: each layer (lowest precedence first) sets only the keys it names."""
    merged: dict[str, Any] = {}
    for layer in layers:
        if layer is not None:
            merged.update(layer.model_dump(by_alias=True, exclude_unset=True))
    return SandboxSettings.model_validate(merged)
