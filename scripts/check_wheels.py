"""Does every locked package have a wheel for every platform the builds make?

    python scripts/check_wheels.py [--lock app|export] [--skip-torch-index]

For locks/app.txt (CPython 3.11) and locks/export-env.txt (3.10 and 3.11) on Windows
amd64, macOS arm64 and Linux x86_64 (manylinux up to glibc 2.35, Ubuntu 22.04), asks pip
whether the locked version of each package whose marker applies there has a binary or
pure-Python wheel: `pip install --dry-run --only-binary=:all: --platform ... --no-deps`.
PyPI serves each wheel's metadata on its own (PEP 658), so pip downloads no wheel: a run
fetches index pages and small metadata files (kept in pip's HTTP cache).

macOS is asked at 11.0 (the first Apple Silicon macOS) first and then at newer versions
for what found no wheel, so the table shows the oldest macOS each package's wheels are
tagged for, and the last line the oldest macOS the locked wheels allow together. (The
binaries inside may ask for more: packaging/macho.py reads them at build time.)

torch's `+cpu` build is on PyTorch's own index (DRAFTDECK_TORCH_INDEX, else
export_env.TORCH_CPU_INDEX); --skip-torch-index shows it as not checked instead.

Exit status: 0 when every wheel is there, 1 naming each package and platform without
one, 2 when an index cannot be reached (never a silent pass).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lockfile import (
    APP_LOCK,
    APP_PYTHON,
    EXPORT_LOCK,
    EXPORT_PYTHONS,
    MACOS,
    PLATFORMS,
    ROOT,
    WINDOWS,
    LockError,
    Pin,
    Platform,
    pins_for,
    read_lock,
)
from packaging.utils import canonicalize_name

sys.path.insert(0, str(ROOT))
from app.core.packmaking.export_env import torch_index

PYPI = "https://pypi.org/simple"
MACOS_STEPS = ((11, 0), (12, 0), (13, 0), (14, 0), (15, 0), (26, 0))
GLIBC_NEWEST = 35  # ubuntu-22.04
# pip does not widen manylinux_2_35 to older glibc tags itself: every one is named.
LINUX_TAGS = (
    *(f"manylinux_2_{minor}_x86_64" for minor in range(GLIBC_NEWEST, 4, -1)),
    "manylinux2014_x86_64",
    "manylinux2010_x86_64",
    "manylinux1_x86_64",
)
# What pip must not take from this machine's configuration: other indexes, local wheels.
PIP_SETTINGS_DROPPED = (
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "PIP_FIND_LINKS",
    "PIP_NO_INDEX",
    "PIP_CONSTRAINT",
    "PIP_REQUIREMENT",
    "PIP_ONLY_BINARY",
    "PIP_NO_BINARY",
)


class Unreachable(Exception):
    """An index could not be asked (offline, blocked, or pip failed for another reason)."""


@dataclass(frozen=True)
class Answer:
    """What pip said about a list of pins: the wheel it picked for each, or one it has none
    for (pip stops at the first)."""

    wheels: dict[str, str]  # canonical name -> wheel file name
    missing: str = ""  # canonical name without a wheel


# Asks: (pins, platform tags, python, index) -> Answer.
Ask = Callable[[list[Pin], tuple[str, ...], str, str], Answer]

N_A, MISSING, NOT_CHECKED = "-", "MISSING", "not checked"
SOURCE = "source (allowed)"
# Packages that may install from their source archive on one platform, and why. Each is
# still checked: the archive must be on the index (`source_archive_listed`).
SOURCE_ALLOWED = {
    # adbutils' wheels are platform-tagged only for the adb binary they carry; there is
    # none for Apple Silicon, and on macOS DraftDeck uses the adb of Android's
    # platform-tools (README). Its source archive is pure Python (pbr).
    ("adbutils", MACOS.label): "pure Python; the macOS adb comes from platform-tools",
}


@dataclass(frozen=True)
class Cell:
    pin: Pin
    column: str  # "Windows amd64", "macOS arm64 py3.10", ...
    result: str  # "ok", "pure", "macOS 14.0", MISSING, NOT_CHECKED
    macos: tuple[int, int] | None = None  # the oldest macOS its wheel is tagged for


def tags_for(platform: Platform, macos: tuple[int, int] = MACOS_STEPS[0]) -> tuple[str, ...]:
    if platform is WINDOWS:
        return ("win_amd64",)
    if platform is MACOS:
        return (f"macosx_{macos[0]}_{macos[1]}_arm64",)  # pip widens it to older ones
    return LINUX_TAGS


def describe(wheel: str) -> str:
    return "pure" if wheel.endswith("-none-any.whl") else "ok"


def ask_all(ask: Ask, pins: list[Pin], tags: tuple[str, ...], python: str, index: str) -> Answer:
    """Ask about every pin, going on past those without a wheel."""
    wheels: dict[str, str] = {}
    missing: list[str] = []
    left = list(pins)
    while left:
        answer = ask(left, tags, python, index)
        wheels.update(answer.wheels)
        if not answer.missing:
            break
        missing.append(answer.missing)
        before = len(left)
        left = [pin for pin in left if pin.name != answer.missing]
        if len(left) == before:  # pip named a package that was not asked about
            raise Unreachable(f"pip reported {answer.missing}, which was not asked for")
    return Answer(wheels, ",".join(missing))


def check_column(
    ask: Ask, pins: list[Pin], platform: Platform, python: str, column: str, index: str, skip: bool
) -> list[Cell]:
    """One cell per pin that applies on `platform` under `python`."""
    here = pins_for(pins, platform, python)
    torch_cpu = [pin for pin in here if pin.version.endswith("+cpu")]
    cells = [Cell(pin, column, NOT_CHECKED) for pin in torch_cpu if skip]
    groups = [(p, index) for p in here if p not in torch_cpu]
    if not skip:
        groups += [(p, torch_index() or index) for p in torch_cpu]
    for group_index in dict.fromkeys(i for _, i in groups):
        left = [p for p, i in groups if i == group_index]
        steps = MACOS_STEPS if platform is MACOS else (MACOS_STEPS[0],)
        for step in steps:
            answer = ask_all(ask, left, tags_for(platform, step), python, group_index)
            for pin in left:
                wheel = answer.wheels.get(pin.name)
                if wheel is None:
                    continue
                if platform is MACOS and describe(wheel) == "ok":
                    cells.append(Cell(pin, column, f"macOS {step[0]}.{step[1]}", step))
                else:
                    cells.append(Cell(pin, column, describe(wheel)))
            left = [p for p in left if p.name not in answer.wheels]
            if not left:
                break
        cells += [Cell(pin, column, _without_wheel(pin, platform, group_index)) for pin in left]
    return cells


def _without_wheel(pin: Pin, platform: Platform, index: str) -> str:
    if (pin.name, platform.label) in SOURCE_ALLOWED and source_archive_listed(index, pin):
        return SOURCE
    return MISSING


def source_archive_listed(index: str, pin: Pin) -> bool:
    """Whether the index lists `pin`'s source archive (.tar.gz), named as PEP 625 or as
    older tools wrote it."""
    url = f"{index.rstrip('/')}/{pin.name}/"
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            page = response.read().decode("utf-8", "replace")
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise Unreachable(f"cannot reach {url}: {exc}") from exc
    names = {pin.name, pin.name.replace("-", "_")}
    return any(f"{name}-{pin.version}.tar.gz" in page for name in names)


def columns(lock: Path) -> list[tuple[Platform, str, str]]:
    pythons = (APP_PYTHON,) if lock == APP_LOCK else EXPORT_PYTHONS
    return [
        (platform, python, platform.label if len(pythons) == 1 else f"{platform.label} py{python}")
        for platform in PLATFORMS
        for python in pythons
    ]


def table(pins: list[Pin], cells: list[Cell], heads: list[str]) -> str:
    by_key = {(c.pin.line, c.column): c.result for c in cells}
    rows = [["package", "version", *heads]]
    rows += [[p.name, p.version, *(by_key.get((p.line, h), N_A) for h in heads)] for p in pins]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() for row in rows
    )


def oldest_macos(cells: list[Cell]) -> tuple[tuple[int, int], list[str]] | None:
    """The oldest macOS every locked macOS wheel allows, and the packages that set it."""
    found = [c for c in cells if c.macos is not None]
    if not found:
        return None
    newest = max(c.macos for c in found if c.macos is not None)
    return newest, sorted({f"{c.pin.name} {c.pin.version}" for c in found if c.macos == newest})


def check_lock(ask: Ask, lock: Path, index: str, skip_torch: bool) -> tuple[str, list[Cell]]:
    pins = read_lock(lock)
    heads = columns(lock)
    cells = [c for p, py, h in heads for c in check_column(ask, pins, p, py, h, index, skip_torch)]
    text = f"{lock.relative_to(ROOT)}\n{table(pins, cells, [h for _, _, h in heads])}"
    oldest = oldest_macos(cells)
    if oldest is not None:
        (major, minor), names = oldest
        text += f"\nmacOS arm64: the wheels are tagged for macOS {major}.{minor} and later"
        text += f" ({', '.join(names)} need it)."
    return text, cells


def pip_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in PIP_SETTINGS_DROPPED}
    env["PIP_CONFIG_FILE"] = os.devnull  # no pip.conf: no local wheels or other indexes
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def probe(index: str, name: str) -> None:
    """Raise Unreachable unless `index` answers for project `name` (pip itself would only
    say "no matching distribution", which reads like a missing wheel)."""
    url = f"{index.rstrip('/')}/{name}/"
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            response.read(1)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise Unreachable(f"cannot reach {url}: {exc}") from exc


def pip_ask(pins: list[Pin], tags: tuple[str, ...], python: str, index: str) -> Answer:
    """Ask pip, without downloading wheels, which wheel it would install for each pin."""
    with tempfile.TemporaryDirectory(prefix="draftdeck-wheels-") as tmp:
        report = Path(tmp) / "report.json"
        cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--quiet", "--no-deps"]
        cmd += ["--ignore-installed", "--only-binary=:all:", "--report", str(report)]
        cmd += ["--target", str(Path(tmp) / "target"), "--index-url", index]
        cmd += ["--python-version", python, "--implementation", "cp"]
        cmd += ["--abi", f"cp{python.replace('.', '')}"]
        cmd += [a for tag in tags for a in ("--platform", tag)]
        cmd += [pin.requirement() for pin in pins]
        done = subprocess.run(cmd, capture_output=True, text=True, env=pip_env(), timeout=900)
        if done.returncode == 0:
            data = json.loads(report.read_text(encoding="utf-8"))
            return Answer(
                {
                    canonicalize_name(item["metadata"]["name"]): str(
                        item["download_info"]["url"].rsplit("/", 1)[-1]
                    )
                    for item in data["install"]
                }
            )
    return Answer({}, missing_from(done.stderr))


def missing_from(stderr: str) -> str:
    """The package pip found no wheel for, from its error output."""
    found = re.search(r"No matching distribution found for ([A-Za-z0-9._-]+)", stderr)
    if found is None:
        tail = "\n".join(stderr.strip().splitlines()[-8:])
        raise Unreachable(f"pip failed:\n{tail}")
    return canonicalize_name(found.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lock", choices=("app", "export"), action="append")
    parser.add_argument("--index-url", default=PYPI)
    parser.add_argument("--skip-torch-index", action="store_true", help="leave torch +cpu out")
    args = parser.parse_args(argv)
    locks = {"app": APP_LOCK, "export": EXPORT_LOCK}
    chosen = [locks[k] for k in (args.lock or ["app", "export"])]
    failures = []
    try:
        for lock in chosen:
            pins = read_lock(lock)
            probe(args.index_url, pins[0].name)
            if not args.skip_torch_index and any(p.version.endswith("+cpu") for p in pins):
                probe(torch_index() or args.index_url, "torch")
            text, cells = check_lock(pip_ask, lock, args.index_url, args.skip_torch_index)
            print(text + "\n")
            failures += [
                f"{c.pin.name}=={c.pin.version} ({c.column})" for c in cells if c.result == MISSING
            ]
            for cell in cells:
                if cell.result == SOURCE:
                    why = SOURCE_ALLOWED[(cell.pin.name, cell.column.split(" py")[0])]
                    print(
                        f"{cell.pin.name} {cell.pin.version} on {cell.column}: from source ({why})"
                    )
            if any(c.result == NOT_CHECKED for c in cells):
                print("not checked: torch's +cpu build (--skip-torch-index)\n")
    except LockError as exc:
        print(exc, file=sys.stderr)
        return 1
    except Unreachable as exc:
        print(f"could not check the wheels: {exc}", file=sys.stderr)
        return 2
    if failures:
        print("no wheel for: " + "; ".join(failures), file=sys.stderr)
        return 1
    print("every locked package has a wheel for every platform")
    return 0


if __name__ == "__main__":
    sys.exit(main())
