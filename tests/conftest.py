"""Strict, isolated tests in the spirit of qutebrowser's.

Every test gets its own DraftDeck home (settings, library, logs) in a temporary
folder, no test may leave a thread running, and warnings fail tests (pyproject.toml).
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from app.core.hub.downloads import Downloads
from app.core.hub.hub_api import HubConfig
from app.core.infra.settings import load_settings, save_settings
from app.core.pack.library import Library
from app.engine.client.engine_client import EngineClient
from app.engine.worker.session import Session
from tests.adb_harness import AdbServer
from tests.fake_phone import FakePhone
from tests.helpers.paths import FIXTURES
from tests.hub_server import FakeHub

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# A suite started in the background of a non-interactive shell (`make test &`) inherits
# SIGINT ignored, and so would every child it starts: the Ctrl+C tests would then wait
# for an interrupt that never comes. Ctrl+C means what it means at a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

QWEN3_BUNDLES = (
    "qwen3-target",
    "qwen3-draft-identical",
    "qwen3-draft-noisy",
    "qwen3-draft-independent",
)
ALL_BUNDLES = (*QWEN3_BUNDLES, "qwen35-draft", "fast-target", "fast-draft")


SLOW_TESTS = frozenset(
    line.strip()
    for line in (Path(__file__).parent / "slow_tests.txt").read_text(encoding="utf-8").splitlines()
    if line.strip() and not line.startswith("#")
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests a timed run found slow (tests/slow_tests.txt) are marked `slow`: the
    fast tier (`make check`, `-m "not slow"`) leaves them out."""
    for item in items:
        if item.nodeid in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def draftdeck_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "draftdeck-home"
    monkeypatch.setenv("DRAFTDECK_HOME", str(home))
    return home


@pytest.fixture(autouse=True)
def no_leftover_threads() -> Iterator[None]:
    before = set(threading.enumerate())
    yield
    leftover = [
        t for t in threading.enumerate() if t not in before and t.is_alive() and not t.daemon
    ]
    assert not leftover, f"test left threads running: {leftover}"


@pytest.fixture(autouse=True)
def collect_garbage_in_the_main_thread() -> Iterator[None]:
    """The first window turns automatic collection off for the rest of the process
    (app/ui/base/gui_thread_gc.py); collect after each test, in the main thread, so whether
    a test's garbage is freed does not depend on which tests ran before it."""
    yield
    if not gc.isenabled():
        gc.collect()


@pytest.fixture
def fixture_bundle() -> Callable[[str], Path]:
    """The committed fixture bundle of that name (read-only: copy before changing it)."""

    def get(name: str) -> Path:
        path = FIXTURES / name
        assert path.is_dir(), f"fixture bundle {name} is missing; see tests/fixtures/README.md"
        return path

    return get


# Recipe keys for running fixtures on a test machine: lossless (no run-time
# activation quantization) and one thread each, kind to a 2-core CI runner.
DESKTOP_RECIPE = {"memory": "normal", "thread_num": 1}


@pytest.fixture
def bundle_copy(tmp_path: Path, fixture_bundle: Callable[[str], Path]) -> Callable[..., Path]:
    """A fresh, writable copy of a fixture bundle, to break in a test. With
    `desktop=True` its recipe (config_cpu.json for a draft, with a draft_config_cpu.json
    twin kept in step, else config.json) gets DESKTOP_RECIPE."""

    def copy(name: str = "qwen3-target", dest: Path | None = None, desktop: bool = False) -> Path:
        target = dest or (tmp_path / "copies" / name)
        shutil.copytree(fixture_bundle(name), target)
        if desktop:
            recipes = [target / n for n in ("config_cpu.json", "draft_config_cpu.json")]
            recipes = [p for p in recipes if p.is_file()] or [target / "config.json"]
            for recipe in recipes:
                data = json.loads(recipe.read_text())
                data.update(DESKTOP_RECIPE)
                recipe.write_text(json.dumps(data, indent=4))
        return target

    return copy


@pytest.fixture
def session() -> Iterator[Session]:
    """An in-process engine session (MNN in this process), unloaded after the test."""
    engine = Session()
    yield engine
    engine.unload()


@pytest.fixture
def client() -> Iterator[EngineClient]:
    """An engine worker process, closed after the test."""
    with EngineClient() as engine:
        yield engine


@pytest.fixture(scope="session")
def adb_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AdbServer]:
    """One real adb server (isolated port and keys) for the whole run, killed at the end."""
    with AdbServer(tmp_path_factory.mktemp("adb-home")) as server:
        yield server


@pytest.fixture
def adb_server(adb_session: AdbServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[AdbServer]:
    """The test adb server, named by ANDROID_ADB_SERVER_PORT; phones detached after."""
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(adb_session.port))
    yield adb_session
    for info in adb_session.client.list():
        adb_session.client.disconnect(info.serial)


@pytest.fixture
def phone(tmp_path: Path, adb_server: AdbServer) -> Iterator[FakePhone]:
    """A fake phone, attached and ready."""
    with FakePhone(tmp_path / "phone") as fake:
        adb_server.connect(fake)
        yield fake


# The draft pack the Hub tests download: a real repo id, served by the local stand-in.
DRAFT_REPO = "darkmaniac7/Qwen3-0.6B-kl-baseline-20k-MNN"


@pytest.fixture
def hub(fixture_bundle: Callable[[str], Path]) -> Iterator[FakeHub]:
    """A local Hub serving one draft pack (a test bundle) as DRAFT_REPO."""
    with FakeHub() as server:
        server.add_folder(DRAFT_REPO, fixture_bundle("qwen3-draft-noisy"))
        yield server


@pytest.fixture
def downloads(hub: FakeHub, draftdeck_home: Path) -> Iterator[Downloads]:
    """The downloads service against the local Hub, with no token (a token on the
    machine must not leak in)."""
    service = Downloads(
        Library(load_settings(), save_settings), HubConfig(endpoint=hub.endpoint, token=False)
    )
    yield service
    service.shutdown()
