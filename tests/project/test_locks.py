"""The lock files (locks/, scripts/lock.py): they fit pyproject.toml, pin what the tests
run with, never hold torch in the app's lock; and check_wheels' decisions, on small fake
locks with a stand-in for pip (the real run, against PyPI, belongs to `make lint`)."""

from __future__ import annotations

import http.server
import shutil
import subprocess
import sys
import threading
from importlib import metadata
from pathlib import Path

import pytest
from packaging.utils import canonicalize_name

from app.core.packmaking.export_env import constraints_lock
from tests.helpers.paths import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import check_wheels
import lock
from lockfile import APP_LOCK, APP_PYTHON, LINUX, MACOS, WINDOWS, LockError, Pin, parse_lock

LOCKED = ("locks", "resources", "pyproject.toml")


def _copy(tmp_path: Path) -> Path:
    for name in LOCKED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, tmp_path / name)
        else:
            shutil.copy(source, tmp_path / name)
    return tmp_path


def test_the_committed_locks_fit_pyproject() -> None:
    assert lock.check() == []
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "lock.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "fit pyproject.toml" in done.stdout


def test_a_pin_outside_pyprojects_range_is_named(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    app = root / "locks" / "app.txt"
    # The PySide6 that kills the app (pyproject excludes it).
    app.write_text(
        app.read_text().replace("pyside6-essentials==6.11.3", "pyside6-essentials==6.12.0")
    )
    problems = lock.check(root)
    assert any("pyside6-essentials==6.12.0 is outside PySide6-Essentials" in p for p in problems)
    assert all(str(app) in p for p in problems)


def test_torch_in_the_app_lock_and_a_missing_pin_are_refused(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    app = root / "locks" / "app.txt"
    text = app.read_text().replace("psutil==7.2.2\n", "torch==2.13.0\n")
    app.write_text(text)
    problems = lock.check(root)
    assert any("torch must never be in the app's lock" in p for p in problems)
    assert sum("psutil>=5.9 is not pinned for" in p for p in problems) == 3  # each OS


def test_a_platform_pinned_twice_and_a_stale_resource_copy_are_refused(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    export = root / "locks" / "export-env.txt"
    export.write_text(export.read_text() + "onnx==1.0 ; sys_platform == 'win32'\n")
    problems = lock.check(root)
    assert any("onnx is pinned twice for Windows amd64, Python 3.10" in p for p in problems)
    assert any("export-env-lock.txt differs from" in p for p in problems)


def test_a_lock_line_that_is_not_an_exact_pin_is_named() -> None:
    with pytest.raises(LockError, match=r"x.txt:2: numpy is not pinned to one version"):
        parse_lock("psutil==7.2.2\nnumpy>=2\n", "x.txt")
    with pytest.raises(LockError, match=r"x.txt:1: not a requirement"):
        parse_lock("psutil=7\n", "x.txt")


def test_the_app_lock_pins_what_the_tests_run_with() -> None:
    """The test environment is made from the lock, so the two agree wherever both have a
    package (the environment also has the app itself, and the lock other OSes' packages).
    Left out: what `python -m venv` put in before any install (its setuptools is the one
    ensurepip bundles, 65.5 for Python 3.11, which a build from the lock upgrades)."""
    installed: dict[str, str] = {
        canonicalize_name(d.metadata["Name"]): d.version for d in metadata.distributions()
    }
    for seeded in ("pip", "setuptools"):
        installed.pop(seeded, None)
    pins = [
        p for p in parse_lock(APP_LOCK.read_text(), str(APP_LOCK)) if p.applies(LINUX, APP_PYTHON)
    ]
    differ = {
        p.name: (p.version, installed[p.name])
        for p in pins
        if installed.get(p.name, p.version) != p.version
    }
    assert differ == {}
    assert "torch" not in {p.name for p in pins}


def test_the_app_gives_pip_the_committed_export_lock() -> None:
    assert constraints_lock() == (ROOT / "locks" / "export-env.txt").read_text(encoding="utf-8")


def test_regenerating_drops_only_what_torchs_cuda_build_needs() -> None:
    text = (
        "# header\n"
        "jinja2==3.1.6\n    # via torch\n"
        "nvidia-cublas==13.1 ; sys_platform == 'linux'\n    # via torch\n"
        "cuda-pathfinder==1.9 ; sys_platform == 'linux'\n    # via\n    #   cuda-bindings\n"
        "cuda-bindings==13.5 ; sys_platform == 'linux'\n    # via nvidia-cublas\n"
        "packaging==26.4\n    # via\n    #   cuda-bindings\n    #   transformers\n"
        "torch==2.13.0\n    # via -r export-env.in\n"
        "triton==3.7.1\n    # via torch\n"
    )
    kept = [line for line in lock.drop_cuda_only(text).splitlines() if line[:1].isalpha()]
    assert kept == ["jinja2==3.1.6", "packaging==26.4"]


# check_wheels: a stand-in for pip, answering from a table of wheels per platform tag.
WHEELS = {
    "win_amd64": {"psutil": "psutil-7-cp311-win_amd64.whl", "rich": "rich-1-py3-none-any.whl"},
    "macosx_11_0_arm64": {"rich": "rich-1-py3-none-any.whl"},
    "macosx_14_0_arm64": {
        "psutil": "psutil-7-cp311-macosx_14_0_arm64.whl",
        "rich": "rich-1-py3-none-any.whl",
    },
    check_wheels.LINUX_TAGS[0]: {"rich": "rich-1-py3-none-any.whl"},
}


def _fake_pip(
    pins: list[Pin], tags: tuple[str, ...], python: str, index: str
) -> check_wheels.Answer:
    """Like pip: the first pin without a wheel ends the answer; newer macOS tags take
    the wheels of older ones."""
    assert python == "3.11" and index == "https://index.example/simple"
    if tags[0].startswith("macosx_"):
        major = int(tags[0].split("_")[1])
        have = {
            k: v
            for t, w in WHEELS.items()
            if t.startswith("macosx_") and int(t.split("_")[1]) <= major
            for k, v in w.items()
        }
    else:
        have = WHEELS.get(tags[0], {})
    for pin in pins:
        if pin.name not in have:
            return check_wheels.Answer({}, pin.name)
    return check_wheels.Answer({p.name: have[p.name] for p in pins})


FAKE_LOCK = "psutil==7.2.2\nrich==15.0.0\npywin32-ctypes==0.2.3 ; sys_platform == 'win32'\n"


def test_check_wheels_names_what_has_no_wheel_and_the_oldest_macos() -> None:
    pins = parse_lock(FAKE_LOCK, "fake")
    ask = _fake_pip
    index = "https://index.example/simple"
    win = check_wheels.check_column(ask, pins, WINDOWS, "3.11", "win", index, False)
    mac = check_wheels.check_column(ask, pins, MACOS, "3.11", "mac", index, False)
    linux = check_wheels.check_column(ask, pins, LINUX, "3.11", "linux", index, False)
    # pywin32-ctypes applies on Windows only, where the stand-in index has no wheel.
    assert {c.pin.name: c.result for c in win} == {
        "psutil": "ok",
        "rich": "pure",
        "pywin32-ctypes": check_wheels.MISSING,
    }
    assert {c.pin.name: c.result for c in mac} == {"psutil": "macOS 14.0", "rich": "pure"}
    assert {c.pin.name: c.result for c in linux} == {"psutil": check_wheels.MISSING, "rich": "pure"}
    assert check_wheels.oldest_macos(mac) == ((14, 0), ["psutil 7.2.2"])
    table = check_wheels.table(pins, [*win, *mac, *linux], ["win", "mac", "linux"])
    assert table.splitlines()[3].split() == ["pywin32-ctypes", "0.2.3", "MISSING", "-", "-"]


def test_check_wheels_reads_pips_verdict_and_refuses_to_guess() -> None:
    stderr = (
        "ERROR: Could not find a version that satisfies the requirement "
        "PySide6_Essentials==6.11.3 (from versions: 6.7.3)\n"
        "ERROR: No matching distribution found for PySide6_Essentials==6.11.3\n"
    )
    assert check_wheels.missing_from(stderr) == "pyside6-essentials"
    with pytest.raises(check_wheels.Unreachable, match="pip failed:\nERROR: HTTP error 503"):
        check_wheels.missing_from("ERROR: HTTP error 503\n")


def test_check_wheels_says_so_when_the_index_cannot_be_reached(tmp_path: Path) -> None:
    # A port nothing listens on: the check must fail, never pass for want of an answer.
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "check_wheels.py"),
            "--lock",
            "app",
            "--index-url",
            "http://127.0.0.1:9/simple",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "could not check the wheels: cannot reach http://127.0.0.1:9/simple/" in done.stderr


def test_a_source_archive_is_allowed_only_where_named_and_only_when_listed() -> None:
    # adbutils has no Apple Silicon wheel (its wheels differ only in the adb they carry);
    # on macOS its pure-Python source archive may install, if the index lists it.
    pins = parse_lock("adbutils==2.12.0\n", "fake")
    listed = {"/simple/adbutils/": b'<a href="adbutils-2.12.0.tar.gz">adbutils-2.12.0.tar.gz</a>'}

    class Index(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = listed.get(self.path, b"")
            self.send_response(200 if body else 404)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    def no_wheels(
        asked: list[Pin], tags: tuple[str, ...], python: str, index: str
    ) -> check_wheels.Answer:
        return check_wheels.Answer({}, asked[0].name)

    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), Index) as server:
        thread = threading.Thread(target=server.serve_forever)
        thread.start()
        try:
            index = f"http://127.0.0.1:{server.server_address[1]}/simple"
            mac = check_wheels.check_column(no_wheels, pins, MACOS, "3.11", "mac", index, False)
            win = check_wheels.check_column(no_wheels, pins, WINDOWS, "3.11", "win", index, False)
            listed["/simple/adbutils/"] = b"<html>no archive</html>"
            gone = check_wheels.check_column(no_wheels, pins, MACOS, "3.11", "mac", index, False)
        finally:
            server.shutdown()
            thread.join()
    assert [c.result for c in mac] == [check_wheels.SOURCE]
    assert [c.result for c in win] == [check_wheels.MISSING]
    assert [c.result for c in gone] == [check_wheels.MISSING]
