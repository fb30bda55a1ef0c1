"""The VS Code extension per platform, each carrying the server and its dependencies for every supported Python.

For each target (VS Code's name: linux-x64, darwin-arm64, win32-x64, …) and each Python of PYTHONS, pip downloads
the server's dependencies as binary wheels for that platform and Python (`pip download --platform --python-version
--only-binary=:all:`; a finished download is kept in a cache keyed by what it asked for, so a second release asks
the index nothing). Every wheel's tags are checked against the target before anything is installed. Then:

- wheels that fit every Python (`py3-none-any`, `py3-none-<platform>`, `abi3`) go into bundled/libs/shared;
- wheels for one Python (`cp312-cp312-<platform>`) into bundled/libs/pyX.Y,

installed with `pip install --target --no-deps --no-index` from the cache, and `vsce package --target`. The extension
puts libs/pyX.Y (for the Python it finds) and libs/shared on PYTHONPATH (client-vscode/src/bundled.ts).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from zipfile import ZipFile

from packaging.requirements import Requirement
from packaging.tags import Tag
from packaging.utils import canonicalize_name, parse_wheel_filename


class ReleaseError(Exception):
    """A step failed: the message says which and why."""


@dataclass(frozen=True)
class Target:
    """A VS Code target platform and the wheel platform tags that run there (pip's --platform values)."""

    name: str
    platforms: tuple[str, ...]

    def fits(self, platform: str) -> bool:
        """Whether a wheel of `platform` runs on this target (pip expands macOS versions and manylinux aliases, so
        the check is on the family and the architecture, not the exact tag)."""
        if platform == "any" or platform in self.platforms:
            return True
        os_name, arch = self.name.split("-")
        if os_name == "linux":
            machine = {"x64": "x86_64", "arm64": "aarch64"}[arch]
            return platform.startswith("manylinux") and platform.endswith(f"_{machine}")
        if os_name == "darwin":
            machine = {"x64": "x86_64", "arm64": "arm64"}[arch]
            return platform.startswith("macosx_") and platform.endswith((f"_{machine}", "_universal2"))
        return False


TARGETS = (
    # VS Code runs on glibc 2.28+ (manylinux_2_28); most wheels are still tagged manylinux2014 (glibc 2.17).
    Target("linux-x64", ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")),
    Target("linux-arm64", ("manylinux_2_28_aarch64", "manylinux_2_17_aarch64", "manylinux2014_aarch64")),
    # pip takes every macOS version up to the one given; VS Code needs macOS 11 or newer.
    Target("darwin-x64", ("macosx_11_0_x86_64",)),
    Target("darwin-arm64", ("macosx_11_0_arm64",)),
    Target("win32-x64", ("win_amd64",)),
)
PYTHONS = ("3.11", "3.12", "3.13", "3.14")
"""The Pythons each .vsix carries the server's compiled dependencies for (pyproject's requires-python >= 3.11)."""
DOWNLOADS_AT_ONCE = 5
"""pip downloads run side by side: they wait on the network, not on the CPU."""
KEPT_SCRIPTS = ("rg", "rg.exe")
"""Of the wheels' scripts only ripgrep's binary stays: console scripts carry this machine's interpreter path."""


def cache_dir() -> Path:
    """Where finished downloads are kept between releases (AGENT_LSP_RELEASE_CACHE, else the user's cache)."""
    root = os.environ.get("AGENT_LSP_RELEASE_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "agent-lsp-release")
    return Path(root) / "wheels"


def _requires(wheel: Path) -> list[Requirement]:
    """A wheel's Requires-Dist."""
    with ZipFile(wheel) as z:
        name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA") and n.count("/") == 1)
        metadata = z.read(name).decode()
    return [Requirement(line.removeprefix("Requires-Dist: ")) for line in metadata.splitlines()
            if line.startswith("Requires-Dist: ")]


def requirements(wheel: Path) -> list[str]:
    """The server wheel's own dependencies (Requires-Dist without an extra)."""
    return [str(r) for r in _requires(wheel) if not (r.marker and "extra" in str(r.marker))]


def environment(target: Target, python: str) -> dict[str, str]:
    """The values of environment markers (PEP 508) on `target` with `python`: pip evaluates markers for the machine
    it runs on, whatever --platform says, so the release evaluates them itself."""
    os_name, arch = target.name.split("-")
    machine = {("linux", "x64"): "x86_64", ("linux", "arm64"): "aarch64", ("darwin", "x64"): "x86_64",
               ("darwin", "arm64"): "arm64", ("win32", "x64"): "AMD64"}[(os_name, arch)]
    return {"sys_platform": os_name, "platform_system": {"linux": "Linux", "darwin": "Darwin", "win32": "Windows"}[os_name],
            "os_name": "nt" if os_name == "win32" else "posix", "platform_machine": machine,
            "python_version": python, "python_full_version": f"{python}.0", "implementation_name": "cpython",
            "platform_python_implementation": "CPython"}


def _unmarked(req: Requirement) -> str:
    """`req` without its marker, which pip would evaluate for this machine and so ignore."""
    extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
    return f"{req.name}{extras}{req.specifier}"


def closure(reqs: list[str], wheels: list[Path], env: dict[str, str]) -> tuple[list[Path], list[Requirement]]:
    """The wheels `reqs` need on `env`, following each wheel's Requires-Dist with the markers evaluated for `env`
    (and the extras asked for); and the requirements no wheel of `wheels` answers."""
    by_name = {canonicalize_name(parse_wheel_filename(w.name)[0]): w for w in wheels}
    needed: dict[str, Path] = {}
    missing: list[Requirement] = []
    queue = [(Requirement(r), "") for r in reqs]
    while queue:
        req, extra = queue.pop()
        if req.marker and not req.marker.evaluate({**env, "extra": extra}):
            continue
        name = canonicalize_name(req.name)
        if name not in by_name:
            missing.append(req)
            continue
        if name not in needed:
            needed[name] = by_name[name]
            queue += [(r, "") for r in _requires(by_name[name])]
        queue += [(r, e) for e in req.extras for r in _requires(by_name[name])]
    return sorted(needed.values()), missing


def _run(command: list[object], cwd: Path | None = None) -> None:
    done = subprocess.run([str(c) for c in command], cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        shown = " ".join(map(str, command[:12])) + (" …" if len(command) > 12 else "")
        raise ReleaseError(f"{shown} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")


def _platform_args(target: Target, python: str) -> list[str]:
    args = []
    for platform in target.platforms:
        args += ["--platform", platform]
    return [*args, "--python-version", python, "--implementation", "cp", "--only-binary=:all:"]


def download(target: Target, python: str, reqs: list[str]) -> list[Path]:
    """The wheels of `reqs` for `target` and `python`: pip's download kept in the cache once it finished (keyed by
    what it asked for), then what the target's own markers ask for besides (pywin32 on Windows) fetched into it."""
    key = hashlib.sha256(json.dumps([target.platforms, python, sorted(reqs)]).encode()).hexdigest()[:16]
    dest = cache_dir() / f"{target.name}-py{python}-{key}"
    if not (dest / "complete.json").is_file():
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir(parents=True)
        _run([sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--dest", dest,
              *_platform_args(target, python), *reqs])
        (dest / "complete.json").write_text(json.dumps(sorted(p.name for p in dest.glob("*.whl"))))
    env = environment(target, python)
    wheels, missing = closure(reqs, list(dest.glob("*.whl")), env)
    for _ in range(5):  # a package only the target needs, then what it needs in turn
        if not missing:
            break
        _run([sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps",
              "--dest", dest, *_platform_args(target, python), *sorted({_unmarked(r) for r in missing})])
        wheels, missing = closure(reqs, list(dest.glob("*.whl")), env)
    if missing:
        raise ReleaseError(f"{target.name}, Python {python}: no wheel for {', '.join(map(str, missing))}")
    return wheels  # the host's own marker picks, which pip made, left out


def tag_fits(target: Target, python: str, tag: Tag) -> bool:
    """Whether a wheel (or an installed dist-info's WHEEL) with `tag` runs on `target` with `python` ("3.12")."""
    cp = "cp" + python.replace(".", "")
    python_ok = tag.interpreter in ("py3", f"py{cp[2:]}", cp) or (
        tag.abi == "abi3" and tag.interpreter.startswith("cp3") and int(tag.interpreter[2:]) <= int(cp[2:]))
    return python_ok and tag.abi in ("none", "abi3", cp) and target.fits(tag.platform)


def check_tags(target: Target, python: str, wheel: Path) -> str:
    """Where `wheel` goes, by its tags: "shared" (every Python of the target) or "python" (that Python only). A
    wheel for another platform or another Python is an error naming it."""
    fitting = [tag for tag in parse_wheel_filename(wheel.name)[3] if tag_fits(target, python, tag)]
    if not fitting:
        raise ReleaseError(f"{wheel.name} does not run on {target.name} with Python {python} (its tags do not fit)")
    return "shared" if all(t.abi in ("none", "abi3") for t in fitting) else "python"


def _install(wheels: list[Path], into: Path, target: Target, python: str) -> None:
    if not wheels:
        return
    _run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-compile", "--no-deps",
          "--no-index", "--target", into, *_platform_args(target, python), *sorted(wheels)])
    scripts = into / "bin"
    if scripts.is_dir():
        for script in scripts.iterdir():
            if script.name not in KEPT_SCRIPTS:
                script.unlink()


def bundle(server_wheel: Path, staging: Path, targets: tuple[Target, ...] = TARGETS,
           pythons: tuple[str, ...] = PYTHONS) -> dict[str, Path]:
    """Each target's bundled/libs, `staging`/<target>: shared/ and pyX.Y/ (see the module's docstring)."""
    reqs = requirements(server_wheel)
    jobs = [(t, py) for t in targets for py in pythons]
    with ThreadPoolExecutor(DOWNLOADS_AT_ONCE) as pool:
        downloaded = dict(zip(jobs, pool.map(lambda job: download(*job, reqs), jobs)))
    libs: dict[str, Path] = {}
    for target in targets:
        shared: dict[str, Path] = {server_wheel.name: server_wheel}  # by file name: each Python's download has one
        per_python: dict[str, list[Path]] = {py: [] for py in pythons}
        for py in pythons:
            for wheel in downloaded[(target, py)]:
                if check_tags(target, py, wheel) == "python":
                    per_python[py].append(wheel)
                else:
                    shared.setdefault(wheel.name, wheel)
        versions: dict[str, set[str]] = {}
        for wheel in shared.values():
            name, version = parse_wheel_filename(wheel.name)[:2]
            versions.setdefault(name, set()).add(str(version))
        split = {name: sorted(v) for name, v in versions.items() if len(v) > 1}
        if split:  # one shared directory cannot hold two versions of a package
            raise ReleaseError(f"{target.name}: the Pythons resolved different versions of {split}")
        root = staging / target.name
        _install(list(shared.values()), root / "shared", target, pythons[0])
        for py in pythons:
            (root / f"py{py}").mkdir()
            _install(per_python[py], root / f"py{py}", target, py)
        rg = "rg.exe" if target.name.startswith("win32") else "rg"
        if not (root / "shared" / "bin" / rg).is_file():
            raise ReleaseError(f"the {target.name} bundle has no bin/{rg} (the `ripgrep` wheel's binary)")
        libs[target.name] = root
    return libs


def package(vscode: Path, libs: Path, target: Target, vsix: Path) -> None:
    """`vsce package --target` with `libs` as bundled/libs (removed after: it would go into every later package)."""
    bundled = vscode / "bundled"
    shutil.rmtree(bundled, ignore_errors=True)
    bundled.mkdir()
    try:
        shutil.copytree(libs, bundled / "libs", symlinks=True)
        # vsce's secret scan reads every packaged file: over the bundled libraries (6,000 files of PyPI packages
        # whose docs and tests hold sample keys) it runs for tens of minutes. It is skipped here; client-vscode/ci.sh
        # packages the extension without bundled/ and so still scans every file of ours.
        _run([vscode / "node_modules" / ".bin" / "vsce", "package", "--no-dependencies", "--allow-package-all-secrets",
              "--target", target.name, "-o", vsix], cwd=vscode)
    finally:
        shutil.rmtree(bundled, ignore_errors=True)
