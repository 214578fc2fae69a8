"""File → Make Pack… and File → Publish to Hugging Face…, each dialog drawn over the window.

- make-pack: a SmolLM2-135M-shaped model folder (its config.json and tokenizer config,
  no weights) with the default block 128, which the checks refuse (hidden 576);
- make-pack-exporting, make-pack-verified: the committed tiny Llama mid-export (its
  stages on the bar) and exported and verified for real, when an
  export environment is ready (DRAFTDECK_EXPORT_ENV, else the tests' .venv-export-cache);
  without one the shot is skipped and said so;
- measure-pack: a fixture draft measured against the library's targets (a bench of
  each compatible one, for real), its runtime_config.json written;
- publish: a fixture pack with its card, ready to go to the local Hub stand-in.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QDialog

from app.core.packmaking.card import CardFacts
from app.core.packmaking.export_env import EXPORT_ENV_VAR, ready_export_env
from app.core.packmaking.make import write_card_only
from app.ui.base.scheme import colours, scheme
from app.ui.packmaking.make_pack_dialog import MakePackDialog
from gallery.camera import (
    README_SIZE,
    SCHEMES,
    GalleryError,
    Size,
    check_png,
    shot_name,
    size_name,
    wait_until,
)
from gallery.stage import ROOT, Scene, select_in_library
from tests.helpers.smol_shape import smol_shaped_folder
from tests.hub_server import DEFAULT_TOKEN

TINY_LLAMA = ROOT / "tests" / "fixtures" / "hf" / "llama-tiny"
TESTS_EXPORT_ENV = ROOT / ".venv-export-cache"
TITLE_PX = 28


def _save(scene: Scene, dialog: QDialog, size: Size, path: Path) -> bool:
    """The window at `size`, dimmed, with the dialog and a title bar drawn centred over it."""
    window = scene.window
    window.resize(*size)
    scene.app.processEvents()
    scene.app.processEvents()
    if (window.width(), window.height()) != size:
        scene.camera.problems.append(f"{path.name}: the window stays {window.width()} px wide")
        return False
    shot = window.grab()
    over = dialog.grab()
    painter = QPainter(shot)
    painter.fillRect(shot.rect(), QColor(20, 25, 40, 110))  # the window behind, dimmed
    left = (size[0] - over.width()) // 2
    top = (size[1] - over.height() + TITLE_PX) // 2
    title = QRect(left, top - TITLE_PX, over.width(), TITLE_PX)
    painter.fillRect(title, QColor(colours().sidebar))  # a plain title bar: offscreen has none
    painter.setPen(QColor(colours().sidebar_text))
    painter.drawText(title, Qt.AlignmentFlag.AlignCenter, dialog.windowTitle())
    painter.drawPixmap(QPoint(left, top), over)
    painter.setPen(QColor(colours().sidebar))
    painter.drawRect(left - 1, top - TITLE_PX - 1, over.width() + 1, over.height() + TITLE_PX + 1)
    painter.end()
    if not shot.save(str(path)):
        raise GalleryError(f"could not write {path}")
    check_png(path, size)
    print(f"wrote {path}")
    return True


def shoot_dialog(scene: Scene, dialog: QDialog, name: str) -> None:
    """As Camera.shoot does for a page: every size, and the README size into docs/."""
    camera = scene.camera
    for shown in SCHEMES:
        scheme().request(shown)
        if camera.readme is not None:
            camera.readme.mkdir(parents=True, exist_ok=True)
            _save(scene, dialog, README_SIZE, camera.readme / shot_name(name, shown))
        for size in camera.sizes:
            path = camera.out / size_name(size) / shot_name(name, shown)
            path.parent.mkdir(parents=True, exist_ok=True)
            if _save(scene, dialog, size, path):
                camera.shots.append(path)
    scheme().request(Qt.ColorScheme.Light)


def shoot_make_pack(scene: Scene) -> None:
    smol = smol_shaped_folder(scene.home / "models" / "SmolLM2-135M")
    dialog = scene.window.pack_making.open_make_pack()
    form = dialog.form
    form.source_edit.setText(str(smol))
    wait_until(scene.app, form.adjust_button.isVisible, "the block refused")
    shoot_dialog(scene, dialog, "make-pack")
    if os.environ.get(EXPORT_ENV_VAR) is None and ready_export_env(TESTS_EXPORT_ENV):
        os.environ[EXPORT_ENV_VAR] = str(TESTS_EXPORT_ENV)
    if ready_export_env() is None:
        print("make-pack-verified: skipped (no export environment is ready)")
    else:
        llama = scene.home / "models" / "llama-tiny"  # a user's folder, not the checkout's
        shutil.copytree(TINY_LLAMA, llama, dirs_exist_ok=True)
        form.source_edit.setText(str(llama))
        form.out_edit.setText(str(scene.home / "models" / "llama-tiny-MNN"))
        wait_until(scene.app, form.adjust_button.isVisible, "the tiny model's block refused")
        form.adjust_button.click()
        wait_until(scene.app, dialog.start_button.isEnabled, "the checks passed")
        dialog.start()
        # Mid-export: a stage done, the bar determinate, the status naming the next one.
        wait_until(scene.app, lambda: _mid_export(dialog), "the export's first stage")
        shoot_dialog(scene, dialog, "make-pack-exporting")
        wait_until(scene.app, lambda: not dialog.running(), "the export and its check")
        shoot_dialog(scene, dialog, "make-pack-verified")
    dialog.close()


def _mid_export(dialog: MakePackDialog) -> bool:
    return "Exporting, stage" in dialog.status.text() and dialog.bar.value() > 0


def shoot_measure_pack(scene: Scene) -> None:
    dialog = scene.window.pack_making.open_measure(scene.library / "fast-draft")
    wait_until(scene.app, dialog.start_button.isEnabled, "the library's targets")
    dialog.start()
    wait_until(scene.app, lambda: not dialog.running(), "the measuring")
    shoot_dialog(scene, dialog, "measure-pack")
    dialog.close()


def shoot_publish(scene: Scene) -> None:
    os.environ.setdefault("HF_TOKEN", DEFAULT_TOKEN)  # the stand-in's; the dialog names it
    pack = scene.library / "qwen3-draft-noisy"
    write_card_only(pack, CardFacts(license="apache-2.0"), force=True)
    select_in_library(scene, pack)
    dialog = scene.window.pack_making.open_publish()
    dialog.repo_edit.setText("maker/Qwen3-tiny-draft-MNN")
    wait_until(scene.app, dialog.start_button.isEnabled, "the publish plan")
    shoot_dialog(scene, dialog, "publish")
    dialog.close()
