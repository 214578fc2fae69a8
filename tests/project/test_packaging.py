"""The Linux package, built from a clean clone by `python scripts/tasks.py package` (as
`make package` and CI build it), starts and passes its own self-test headless
(`tasks.py self-test`, as CI runs it). Slow (a PyInstaller build, about a minute);
CI runs it."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
import tarfile
from pathlib import Path
from types import ModuleType

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.paths import ROOT
from tests.helpers.script_modules import load_script

# Modules a lean package must not carry (see packaging/README.md).
NOT_PACKAGED = ("torch*", "PIL", "hf_xet", "**/*QtWebEngine*", "**/*QtQuick*", "**/*Qt6Qml*")


def test_self_test_passes_from_source() -> None:
    done = run_cli("--self-test", timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "self-test passed"
    assert [line.split(":")[0] for line in done.stdout.splitlines()[:-1]] == [
        "ok   bundles",
        "ok   window",
        "ok   guide",
        "ok   engine",
        "ok   adb",
    ]


def _packaging_module(name: str) -> ModuleType:
    return load_script(Path("packaging") / f"{name}.py")


@pytest.mark.parametrize(
    ("version", "windows", "macos"),
    [
        ("0.1.0", (0, 1, 0, 0), "0.1.0"),
        ("0.2.0rc1", (0, 2, 0, 0), "0.2.0"),
        ("1.0.dev3", (1, 0, 0, 0), "1.0.0"),
        ("1.1.post2", (1, 1, 0, 0), "1.1.0"),
        ("1!2.0+local.7", (2, 0, 0, 0), "2.0.0"),
        ("2.0b1", (2, 0, 0, 0), "2.0.0"),
        ("1.2.3.4.5", (1, 2, 3, 4), "1.2.3"),
        ("2026.70000", (2026, 65535, 0, 0), "2026.70000.0"),
    ],
)
def test_versions_for_windows_and_macos_metadata(
    version: str, windows: tuple[int, ...], macos: str
) -> None:
    """A pre-release version must not break the Windows or macOS build."""
    versioning = _packaging_module("versioning")
    assert versioning.windows_version(version) == windows
    assert versioning.macos_version(version) == macos


def test_icons_are_rendered_for_every_os(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "packaging" / "make_icons.py"), str(tmp_path)],
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    png = (tmp_path / "draftdeck-256.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", png[16:24]) == (256, 256)
    ico = (tmp_path / "draftdeck.ico").read_bytes()
    reserved, kind, count = struct.unpack("<HHH", ico[:6])
    assert (reserved, kind, count) == (0, 1, 7)
    width, _h, _c, _r, _planes, _bits, size, offset = struct.unpack("<BBBBHHII", ico[6:22])
    assert width == 16 and ico[offset : offset + 4] == b"\x89PNG" and size > 0
    icns = (tmp_path / "draftdeck.icns").read_bytes()
    assert icns[:4] == b"icns" and struct.unpack(">I", icns[4:8])[0] == len(icns)
    entries: dict[str, int] = {}  # entry type: the width of its PNG
    at = 8
    while at < len(icns):
        entry_type = icns[at : at + 4].decode()
        (length,) = struct.unpack(">I", icns[at + 4 : at + 8])
        png = icns[at + 8 : at + length]
        assert png[:8] == b"\x89PNG\r\n\x1a\n", entry_type
        entries[entry_type] = struct.unpack(">II", png[16:24])[0]
        at += length
    assert at == len(icns)
    # Every size a Mac asks for, 1x and Retina (@2x: ic11 to ic14 and ic10), in pixels.
    one_x = {"icp4": 16, "icp5": 32, "icp6": 64, "ic07": 128, "ic08": 256, "ic09": 512}
    retina = {"ic11": 32, "ic12": 64, "ic13": 256, "ic14": 512, "ic10": 1024}
    assert entries == one_x | retina


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="builds the Linux package")
def test_linux_package_builds_from_a_clean_clone_and_passes_its_self_test(
    tmp_path: Path,
) -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout to clone")
    source = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(source)], check=True)
    # The commands CI runs (python scripts/tasks.py package, then self-test), with this
    # test's Python as the environment instead of a new .venv.
    tasks = [sys.executable, "scripts/tasks.py"]
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "DRAFTDECK_PYTHON": sys.executable}
    done = subprocess.run([*tasks, "package"], cwd=source, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"{done.stdout[-3000:]}{done.stderr[-3000:]}"
    report = done.stdout
    assert "MB on disk" in report and "Qt (PySide6)" in report

    app = source / "dist" / "DraftDeck"
    internal = app / "_internal"
    for pattern in NOT_PACKAGED:
        assert not list(internal.glob(pattern)), f"{pattern} must not be packaged"
    assert list(internal.glob("**/*Qt6Widgets*"))  # the patterns do match Qt's files
    adb = internal / "adbutils" / "binaries" / "adb"
    assert adb.is_file() and os.access(adb, os.X_OK)
    for extra in ("install.sh", "draftdeck.desktop", "draftdeck.png"):
        assert (app / extra).is_file(), extra
    [archive] = (source / "dist").glob("DraftDeck-*-linux-*.tar.gz")
    with tarfile.open(archive) as tar:
        assert "DraftDeck/draftdeck" in tar.getnames()

    # Run from elsewhere, with nothing of the checkout on the path: it is self-contained.
    hidden = ("PYTHONPATH", "VIRTUAL_ENV", "ANDROID_HOME", "ANDROID_SDK_ROOT", "ADBUTILS_ADB_PATH")
    run_env = {k: v for k, v in env.items() if k not in hidden}
    run_env.update(PATH="/usr/bin:/bin", HOME=str(tmp_path))
    test = subprocess.run(
        [*tasks, "self-test"],
        cwd=source,
        env=run_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert test.returncode == 0, test.stdout + test.stderr
    for step in ("bundles", "window", "engine", "adb"):
        assert f"ok   {step}:" in test.stdout, test.stdout
    system_adb = shutil.which("adb", path=run_env["PATH"]) or any(
        Path(prefix, "bin", "adb").exists() for prefix in ("/opt/homebrew", "/usr/local")
    )
    if not system_adb:
        assert str(internal) in test.stdout  # the packaged adb

    # The CLI works from the package too.
    version = subprocess.run(
        [str(app / "draftdeck"), "--version"], env=run_env, capture_output=True, text=True
    )
    assert version.returncode == 0 and version.stdout.startswith("draftdeck ")

    # install.sh puts it in a (scratch) user's menu and takes it out again.
    home = tmp_path / "home"
    home.mkdir()
    install_env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    subprocess.run([str(app / "install.sh")], env=install_env, check=True, capture_output=True)
    desktop = home / ".local" / "share" / "applications" / "draftdeck.desktop"
    installed = home / ".local" / "opt" / "DraftDeck" / "draftdeck"
    assert f'Exec="{installed}"\n' in desktop.read_text()
    assert installed.is_file()
    assert (home / ".local/share/icons/hicolor/256x256/apps/draftdeck.png").is_file()
    subprocess.run(
        [str(app / "install.sh"), "--remove"], env=install_env, check=True, capture_output=True
    )
    assert not desktop.exists() and not installed.exists()
