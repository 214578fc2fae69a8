"""The DraftDeck homes the gallery photographs, and the window over one.

Everything is local: the library holds copies of the committed fixture bundles, the Hub
is tests/hub_server.FakeHub, the adb server tests/adb_harness.AdbServer with
tests/fake_phone.FakePhone phones, exactly as the tests use them.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtWidgets import QApplication

from app.ui.shell.application import create_main_window
from app.ui.shell.main_window import MainWindow
from gallery.camera import Camera, wait_until
from tests.adb_harness import AdbServer
from tests.hub_server import FakeHub

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "bundles"
PACKS = ("qwen3-target", "qwen3-draft-noisy", "qwen35-draft", "fast-target", "fast-draft")
BROKEN = "half-copied-pack"


def use_home(home: Path) -> Path:
    """Make `home` the DraftDeck home from now on; return its library folder."""
    home.mkdir(parents=True, exist_ok=True)
    os.environ["DRAFTDECK_HOME"] = str(home)
    return home / "data" / "packs"


def fill_library(library: Path) -> None:
    """The fixture packs, a desktop recipe for the fast pair, and one broken pack: a copy
    whose llm.mnn.weight stops half-way, as an interrupted copy leaves it."""
    for name in PACKS:
        shutil.copytree(FIXTURES / name, library / name)
    # One thread each (two cores here) and lossless memory, so the pair runs quickly.
    for name, recipe in (("fast-target", "config.json"), ("fast-draft", "config_cpu.json")):
        path = library / name / recipe
        data = json.loads(path.read_text())
        data.update({"thread_num": 1, "memory": "normal"})
        path.write_text(json.dumps(data, indent=4))
    broken = library / BROKEN
    shutil.copytree(FIXTURES / "qwen3-draft-independent", broken)
    weight = broken / "llm.mnn.weight"
    weight.write_bytes(weight.read_bytes()[: weight.stat().st_size // 2])


def open_window(app: QApplication) -> MainWindow:
    """The main window over the current home, shown at its first gallery size later."""
    window = create_main_window()
    window.show()
    app.processEvents()
    return window


def close_window(window: MainWindow) -> None:
    """Close without the unsaved-recipe question a demo edit would raise."""
    window._closing_anyway = True
    window.close()


@dataclass
class Scene:
    """What a page-state builder works with."""

    app: QApplication
    window: MainWindow
    camera: Camera
    home: Path
    library: Path
    hub: FakeHub
    adb: AdbServer


def select_in_library(scene: Scene, pack: Path) -> None:
    """Select `pack` on the Library page once its reading (a worker thread's) lists it:
    selected before, nothing is, and a dialog opened for the selection has no pack."""
    page = scene.window.library_page

    def selected() -> bool:
        page.select_path(pack)
        entry = page.selected_entry()
        return entry is not None and entry.path == pack

    wait_until(scene.app, selected, f"{pack.name} listed in the Library")


def choose_pair(scene: Scene, target: Path, draft: Path) -> None:
    """Choose the pair on the Pair page once its own reading (a worker thread's) lists
    both packs: chosen before, the pages keep the pair chosen earlier."""
    page = scene.window.pair_page
    scene.window.show_page("pair")

    def chosen() -> bool:
        page.choose(target, draft)
        return [e.path if e else None for e in page.current()] == [target, draft]

    wait_until(scene.app, chosen, f"{target.name} and {draft.name} on the Pair page")
