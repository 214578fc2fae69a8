"""DraftDeck's developer tasks, the same on Windows, macOS and Linux (stdlib only).

    python scripts/tasks.py TASK [ARGS]      (python3 >= 3.10; `--help` lists the tasks)

The Makefile's targets and the CI and release workflows (.github/workflows/) run these
tasks, so the commands a Windows user types without make are the ones CI runs.
The environment is .venv in the checkout (DRAFTDECK_VENV names another); each install
is redone when pyproject.toml or the lock changes (stamp files in the venv).
DRAFTDECK_PYTHON=PATH uses that interpreter's environment as it is (no venv, no install:
the tests build the app with the running Python that way).
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import os
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "locks" / "app.txt"
WINDOWS = sys.platform == "win32"
EXTRAS = ("test", "package")


class TaskError(Exception):
    """A task that cannot go on: the message says why; exit 1 without a traceback."""


def venv_dir() -> Path:
    return ROOT / os.environ.get("DRAFTDECK_VENV", ".venv")


def scripts_dir() -> Path:
    """Where the environment's programs are (a venv's bin, or Scripts on Windows)."""
    own = os.environ.get("DRAFTDECK_PYTHON")
    if own:
        return Path(own).parent  # not resolved: a venv's python links outside the venv
    return venv_dir() / ("Scripts" if WINDOWS else "bin")


def tool(name: str) -> str:
    return str(scripts_dir() / (f"{name}.exe" if WINDOWS else name))


def python() -> str:
    return os.environ.get("DRAFTDECK_PYTHON") or tool("python")


def run(*command: str | Path, env: dict[str, str] | None = None) -> None:
    args = [str(part) for part in command]
    print("+", " ".join(args), flush=True)
    done = subprocess.run(args, cwd=ROOT, env=None if env is None else {**os.environ, **env})
    if done.returncode != 0:
        raise TaskError(f"{args[0]} exited with {done.returncode}")


def lock_args() -> list[str]:
    """Every install takes the locked versions (locks/app.txt, scripts/lock.py)."""
    if not LOCK.is_file():
        raise TaskError(
            f"{LOCK} is missing: restore it (git checkout {LOCK.name}) or run scripts/lock.py"
        )
    return ["-c", str(LOCK)]


# The Qt 6 desktop libraries a minimal Debian/Ubuntu lacks (the README lists the same).
APT_PACKAGES = (
    "libxcb-cursor0",
    "libxkbcommon-x11-0",
    "libxcb-icccm4",
    "libxcb-keysyms1",
    "libegl1",
    "libfontconfig1",
)


def system_deps() -> None:
    """Debian/Ubuntu: apt-get install the libraries Qt needs (sudo); elsewhere nothing."""
    if not sys.platform.startswith("linux"):
        print("nothing to install: the wheels carry what Windows and macOS lack")
        return
    run("sudo", "apt-get", "update", "--quiet")
    run("sudo", "apt-get", "install", "--yes", "--no-install-recommends", *APT_PACKAGES)


def venv() -> None:
    """Create the virtual environment (.venv) if it is missing."""
    if os.environ.get("DRAFTDECK_PYTHON") or Path(python()).exists():
        return
    run(sys.executable, "-m", "venv", venv_dir())
    run(python(), "-m", "pip", "install", "--quiet", "--upgrade", "pip")


def install(extra: str | None = None) -> None:
    """Install the app (editable) with an extra into the venv, unless already done."""
    if os.environ.get("DRAFTDECK_PYTHON"):
        return
    venv()
    stamp = venv_dir() / (f".installed-{extra}" if extra else ".installed")
    inputs = [ROOT / "pyproject.toml", *([LOCK] if LOCK.is_file() else [])]
    if stamp.exists() and all(p.stat().st_mtime <= stamp.stat().st_mtime for p in inputs):
        return
    target = f".[{extra}]" if extra else "."
    run(python(), "-m", "pip", "install", "--quiet", *lock_args(), "-e", target)
    stamp.touch()
    if extra:  # an extra installs the app itself too
        (venv_dir() / ".installed").touch()


def offscreen() -> dict[str, str]:
    return {"QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen")}


def app_run() -> None:
    """Start the app."""
    install()
    run(tool("draftdeck"))


def lint() -> None:
    """ruff, mypy as Linux, Windows and macOS see the app, import contracts, the
    workflows (actionlint, zizmor) and the lock."""
    install("test")
    run(tool("ruff"), "check", ".")
    run(tool("ruff"), "format", "--check", ".")
    run(tool("mypy"))
    # A name Windows' or macOS' Python lacks (signal.SIGKILL on Windows) is an error
    # (tests/project/test_portability.py checks it at run time).
    run(tool("mypy"), "--platform", "win32", "--cache-dir", ".mypy_cache/win32", "app")
    run(tool("mypy"), "--platform", "darwin", "--cache-dir", ".mypy_cache/darwin", "app")
    run(tool("lint-imports"))
    workflows = sorted(glob.glob(str(ROOT / ".github" / "workflows" / "*.yml")))
    run(tool("actionlint"), *workflows)
    # --offline: the online audits (impostor commits, known-vulnerable actions, stale
    # version comments) need the GitHub API, which this machine cannot reach.
    # The auditor persona is zizmor's strictest; a finding is fixed or answered where
    # it is (secrets-outside-env: release.yml's build job runs in an environment).
    run(tool("zizmor"), "--offline", "--persona", "auditor", ".github/workflows")
    run(python(), "scripts/lock.py", "--check")
    check_wheels()


# What the wheel check's verdict depends on: the locks and the check itself.
WHEEL_CHECK_INPUTS = (
    "locks/app.txt",
    "locks/export-env.txt",
    "scripts/check_wheels.py",
    "scripts/lockfile.py",
)


def check_wheels() -> None:
    """Every locked package has a wheel for each OS (scripts/check_wheels.py). A pass is
    remembered for these exact locks (the index only gains files), so a second lint asks
    nothing; a fresh clone, as on GitHub, always asks."""
    digest = hashlib.sha256()
    for name in WHEEL_CHECK_INPUTS:
        digest.update((ROOT / name).read_bytes())
    stamp = ROOT / ".cache" / "wheel-check" / f"{digest.hexdigest()}.passed"
    if stamp.is_file():
        print(
            f"wheels: these locks passed before ({stamp.relative_to(ROOT)}; delete it to ask again)"
        )
        return
    # PyTorch's own index (torch +cpu) is reachable from GitHub's runners, not from every
    # machine: elsewhere that row is said as not checked.
    args = [] if os.environ.get("GITHUB_ACTIONS") == "true" else ["--skip-torch-index"]
    run(python(), "scripts/check_wheels.py", *args)
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text("passed\n", encoding="utf-8")


def test(pytest_args: Sequence[str] = ()) -> None:
    """The test suite on every core (pytest-xdist); pytest arguments pass through (given
    any, the run is as they say: `tasks.py test tests/core -x` runs in one process)."""
    install("test")
    run(tool("pytest"), *(pytest_args or ("-n", "auto")), env=offscreen())


def check() -> None:
    """The fast tier: lint and the tests not marked slow."""
    lint()
    test(["-n", "auto", "-m", "not slow"])  # the slow ones: tests/slow_tests.txt


def package() -> None:
    """The double-click app for this OS in dist/ (packaging/README.md)."""
    install("package")
    run(python(), "packaging/make_icons.py", "build/icons")
    run(
        *(python(), "-m", "PyInstaller", "packaging/draftdeck.spec", "--noconfirm"),
        *("--distpath", "dist", "--workpath", "build/pyinstaller"),
    )
    run(python(), "packaging/finish.py", "dist")


def built_app(dist: Path, platform: str = sys.platform) -> Path:
    """The built app's command-line executable (a windowed .exe prints nothing)."""
    if platform == "win32":
        return dist / "DraftDeck" / "draftdeck-cli.exe"
    if platform == "darwin":
        return dist / "DraftDeck.app" / "Contents" / "MacOS" / "draftdeck"
    return dist / "DraftDeck" / "draftdeck"


def self_test(dist: Path) -> None:
    """Run the built app's own --self-test (window, engine, pair check, adb)."""
    app = built_app(dist)
    if not app.is_file():
        raise TaskError(f"{app} not found: build it first (python scripts/tasks.py package)")
    run(app, "--self-test", env=offscreen())


def app_version() -> str:
    init = (ROOT / "app" / "__init__.py").read_text(encoding="utf-8")
    found = re.search(r'^__version__ = "([^"]+)"$', init, re.MULTILINE)
    if found is None:
        raise TaskError('app/__init__.py: no __version__ = "..." line')
    return found.group(1)


def release_notes(version: str) -> str:
    """The CHANGELOG.md section `## [VERSION]` (to the next `## ` heading)."""
    changelog = ROOT / "CHANGELOG.md"
    if not changelog.is_file():
        raise TaskError(f"{changelog} not found")
    heading = re.compile(rf"^## \[{re.escape(version)}\](?: |$)")
    notes: list[str] | None = None
    for line in changelog.read_text(encoding="utf-8").splitlines():
        if notes is None:
            notes = [] if heading.match(line) else None
        elif line.startswith("## "):
            break
        else:
            notes.append(line)
    if notes is None:
        raise TaskError(f"{changelog}: no section '## [{version}]'")
    text = "\n".join(notes).strip()
    if not text:
        raise TaskError(f"{changelog}: the section '## [{version}]' is empty")
    return text + "\n"


def release_check(tag: str, notes_file: Path | None = None) -> None:
    """The tag is v + the app's version and CHANGELOG.md has its notes (printed, or
    written to --notes)."""
    version = app_version()
    if tag != f"v{version}":
        raise TaskError(f"tag {tag!r} is not the app's version: app/__init__.py has {version}")
    notes = release_notes(version)
    if notes_file is None:
        sys.stdout.write(notes)
    else:
        notes_file.parent.mkdir(parents=True, exist_ok=True)
        notes_file.write_text(notes, encoding="utf-8")
        print(f"{tag}: release notes in {notes_file}")


def sha256sums(folder: Path) -> None:
    """Write FOLDER/SHA256SUMS (`sha256sum -c` reads it) for the files in FOLDER."""
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.name != "SHA256SUMS")
    if not files:
        raise TaskError(f"{folder}: no files to sum")
    lines = []
    for path in files:
        digest = hashlib.sha256()
        with path.open("rb") as stream:
            for block in iter(lambda: stream.read(1 << 20), b""):
                digest.update(block)
        lines.append(f"{digest.hexdigest()}  {path.name}\n")
    (folder / "SHA256SUMS").write_text("".join(lines), encoding="utf-8", newline="\n")
    sys.stdout.write("".join(lines))


def publish(tag: str, folder: Path) -> None:
    """Create the GitHub release TAG with FOLDER's files (gh CLI, GH_TOKEN)."""
    notes = ROOT / "build" / "release-notes.md"
    release_check(tag, notes)
    files = sorted(str(p) for p in folder.iterdir() if p.is_file())
    if not any(name.endswith("SHA256SUMS") for name in files):
        raise TaskError(f"{folder}: no SHA256SUMS (python scripts/tasks.py sha256sums)")
    pre = ["--prerelease"] if re.search(r"[a-z]", app_version()) else []
    title = f"DraftDeck {tag[1:]}"
    run(
        "gh",
        "release",
        "create",
        tag,
        "--verify-tag",
        "--title",
        title,
        "--notes-file",
        notes,
        *pre,
        *files,
    )


def sign() -> None:
    """Sign (and on macOS notarize) the built app, then archive it again."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from signing import sign_built_app

    sign_built_app(ROOT / "dist")
    run(python(), "packaging/finish.py", "dist")


TASKS: dict[str, Callable[..., None]] = {
    "system-deps": system_deps,
    "venv": venv,
    "install": install,
    "run": app_run,
    "lint": lint,
    "test": test,
    "check": check,
    "package": package,
    "self-test": self_test,
    "release-check": release_check,
    "sha256sums": sha256sums,
    "publish": publish,
    "sign": sign,
}


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="tasks.py", description=__doc__.split("\n")[0])
    sub = top.add_subparsers(dest="task", required=True, metavar="TASK")
    tasks = {}
    for name, function in TASKS.items():
        doc = " ".join((function.__doc__ or "").split())
        tasks[name] = sub.add_parser(name, help=doc, description=doc)
    tasks["install"].add_argument("--extra", choices=EXTRAS)
    tasks["self-test"].add_argument("dist", nargs="?", type=Path, default=ROOT / "dist")
    tasks["release-check"].add_argument("tag")
    tasks["release-check"].add_argument("--notes", type=Path, dest="notes_file")
    tasks["sha256sums"].add_argument("folder", type=Path)
    tasks["publish"].add_argument("tag")
    tasks["publish"].add_argument("folder", type=Path)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args: dict[str, Any]
    if argv[:1] == ["test"]:
        # pytest's options pass through untouched (argparse would take -m or -k).
        name, args = "test", {"pytest_args": argv[1:]}
    else:
        args = vars(parser().parse_args(argv))
        name = args.pop("task")
    try:
        TASKS[name](**args)
    except TaskError as exc:
        print(f"tasks.py {name}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
