"""Recipes with an unsaved edit, made the way a user would, and its diff shown."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QSpinBox

from gallery.stage import Scene


def shoot_recipes(scene: Scene) -> None:
    window, library = scene.window, scene.library
    window.pair_page.choose(library / "qwen3-target", library / "qwen3-draft-noisy")
    window.show_page("recipes")
    editor = window.recipes_page.draft_editor
    memory, threads = editor.editors["memory"].widget, editor.editors["thread_num"].widget
    assert isinstance(memory, QComboBox) and isinstance(threads, QSpinBox)
    memory.setCurrentText("normal")
    threads.setValue(8)
    editor.views.setCurrentIndex(1)  # the diff against the pack original
    scene.app.processEvents()
    scene.camera.shoot("recipes", "unsaved-edit", readme_name="recipes")
