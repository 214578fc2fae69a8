"""Make the README screenshots offscreen: `make screenshots`.

Builds a throwaway DraftDeck home whose library holds the committed fixture bundles
(plus one deliberately broken copy, to show how problems are reported), opens the
main window at a fixed size and saves PNGs into docs/.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "bundles"
DOCS = ROOT / "docs"


def main() -> int:
    home = Path(tempfile.mkdtemp(prefix="draftdeck-shots-"))
    os.environ["DRAFTDECK_HOME"] = str(home)
    from PySide6.QtWidgets import QApplication

    from app.core.infra.resources import read_text
    from app.ui.application import create_main_window

    library = home / "data" / "packs"
    for name in ("qwen3-target", "qwen3-draft-noisy", "qwen35-draft", "fast-target", "fast-draft"):
        shutil.copytree(FIXTURES / name, library / name)
    # A desktop recipe for the fast pair: one thread each (two cores here), lossless.
    for name, recipe in (("fast-target", "config.json"), ("fast-draft", "config_cpu.json")):
        path = library / name / recipe
        data = json.loads(path.read_text())
        data.update({"thread_num": 1, "memory": "normal"})
        path.write_text(json.dumps(data, indent=4))
    broken = library / "half-copied-pack"
    shutil.copytree(FIXTURES / "qwen3-draft-independent", broken)
    (broken / "llm.mnn.weight").write_bytes(b"")

    # The Phone page talks to a real adb server (isolated port) and fake phones, as the
    # tests do: started before the window so the page finds the server.
    sys.path.insert(0, str(ROOT))
    from tests.adb_harness import AdbServer
    from tests.fake_phone import FakePhone

    adb_server = AdbServer(home / "adb")
    os.environ["ANDROID_ADB_SERVER_PORT"] = str(adb_server.port)

    app = QApplication(sys.argv)
    app.setStyleSheet(read_text("style.qss"))
    window = create_main_window()
    window.resize(1280, 780)
    window.show()
    page = window.library_page
    page.select_path(library / "qwen3-draft-noisy")
    app.processEvents()
    DOCS.mkdir(exist_ok=True)
    out = DOCS / "library.png"
    window.grab().save(str(out))
    print(f"wrote {out}")

    window.show_page("pair")
    window.pair_page.choose(library / "qwen3-target", library / "qwen35-draft")
    app.processEvents()
    out = DOCS / "pair-blocked.png"
    window.grab().save(str(out))
    print(f"wrote {out}")
    window.pair_page.choose(library / "fast-target", library / "qwen3-draft-noisy")
    app.processEvents()
    out = DOCS / "pair.png"
    window.grab().save(str(out))
    print(f"wrote {out}")

    window.pair_page.choose(library / "qwen3-target", library / "qwen3-draft-noisy")
    window.show_page("recipes")
    editor = window.recipes_page.draft_editor
    # An unsaved edit, made the way a user would.
    editor.editors["memory"].widget.setCurrentText("normal")  # type: ignore[attr-defined]
    editor.editors["thread_num"].widget.setValue(8)  # type: ignore[attr-defined]
    editor.views.setCurrentIndex(1)  # the diff against the pack original
    app.processEvents()
    out = DOCS / "recipes.png"
    window.grab().save(str(out))
    print(f"wrote {out}")

    # The Downloads page against the local Hub stand-in the tests use (no network).
    sys.path.insert(0, str(ROOT))
    from tests.hub_server import FakeHub

    with FakeHub() as hub:
        os.environ["HF_ENDPOINT"] = hub.endpoint
        repo = "darkmaniac7/Qwen3-0.6B-kl-baseline-20k-MNN"
        hub.add_folder(repo, FIXTURES / "qwen3-draft-noisy")
        hub.add_folder("taobao-mnn/Qwen3-8B-MNN", FIXTURES / "fast-target")
        downloads = window.downloads_page
        window.show_page("downloads")
        downloads.start_download("taobao-mnn/Qwen3-8B-MNN")
        downloads.select_repo(repo)
        while downloads.downloads.queue.running("taobao-mnn/Qwen3-8B-MNN") or "LFS" not in (
            downloads.details.toPlainText()
        ):
            app.processEvents()
        hub.throttle_bytes_per_s = 120_000
        downloads.start_download(repo)
        while downloads.queue_model.status(1).fraction < 0.4:
            app.processEvents()  # the page watches its queue: no polling
        out = DOCS / "downloads.png"
        window.grab().save(str(out))
        print(f"wrote {out}")
        downloads.shutdown()

    # The Chat page mid-generation, with the real engine on the fixture pair.
    window.show_page("pair")
    window.pair_page.choose(library / "fast-target", library / "fast-draft")
    window.show_page("chat")
    chat = window.chat_page
    while chat.bridge.state != "ready":
        app.processEvents()
    chat.max_tokens.setValue(20000)
    chat.input.setPlainText("Plain decoding first, please: tell me about lighthouses.")
    chat.mode.setCurrentIndex(1)
    chat.max_tokens.setValue(400)
    chat.send()
    while chat.bridge.state != "ready" or chat.transcript.messages[-1].stats is None:
        app.processEvents()
    chat.mode.setCurrentIndex(0)
    chat.max_tokens.setValue(20000)
    chat.input.setPlainText("Now with the draft: tell me more about lighthouses.")
    chat.send()
    while len(chat.transcript.messages[-1].answer) < 2500:
        app.processEvents()
    chat.charts.redraw()
    app.processEvents()
    out = DOCS / "chat.png"
    window.grab().save(str(out))
    print(f"wrote {out}")
    chat.stop()
    while chat.bridge.state != "ready":
        app.processEvents()
    chat.shutdown()

    # The Tune page after a quick sweep of the fast pair.
    window.show_page("tune")
    tune = window.tune_page
    tune.form.tokens.setValue(64)
    tune.start()
    while not tune.start_button.isEnabled():
        app.processEvents()
    out = DOCS / "tune.png"
    window.grab().save(str(out))
    print(f"wrote {out}")

    # The Phone page: one phone with a pack on it and a push under way, one locked.
    phone = FakePhone(home / "phone-a", model="Pixel 8 Pro", android="15", ram_kb=12_000_000)
    locked = FakePhone(home / "phone-b", model="Galaxy S24", authorized=False)
    adb_server.connect(phone)
    adb_server.connect(locked, state="unauthorized")
    window.show_page("phone")
    phone_page = window.phone_page
    while phone_page.device_list.count() < 2 or phone_page.pack_list.count() < 5:
        app.processEvents()
    for row in range(phone_page.device_list.count()):
        if "Pixel" in phone_page.device_list.item(row).text():
            phone_page.device_list.setCurrentRow(row)
    first = phone_page.start_push(phone.address, library / "fast-draft", recipe_only=False)
    while not first.is_finished():
        app.processEvents()
    phone_page.refresh_queue()
    phone.throttle_bytes_per_s = 400_000
    second = phone_page.start_push(phone.address, library / "qwen3-draft-noisy", False)
    while second.status().fraction < 0.35:
        app.processEvents()
        phone_page.refresh_queue()
    phone_page.refresh_phone()
    while phone_page.packs_model.rowCount() < 2:  # the finished pack and the .partial
        app.processEvents()
    phone_page.pack_list.setCurrentRow(1)
    out = DOCS / "phone.png"
    window.grab().save(str(out))
    print(f"wrote {out}")
    phone.throttle_bytes_per_s = None
    phone_page.shutdown()
    phone.close()
    locked.close()
    adb_server.close()

    window._closing_anyway = True
    window.close()
    shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
