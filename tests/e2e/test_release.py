"""`python -m release` as a maintainer runs it: every artifact in the output directory, SHA256SUMS right, and each
artifact stating the one version (agent_lsp/__init__.py's). The .vsix files (one per VS Code target) are built only
with AGENT_LSP_RELEASE_VSIX=1 (npm and the bundled servers cost minutes); AGENT_LSP_RELEASE_OUT=DIR checks the
artifacts a `python -m release --out DIR` already built instead (client-vscode/ci.sh builds them once for its
code-server test, then runs this file on them). Each .vsix is checked for its platform: its manifest, and the tags
of every wheel installed into it."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from packaging.tags import parse_tag

import agent_lsp
from release.vsix import PYTHONS, TARGETS, ReleaseError, check_tags, tag_fits

ROOT = Path(__file__).resolve().parents[2]
CEILING = 3600  # a last resort for the builds on a loaded machine (5 targets' downloads), never a measure of speed
BUILT = os.environ.get("AGENT_LSP_RELEASE_OUT")
VSIX = os.environ.get("AGENT_LSP_RELEASE_VSIX") == "1" or bool(BUILT)
EXTENSION = {"linux-x64": "cpython-{t}-x86_64-linux-gnu.so", "linux-arm64": "cpython-{t}-aarch64-linux-gnu.so",
             "darwin-x64": "cpython-{t}-darwin.so", "darwin-arm64": "cpython-{t}-darwin.so",
             "win32-x64": "cp{t}-win_amd64.pyd"}
"""The file name a compiled module of CPython 3.{t} ends with on each target."""


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> tuple[Path, str]:
    """The output directory of one `python -m release` run, and what it printed last."""
    if BUILT:
        return Path(BUILT), ""
    out = tmp_path_factory.mktemp("release") / "dist"
    out.mkdir()
    (out / "agent_lsp_server-0.0.1-py3-none-any.whl").write_text("an earlier release's")  # cleared first
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run([sys.executable, "-m", "release", "--out", out, *([] if VSIX else ["--skip-vsix"])],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=CEILING)
    assert done.returncode == 0, done.stdout + done.stderr
    return out, done.stdout.splitlines()[-1]


def test_release_builds_every_artifact_with_one_version(release):
    v = agent_lsp.__version__
    out, last = release
    vsix = [f"agent-lsp-vscode-{v}-{t.name}.vsix" for t in TARGETS] if VSIX else []
    if not BUILT:
        assert last == f"agent-lsp {v}: {3 + len(vsix)} artifacts in {out}"

    names = [f"agent_lsp_server-{v}.tar.gz", f"agent_lsp_server-{v}-py3-none-any.whl", f"agent-lsp-nvim-{v}.tar.gz",
             *vsix]
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
    assert {"agent-lsp.nvim/plugin/agent_lsp.lua", "agent-lsp.nvim/lua/agent_lsp/health.lua",
            "agent-lsp.nvim/doc/agent.txt"} <= set(members)
    assert not any(m.startswith("agent-lsp.nvim/tests") for m in members)
    assert not (ROOT / "client-vscode" / "bundled").exists()  # removed once packaged


@pytest.mark.skipif(not VSIX, reason="the .vsix files are built with AGENT_LSP_RELEASE_VSIX=1")
@pytest.mark.parametrize("target", TARGETS, ids=[t.name for t in TARGETS])
def test_each_vsix_carries_its_platforms_wheels_for_every_python(release, target):
    v = agent_lsp.__version__
    out, _ = release
    with zipfile.ZipFile(out / f"agent-lsp-vscode-{v}-{target.name}.vsix") as vsix:
        files = set(vsix.namelist())
        manifest = json.loads(vsix.read("extension/package.json"))
        vsixmanifest = vsix.read("extension.vsixmanifest").decode()
        wheels = {name: vsix.read(name).decode() for name in files
                  if name.startswith("extension/bundled/libs/") and name.endswith(".dist-info/WHEEL")}
    # What the Marketplace and Open VSX read
    assert f'TargetPlatform="{target.name}"' in vsixmanifest
    assert manifest["version"] == v and manifest["engines"]["vscode"].startswith("^")
    assert manifest["license"] == "MIT" and manifest["publisher"] and manifest["description"]
    assert f"extension/{manifest['icon']}" in files and manifest["icon"].endswith(".png")
    assert {"extension/readme.md", "extension/changelog.md", "extension/LICENSE.txt"} <= {
        f if f.endswith("LICENSE.txt") else f.lower() for f in files}
    # The server and rg once, the compiled modules per Python
    libs = "extension/bundled/libs"
    assert {f"{libs}/shared/agent_lsp/__main__.py", f"{libs}/shared/agent_lsp_server-{v}.dist-info/WHEEL"} <= files
    rg = "rg.exe" if target.name.startswith("win32") else "rg"
    assert [f for f in files if f.startswith(f"{libs}/shared/bin/")] == [f"{libs}/shared/bin/{rg}"]
    for py in PYTHONS:
        ending = EXTENSION[target.name].format(t=py.replace(".", ""))
        assert f"{libs}/py{py}/pydantic_core/_pydantic_core.{ending}" in files, (target.name, py)
    # Every installed wheel, by its tags: for this platform, and in shared/ for every Python, in pyX.Y/ for X.Y
    assert len(wheels) > 20
    for name, text in wheels.items():
        where = name.split("/")[3]
        pythons = PYTHONS if where == "shared" else (where.removeprefix("py"),)
        tags = [t for line in text.splitlines() if line.startswith("Tag: ") for t in parse_tag(line[5:])]
        assert tags, name
        for py in pythons:
            assert any(tag_fits(target, py, t) for t in tags), (name, py, [str(t) for t in tags])


def test_wheel_tags_decide_where_a_wheel_goes_and_refuse_another_platform():
    by_name = {t.name: t for t in TARGETS}
    assert check_tags(by_name["darwin-arm64"], "3.12", Path("pydantic_core-2.50.5-cp312-cp312-macosx_11_0_arm64.whl")) \
        == "python"
    assert check_tags(by_name["darwin-x64"], "3.14", Path("a-1-cp314-cp314-macosx_10_13_universal2.whl")) == "python"
    assert check_tags(by_name["win32-x64"], "3.13", Path("cryptography-50.0.2-cp311-abi3-win_amd64.whl")) == "shared"
    assert check_tags(by_name["linux-arm64"], "3.11",
                      Path("ripgrep-14.1.0-py3-none-manylinux_2_17_aarch64.manylinux2014_aarch64.whl")) == "shared"
    assert check_tags(by_name["linux-x64"], "3.11", Path("pathspec-1.1.1-py3-none-any.whl")) == "shared"
    for target, py, wheel in (("darwin-arm64", "3.12", "x-1-cp312-cp312-macosx_10_12_x86_64.whl"),
                              ("linux-x64", "3.11", "x-1-cp312-cp312-manylinux2014_x86_64.whl"),
                              ("linux-x64", "3.12", "x-1-cp312-cp312-musllinux_1_2_x86_64.whl"),
                              ("win32-x64", "3.12", "x-1-cp312-cp312-win32.whl")):
        with pytest.raises(ReleaseError, match=f"does not run on {target} with Python {py}"):
            check_tags(by_name[target], py, Path(wheel))


def test_the_editors_manifests_state_the_servers_version():
    manifest = json.loads((ROOT / "client-vscode" / "package.json").read_text())
    lock = json.loads((ROOT / "client-vscode" / "package-lock.json").read_text())
    assert manifest["version"] == lock["version"] == lock["packages"][""]["version"] == agent_lsp.__version__
