"""Every page in a fresh DraftDeck home: an empty library, no phone, no downloads."""

from __future__ import annotations

from gallery.stage import Scene


def shoot_empty(scene: Scene) -> None:
    for page in scene.window.pages:
        scene.camera.shoot(page, "empty")
