"""`draftdeck --self-test`: prove a build works without a screen.

Opens the main window offscreen, loads a tiny target and its identical draft in the
engine worker (a second copy of the executable in a frozen build), generates a few
tokens and checks the statistics add up (an identical draft accepts everything),
reads a bundle and checks a pair, and finds every page of the user guide. Prints one
line per step; exit 0 when all pass.
Uses a throwaway DraftDeck home, so the user's settings are never touched. On an Intel
Mac the engine step fails and says why: MNN 3.6.1 has no working x86_64 macOS build.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

TARGET, DRAFT = "qwen3-target", "qwen3-draft-identical"
TOKENS = 8

# Why the engine cannot run as x86_64 on macOS (README.md, packaging/README.md).
MACOS_X86_64 = (
    "MNN 3.6.1 cannot run as x86_64 on macOS (an Intel Mac, or an Intel Python under "
    "Rosetta): in its macOS x86_64 wheels, _mnncengine leaves 375 of MNN's own functions "
    "to be found at run time and links no libMNN, and the libMNN.dylib they carry is "
    "arm64-only, so nothing provides them. DraftDeck needs an Apple Silicon Mac (and an "
    "arm64 Python when run from source)."
)


class UnsupportedPlatform(RuntimeError):
    """The engine cannot run on this kind of machine."""


def macos_x86_64(system: str | None = None, machine: str | None = None) -> bool:
    """An x86_64 process on macOS (an Intel Mac, or Rosetta): MNN 3.6.1 cannot load."""
    import platform

    system = sys.platform if system is None else system
    machine = platform.machine() if machine is None else machine
    return system == "darwin" and machine == "x86_64"


def bundles_dir() -> Path:
    """The self-test bundles: packed into a frozen build, else the test fixtures."""
    from app.core.infra.paths import install_root, is_frozen

    root = install_root()
    return root / "selftest" if is_frozen() else root / "tests" / "fixtures" / "bundles"


def _check_bundles(folder: Path) -> str:
    from app.core.pack.bundle import read_bundle
    from app.core.pack.compat import assess

    target, draft = read_bundle(folder / TARGET), read_bundle(folder / DRAFT)
    verdict = assess(target, draft)
    if verdict.blocked:
        raise AssertionError(f"the fixture pair is blocked: {verdict.summary()}")
    return f"{target.name} + {draft.name}: {verdict.label}"


def _check_guide() -> str:
    """Help's user guide: every page and picture its index reaches is there."""
    from app.core.infra.guide_files import INDEX, guide_folder, reachable

    files, missing = reachable(guide_folder() / INDEX)
    if missing:
        raise AssertionError(f"the user guide lacks {', '.join(map(str, missing))}")
    return f"{len(files)} files in {guide_folder().parent}"


def _open_window() -> str:
    from PySide6.QtWidgets import QApplication

    from app.ui.shell.application import create_main_window

    app = QApplication.instance() or QApplication([sys.argv[0]])
    window = create_main_window()
    window.show()
    app.processEvents()
    pages = list(window.pages)
    if window.windowIcon().isNull():  # the SVG image plugin is missing from the build
        raise AssertionError("the window icon did not load (Qt's SVG image plugin?)")
    window._closing_anyway = True
    window.close()
    app.processEvents()
    platform = QApplication.platformName()
    return f"{len(pages)} pages ({', '.join(pages)}) on the {platform} platform"


def _generate(folder: Path) -> str:
    from app.core.infra.errors import EngineError

    try:
        return _speculate(folder)
    except EngineError as exc:
        if macos_x86_64():  # say why instead of MNN's missing-symbol message alone
            raise UnsupportedPlatform(f"{MACOS_X86_64} (The engine said: {exc})") from exc
        raise


def _speculate(folder: Path) -> str:
    from app.engine.client.engine_client import EngineClient
    from app.engine.protocol import Generate, Load, Mode

    with EngineClient() as client:
        client.run(Load(target=str(folder / TARGET), draft=str(folder / DRAFT)))
        done = client.run(
            Generate(prompt="Hello", max_tokens=TOKENS, mode=Mode.SPECULATIVE, chat=True)
        )
    stats = done.stats
    if stats.tokens != len(done.tokens) or not stats.tokens:
        raise AssertionError(f"token counts do not add up: {stats}")
    if stats.drafted and stats.accepted != stats.drafted:
        raise AssertionError(f"an identical draft must accept everything: {stats}")
    accepted = f"{stats.accepted}/{stats.drafted} drafts accepted"
    return f"{stats.tokens} tokens, {accepted}, MNN {_mnn_version()}"


def _mnn_version() -> str:
    """MNN's version from its package metadata, which a build must carry (the spec copies
    it): tune records and the verify-agreement cache are keyed by it."""
    from importlib import metadata

    try:
        return metadata.version("mnn")
    except metadata.PackageNotFoundError:
        raise AssertionError("MNN's package metadata is missing from this build") from None


def _find_adb() -> str:
    import subprocess

    from app.core.infra.processes import no_window_flags
    from app.core.phone.adb import adb_executable, bundled_adb

    frozen_root = getattr(sys, "_MEIPASS", None)
    if frozen_root and sys.platform.startswith("linux"):
        inherited = os.environ.get("LD_LIBRARY_PATH", "")
        if frozen_root in inherited:  # programs we start would load our libraries
            raise AssertionError(f"LD_LIBRARY_PATH still points into the app: {inherited}")
    # A build must carry its own adb; from source, the one DraftDeck would start.
    exe = bundled_adb() if frozen_root else adb_executable()
    if exe is None:
        if sys.platform == "darwin":  # the adbutils wheel ships no macOS adb
            return "none bundled on macOS; install Android platform-tools"
        raise AssertionError("adb is missing from this build")
    version = subprocess.run(
        [exe, "version"],
        capture_output=True,
        text=True,
        timeout=30,
        creationflags=no_window_flags(),  # no console window on Windows
    )
    first = (version.stdout.splitlines() or ["?"])[0]
    return f"{exe} ({first})"


def run_self_test() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    home = Path(tempfile.mkdtemp(prefix="draftdeck-self-test-"))
    os.environ["DRAFTDECK_HOME"] = str(home)
    folder = bundles_dir()
    steps: list[tuple[str, Callable[[], str]]] = [
        ("bundles", lambda: _check_bundles(folder)),
        ("window", _open_window),
        ("guide", _check_guide),
        ("engine", lambda: _generate(folder)),
        ("adb", _find_adb),
    ]
    failed = 0
    try:
        for name, step in steps:
            started = time.monotonic()
            try:
                detail = step()
            except Exception as exc:  # every step reports; one failure fails the test
                failed += 1
                print(f"FAIL {name}: {type(exc).__name__}: {exc}", flush=True)
            else:
                print(f"ok   {name}: {detail} ({time.monotonic() - started:.1f} s)", flush=True)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    print("self-test passed" if not failed else f"self-test FAILED ({failed} steps)")
    return 1 if failed else 0
