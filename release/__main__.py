"""`python -m release [--out DIR] [--skip-vsix]`: build every release artifact into DIR (default dist/).

- the wheel and sdist of agent-lsp-server (`python -m build --no-isolation`: the build backend comes from the
  environment, not the index);
- the VS Code extension for each target platform (linux-x64, linux-arm64, darwin-x64, darwin-arm64, win32-x64),
  carrying the server and that platform's wheels for every supported Python (release/vsix.py);
- the Neovim plugin archive: client-nvim's plugin tree, a VERSION file, and the wheel under wheels/;
- SHA256SUMS over all of them, in `sha256sum -c` form.

The version is agent_lsp/__init__.py's `__version__`; client-vscode/package.json must say the same, or nothing is
built. Prints one line per artifact.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from release.vsix import TARGETS, ReleaseError, bundle, package

ROOT = Path(__file__).resolve().parents[1]
VSCODE = ROOT / "client-vscode"
NVIM = ROOT / "client-nvim"
NVIM_FILES = ("lua", "plugin", "doc", "README.md")
"""What of client-nvim a user's plugin manager needs (its tests stay in the repository)."""

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


def build_vsix(out: Path, v: str, wheel: Path, targets: list[str]) -> list[Path]:
    """The extension with the server inside, one .vsix per target."""
    npm = shutil.which("npm")
    if npm is None:
        raise ReleaseError("npm is not on PATH: install Node 20+ (or pass --skip-vsix)")
    if not (VSCODE / "node_modules" / ".bin" / "vsce").exists():
        run(npm, "ci", "--no-audit", "--no-fund", "--loglevel=error", cwd=VSCODE)
    run(npm, "run", "--silent", "build", cwd=VSCODE)
    chosen = tuple(t for t in TARGETS if t.name in targets)
    built = []
    with tempfile.TemporaryDirectory(prefix="agent-lsp-release-") as staging:
        libs = bundle(wheel, Path(staging), chosen)
        for target in chosen:
            vsix = out / f"agent-lsp-vscode-{v}-{target.name}.vsix"
            package(VSCODE, libs[target.name], target, vsix)
            built.append(vsix)
    return built


def write_sums(out: Path, artifacts: list[Path]) -> Path:
    sums = out / "SHA256SUMS"
    lines = [f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.name}\n" for p in sorted(artifacts)]
    sums.write_text("".join(lines))
    return sums


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m release", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=ROOT / "dist", help="where the artifacts go (default dist/)")
    p.add_argument("--skip-vsix", action="store_true", help="build everything but the VS Code extension")
    names = [t.name for t in TARGETS]
    p.add_argument("--targets", default=",".join(names),
                   help=f"the VS Code targets, comma-separated (default: all of {', '.join(names)})")
    args = p.parse_args(argv)
    out = args.out.resolve()
    targets = [t for t in args.targets.split(",") if t]
    unknown = sorted(set(targets) - set(names))
    if unknown:
        p.error(f"unknown target {', '.join(unknown)}: choose from {', '.join(names)}")
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
            artifacts += build_vsix(out, v, artifacts[1], targets)
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
