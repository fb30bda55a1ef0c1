"""`python -m release` as a maintainer runs it: every artifact in the output directory, SHA256SUMS right, and each
artifact stating the one version (agent_lsp/__init__.py's). The .vsix is built only with AGENT_LSP_RELEASE_VSIX=1
(npm and the bundled server cost minutes; client-vscode/ci.sh packages the extension on its own)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import agent_lsp

ROOT = Path(__file__).resolve().parents[2]
CEILING = 1200  # a last resort for the builds on a loaded machine, never a measure of speed
VSIX = os.environ.get("AGENT_LSP_RELEASE_VSIX") == "1"


def test_release_builds_every_artifact_with_one_version(tmp_path):
    v = agent_lsp.__version__
    out = tmp_path / "dist"
    out.mkdir()
    (out / "agent_lsp_server-0.0.1-py3-none-any.whl").write_text("an earlier release's")  # cleared first
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run([sys.executable, "-m", "release", "--out", out, *([] if VSIX else ["--skip-vsix"])],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=CEILING)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == f"agent-lsp {v}: {4 if VSIX else 3} artifacts in {out}"

    names = [f"agent_lsp_server-{v}.tar.gz", f"agent_lsp_server-{v}-py3-none-any.whl", f"agent-lsp-nvim-{v}.tar.gz",
             *([f"agent-lsp-vscode-{v}-linux-x64.vsix"] if VSIX else [])]
    assert sorted(p.name for p in out.iterdir()) == sorted([*names, "SHA256SUMS"])
    sums = dict(reversed(line.split("  ")) for line in (out / "SHA256SUMS").read_text().splitlines())
    assert sums == {name: hashlib.sha256((out / name).read_bytes()).hexdigest() for name in names}

    with zipfile.ZipFile(out / names[1]) as wheel:
        assert f"\nVersion: {v}\n" in wheel.read(f"agent_lsp_server-{v}.dist-info/METADATA").decode()
    with tarfile.open(out / names[0]) as sdist:
        assert f"\nVersion: {v}\n" in sdist.extractfile(f"agent_lsp_server-{v}/PKG-INFO").read().decode()
    with tarfile.open(out / names[2]) as nvim:
        members = nvim.getnames()
        assert nvim.extractfile("agent-lsp.nvim/VERSION").read().decode() == f"{v}\n"
        assert nvim.extractfile(f"agent-lsp.nvim/wheels/{names[1]}").read() == (out / names[1]).read_bytes()
    assert {"agent-lsp.nvim/plugin/agent_lsp.lua", "agent-lsp.nvim/lua/agent/health.lua",
            "agent-lsp.nvim/doc/agent.txt"} <= set(members)
    assert not any(m.startswith("agent-lsp.nvim/tests") for m in members)
    if VSIX:
        with zipfile.ZipFile(out / names[3]) as vsix:
            manifest = json.loads(vsix.read("extension/package.json"))
            assert manifest["version"] == v
            files = vsix.namelist()
        # what is the same for every Python once, the compiled modules per Python
        assert {"extension/bundled/libs/shared/agent_lsp/__main__.py", "extension/bundled/libs/shared/bin/rg",
                f"extension/bundled/libs/shared/agent_lsp_server-{v}.dist-info/METADATA"} <= set(files)
        for py in ("3.11", "3.12", "3.13"):
            tag = py.replace(".", "")
            assert f"extension/bundled/libs/py{py}/pydantic_core/_pydantic_core.cpython-{tag}-x86_64-linux-gnu.so" \
                in files
        assert not (ROOT / "client-vscode" / "bundled").exists()  # removed once packaged


def test_the_editors_manifests_state_the_servers_version():
    manifest = json.loads((ROOT / "client-vscode" / "package.json").read_text())
    lock = json.loads((ROOT / "client-vscode" / "package-lock.json").read_text())
    assert manifest["version"] == lock["version"] == lock["packages"][""]["version"] == agent_lsp.__version__
