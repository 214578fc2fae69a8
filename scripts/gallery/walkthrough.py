"""What the third newcomer's walk-through (#36) changed, in pictures a person looks at:

- library bare-templates: an MNN 3.1.x export of a Llama-family model with ChatML
  specials (SmolLM2-like, tests/helpers/smollm_3_1.py): its family said as inferred,
  its bare `%s` templates said, the chat format its tokenizer implies offered;
- chat turn-markers: a 3.1.x Qwen pack with bare templates as Chat's target (with a
  3.4.x draft of the same vocabulary), the note with its Use ChatML button;
- make-pack-tokenizer: Make Pack on a folder whose tokenizer.model is a GGUF file (as
  some conversions leave), the checks naming that file.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from PySide6.QtWidgets import QSplitter

from app.core.packmaking.export_checks import ExportSettings
from app.ui.base.engine_bridge import READY
from gallery.camera import wait_until
from gallery.packmaking import TINY_LLAMA, shoot_dialog
from gallery.stage import FIXTURES, Scene, choose_pair, select_in_library
from tests.helpers.smollm_3_1 import make_smollm_3_1

SMOL, BARE, DRAFT = "SmolLM2-135M-3.1", "Qwen3-tiny-3.1-bare", "era-3.4.1"


def _bare_templates(pack: Path) -> Path:
    path = pack / "llm_config.json"
    config = json.loads(path.read_text())
    config.update({f"{role}_prompt_template": "%s" for role in ("system", "user", "assistant")})
    path.write_text(json.dumps(config, indent=4))
    return pack


def shoot_walkthrough(scene: Scene) -> None:
    window, library, app = scene.window, scene.library, scene.app
    smol = make_smollm_3_1(shutil.copytree(FIXTURES / "era-3.1.4", library / SMOL))
    bare = _bare_templates(shutil.copytree(FIXTURES / "era-3.1.4", library / BARE))
    shutil.copytree(FIXTURES / DRAFT, library / DRAFT)
    window.show_page("library")
    window.library_page.refresh()
    select_in_library(scene, smol)
    details = window.library_page.details
    splitter = details.parentWidget()
    assert isinstance(splitter, QSplitter)
    sizes = splitter.sizes()
    splitter.setSizes([120, sum(sizes) - 120])  # the details tall enough for its rows
    app.processEvents()
    scene.camera.shoot("library", "bare-templates")
    splitter.setSizes(sizes)

    choose_pair(scene, bare, library / DRAFT)
    window.show_page("chat")
    chat = window.chat_page
    wait_until(app, lambda: chat.bridge.state == READY and chat.turns.isVisible(), "the note")
    scene.camera.shoot("chat", "turn-markers")
    chat.bridge.shutdown()

    folder = shutil.copytree(TINY_LLAMA, scene.home / "models" / "llama-gguf-tokenizer")
    (folder / "tokenizer.model").write_bytes(b"GGUF\x03\x00\x00\x00" + b"\x00" * 64)
    dialog = window.pack_making.open_make_pack()
    dialog.form.source_edit.setText(str(folder))
    dialog.form.set_settings(ExportSettings(block=64))
    wait_until(app, lambda: "GGUF" in dialog.form.check_label.text(), "the tokenizer check")
    shoot_dialog(scene, dialog, "make-pack-tokenizer")
    dialog.close()
