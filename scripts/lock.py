"""Write, or check, the lock files: the exact version of every package the builds install.

    python scripts/lock.py            # regenerate both locks (needs uv: pip install -e .[lock])
    python scripts/lock.py --upgrade  # the same, letting every package move to its newest
    python scripts/lock.py --check    # offline: do the locks still fit pyproject.toml?

locks/app.txt: the app with its `test` and `package` extras, for CPython 3.11 on Windows
amd64, macOS arm64 and Linux x86_64 at once (uv's universal resolution; packages only one
OS needs carry a marker). The builds install with it as constraints:
`pip install -c locks/app.txt -e .[test]`.

locks/export-env.txt: the export environment (app/core/packmaking/export_env.py), for
Python 3.10 and later; its copy resources/export-env-lock.txt is what the app gives pip as
constraints when it builds that environment. torch's CPU build comes from PyTorch's own
index, so the resolution uses torch's PyPI release (same version, same dependencies) and
leaves out what only its CUDA build needs (nvidia-*, cuda-*, triton); the torch lines are
the app's own pins.

Regenerating keeps every pin that still fits (uv prefers the versions already in the
output file), so two runs in a row write the same files; --upgrade re-resolves from
scratch. The check needs no network: every direct requirement is pinned once per platform
at a version inside its range, the app lock holds no torch, the export lock matches
export_env.pinned_requirements() and its copy in resources/.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from lockfile import (
    APP_LOCK,
    APP_PYTHON,
    EXPORT_LOCK,
    EXPORT_LOCK_RESOURCE,
    EXPORT_PYTHONS,
    PLATFORMS,
    ROOT,
    LockError,
    Pin,
    parse_lock,
    pins_for,
    read_lock,
)
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

sys.path.insert(0, str(ROOT))
from app.core.packmaking.export_env import pinned_requirements

PYPROJECT = ROOT / "pyproject.toml"
APP_EXTRAS = ("test", "package")
COMMAND = "python scripts/lock.py"
# Only torch's CUDA build needs these (PyPI's Linux torch names them; the +cpu wheel does
# not): kept out of the export lock.
CUDA_ONLY = re.compile(r"^(nvidia-|cuda-|triton$)")
NEVER_IN_APP = ("torch",)


def load_pyproject(path: Path = PYPROJECT) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib

        try:
            return tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise LockError(f"{path}: cannot read it ({exc})") from exc
    raise SystemExit("scripts/lock.py needs Python 3.11 or later (tomllib)")


def app_requirements(pyproject: dict[str, Any]) -> list[Requirement]:
    """The app's direct requirements with the extras the app lock covers."""
    project = pyproject["project"]
    lines = list(project["dependencies"])
    for extra in APP_EXTRAS:
        lines += project["optional-dependencies"][extra]
    return [Requirement(line) for line in lines]


def export_requirements() -> dict[str, tuple[Requirement, ...]]:
    """The export environment's own pins, per sys_platform."""
    return {
        p.markers["sys_platform"]: tuple(
            Requirement(r) for r in pinned_requirements(p.markers["sys_platform"])
        )
        for p in PLATFORMS
    }


def check_pins(
    pins: list[Pin],
    wanted: dict[str, tuple[Requirement, ...]],
    pythons: tuple[str, ...],
    source: str,
) -> list[str]:
    """What is wrong with `pins` against `wanted` (requirements per sys_platform)."""
    problems = []
    for platform in PLATFORMS:
        for python in pythons:
            where = f"{platform.label}, Python {python}"
            here = pins_for(pins, platform, python)
            by_name: dict[str, list[Pin]] = {}
            for pin in here:
                by_name.setdefault(pin.name, []).append(pin)
            for name, same in by_name.items():
                if len(same) > 1:
                    lines = ", ".join(str(p.line) for p in same)
                    problems.append(f"{source}: {name} is pinned twice for {where} (lines {lines})")
            env = platform.environment(python)
            for req in wanted[platform.markers["sys_platform"]]:
                if req.marker is not None and not req.marker.evaluate(env):
                    continue
                found = by_name.get(canonicalize_name(req.name), [])
                if not found:
                    problems.append(f"{source}: {req} is not pinned for {where}")
                elif not req.specifier.contains(found[0].version, prereleases=True):
                    problems.append(
                        f"{source}:{found[0].line}: {found[0].requirement()} is outside "
                        f"{req} ({where})"
                    )
    return problems


def check(root: Path = ROOT) -> list[str]:
    """Everything wrong with the committed locks, without network ([] when they fit)."""
    app_lock = root / APP_LOCK.relative_to(ROOT)
    export_lock = root / EXPORT_LOCK.relative_to(ROOT)
    resource = root / EXPORT_LOCK_RESOURCE.relative_to(ROOT)
    try:
        app_pins = read_lock(app_lock)
        export_pins = read_lock(export_lock)
        direct = tuple(app_requirements(load_pyproject(root / "pyproject.toml")))
    except LockError as exc:
        return [str(exc)]
    wanted = {p.markers["sys_platform"]: direct for p in PLATFORMS}
    problems = check_pins(app_pins, wanted, (APP_PYTHON,), str(app_lock))
    problems += [
        f"{app_lock}:{pin.line}: {pin.name} must never be in the app's lock"
        for pin in app_pins
        if pin.name in NEVER_IN_APP
    ]
    problems += check_pins(export_pins, export_requirements(), EXPORT_PYTHONS, str(export_lock))
    problems += [
        f"{export_lock}:{pin.line}: {pin.name} is for torch's CUDA build only"
        for pin in export_pins
        if CUDA_ONLY.match(pin.name)
    ]
    try:
        same = resource.read_bytes() == export_lock.read_bytes()
    except OSError as exc:
        problems.append(f"{resource}: cannot read it ({exc.strerror or exc})")
    else:
        if not same:
            problems.append(f"{resource} differs from {export_lock}: run {COMMAND}")
    return problems


def drop_cuda_only(text: str) -> str:
    """uv's output without torch and what only torch's CUDA build needs: the entries
    CUDA_ONLY names and those only dropped entries pull in (uv's `# via` lines say who)."""
    blocks: list[tuple[str, list[str]]] = []  # (name or "" for the header, lines)
    for line in text.splitlines():
        if line and not line.startswith((" ", "#")):
            blocks.append((canonicalize_name(re.split(r"[=;\s]", line, maxsplit=1)[0]), [line]))
        elif blocks:
            blocks[-1][1].append(line)
        else:
            blocks.append(("", [line]))
    via = {name: _users(lines[1:]) for name, lines in blocks if name}
    dropped = {name for name in via if CUDA_ONLY.match(name)}
    while True:
        more = {n for n, users in via.items() if n not in dropped and users and users <= dropped}
        if not more:
            break
        dropped |= more
    dropped.add("torch")  # its own pins follow (torch_lines); what it needs stays
    return "\n".join(line for name, lines in blocks if name not in dropped for line in lines)


def _users(annotations: list[str]) -> set[str]:
    """The packages a uv `# via` annotation names ("-r FILE" and the project included)."""
    users: set[str] = set()
    for line in annotations:
        words = line.strip().lstrip("#").split()
        if words[:1] == ["via"]:
            words = words[1:]
        if words:
            users.add(canonicalize_name(words[0]))
    return users


def torch_lines() -> str:
    """The torch pins of the export environment, per OS (export_env.pinned_requirements)."""
    mac = next(r for r in pinned_requirements("darwin") if r.startswith("torch=="))
    other = next(r for r in pinned_requirements("linux") if r.startswith("torch=="))
    return (
        f"{other} ; sys_platform != 'darwin'\n"
        "    # via export_env.pinned_requirements (CPU build, PyTorch's index)\n"
        f"{mac} ; sys_platform == 'darwin'\n"
        "    # via export_env.pinned_requirements\n"
    )


def uv_compile(
    uv: str, inputs: list[str], out: Path, python: str, upgrade: bool, cwd: Path = ROOT
) -> None:
    """Run uv in `cwd`; `inputs` relative to it (uv's annotations name them as given)."""
    cmd = [uv, "pip", "compile", *inputs, "--universal", "--python-version", python]
    cmd += ["--no-config", "--custom-compile-command", COMMAND, "-o", str(out), "--quiet"]
    if upgrade:
        cmd.append("--upgrade")
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise SystemExit(f"uv could not resolve {out.name}:\n{done.stderr.strip()}")


def find_uv() -> str:
    try:
        from uv import find_uv_bin  # type: ignore[import-not-found, unused-ignore]

        return str(find_uv_bin())
    except ImportError:
        found = shutil.which("uv")
        if found is None:
            raise SystemExit("regenerating needs uv: pip install -e '.[lock]'") from None
        return found


def regenerate(upgrade: bool) -> None:
    uv = find_uv()
    APP_LOCK.parent.mkdir(exist_ok=True)
    extras = [a for extra in APP_EXTRAS for a in ("--extra", extra)]
    uv_compile(uv, [str(PYPROJECT.relative_to(ROOT)), *extras], APP_LOCK, APP_PYTHON, upgrade)
    with tempfile.TemporaryDirectory(prefix="draftdeck-lock-") as tmp:
        wanted = Path(tmp) / "export-env.in"
        # PyPI's torch of the same version stands in for the CPU build while resolving.
        plain = [
            re.sub(r"^torch==([^+;\s]+)\+cpu", r"torch==\1", r)
            for r in pinned_requirements("linux")
        ]
        wanted.write_text("\n".join(plain) + "\n", encoding="utf-8")
        work = Path(tmp) / "export-env.txt"
        if EXPORT_LOCK.is_file():  # its pins are uv's preferences
            work.write_text(EXPORT_LOCK.read_text(encoding="utf-8"), encoding="utf-8")
        uv_compile(uv, [wanted.name], work, EXPORT_PYTHONS[0], upgrade, cwd=Path(tmp))
        text = drop_cuda_only(work.read_text(encoding="utf-8")).rstrip("\n") + "\n"
    text += torch_lines()
    parse_lock(text, str(EXPORT_LOCK))  # refuse to write anything that is not a lock
    for path in (EXPORT_LOCK, EXPORT_LOCK_RESOURCE):
        path.write_bytes(text.encode("utf-8"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check the locks (offline)")
    parser.add_argument("--upgrade", action="store_true", help="re-resolve every pin")
    args = parser.parse_args(argv)
    if not args.check:
        regenerate(args.upgrade)
    problems = check()
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        return 1
    print(
        f"ok: {APP_LOCK.relative_to(ROOT)} and {EXPORT_LOCK.relative_to(ROOT)} fit pyproject.toml"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
