"""Library and Pair with a broken pack, and a blocked pair on Pair, Chat and Tune.

The blocked pair is qwen3-target with qwen35-draft (a Qwen3 target, a Qwen3.5 draft);
the broken pack is a copy whose llm.mnn.weight is empty.
"""

from __future__ import annotations

from app.ui.base.engine_bridge import ERROR
from gallery.camera import wait_until
from gallery.stage import BROKEN, Scene, select_in_library


def shoot_library(scene: Scene) -> None:
    select_in_library(scene, scene.library / "qwen3-draft-noisy")
    scene.app.processEvents()
    scene.camera.shoot("library", "packs", readme_name="library")
    select_in_library(scene, scene.library / BROKEN)
    scene.app.processEvents()
    scene.camera.shoot("library", "broken-pack")


def shoot_blocked_pair(scene: Scene) -> None:
    window, library = scene.window, scene.library
    window.show_page("pair")
    window.pair_page.choose(library / "qwen3-target", library / "qwen35-draft")
    scene.app.processEvents()
    scene.camera.shoot("pair", "blocked", readme_name="pair-blocked")
    window.show_page("chat")
    # Chat says why it cannot run once the engine has refused the pair.
    wait_until(scene.app, lambda: window.chat_page.bridge.state == ERROR, "Chat's refusal")
    scene.camera.shoot("chat", "blocked")
    scene.camera.shoot("tune", "blocked")


def shoot_broken_pair(scene: Scene) -> None:
    window, library = scene.window, scene.library
    window.show_page("pair")
    window.pair_page.choose(library / BROKEN, library / "qwen3-draft-noisy")
    scene.app.processEvents()
    scene.camera.shoot("pair", "broken-target")
    window.pair_page.choose(library / "qwen3-target", library / BROKEN)
    scene.app.processEvents()
    scene.camera.shoot("pair", "broken-draft")
    window.pair_page.choose(library / "fast-target", library / "qwen3-draft-noisy")
    scene.app.processEvents()
    scene.camera.shoot("pair", "compatible", readme_name="pair")
