"""The distribution as users get it: the sdist and the wheel built from it, installed into a fresh venv, run from
that venv's bin (proving the name, the entry point and the packaged files such as the demo workspace)."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CEILING = 600  # a last resort for builds and installs on a loaded machine, never a measure of speed


def run(*command: object, cwd: Path) -> subprocess.CompletedProcess:
    """Run a command outside the checkout (so `python -m agent_lsp` cannot import the checkout's copy)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PIP_ROOT_USER_ACTION="ignore", PIP_DISABLE_PIP_VERSION_CHECK="1")
    done = subprocess.run([str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=CEILING)
    assert done.returncode == 0, f"{command} exited {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


def test_sdist_and_wheel_install_and_run_the_demo(tmp_path):
    dist = tmp_path / "dist"
    # Default `python -m build`: the sdist first, then the wheel from the unpacked sdist, so both are proved.
    run(sys.executable, "-m", "build", "--no-isolation", "--outdir", dist, ROOT, cwd=tmp_path)
    assert sorted(p.name for p in dist.iterdir()) == ["agent_lsp_server-0.2.0-py3-none-any.whl",
                                                       "agent_lsp_server-0.2.0.tar.gz"]
    with tarfile.open(dist / "agent_lsp_server-0.2.0.tar.gz") as sdist:
        names = sdist.getnames()
        assert "agent_lsp_server-0.2.0/agent_lsp/demo/workspace/inventory.py" in names
        assert not any(n.startswith("agent_lsp_server-0.2.0/client-") for n in names)  # the editors ship apart
    with zipfile.ZipFile(dist / "agent_lsp_server-0.2.0-py3-none-any.whl") as wheel:
        metadata = wheel.read("agent_lsp_server-0.2.0.dist-info/METADATA").decode()
        assert "\nName: agent-lsp-server\n" in metadata and "\nVersion: 0.2.0\n" in metadata

    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", venv, cwd=tmp_path)
    run(venv / "bin" / "python", "-m", "pip", "install", "-q", dist / "agent_lsp_server-0.2.0-py3-none-any.whl",
        cwd=tmp_path)

    version = run(venv / "bin" / "agent-lsp", "--version", cwd=tmp_path)
    assert version.stdout == "agent-lsp-server 0.2.0 (protocol 1)\n"
    demo = run(venv / "bin" / "agent-lsp", "demo", cwd=tmp_path)
    # The demo ends with the chat's result, a suggestion accepted, a next edit applied (their lines: test_cli.py),
    # then the exit.
    lines = demo.stdout.strip().splitlines()
    (result,) = [line for line in lines if line.startswith("result ")]
    assert "stopReason=end_turn" in result and lines.index(result) == len(lines) - 14, demo.stdout
    assert lines[-8].startswith("accepted │ ") and lines[-3].startswith("applied  │ "), demo.stdout
    assert lines[-1] == "server   │ exited with code 0", demo.stdout
    assert "defines `total_value`, `restock`, `low_stock`" in demo.stdout
