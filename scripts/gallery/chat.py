"""Chat mid-reply with the real engine, after a plain reply: on the real trained pair
(SmolLM2-135M-Instruct exported by DraftDeck, scripts/real_pair.py) so the chat reads
like a chat; without it, on the fast fixture pair (random weights: gibberish), said."""

from __future__ import annotations

import shutil
from pathlib import Path

from real_pair import ROOT, ready_pair

from app.ui.base.engine_bridge import READY
from gallery.camera import wait_until
from gallery.stage import Scene, choose_pair

REAL_PAIR = ROOT / ".cache" / "real-pair"


def _pair(scene: Scene) -> tuple[Path, Path, int]:
    """Target, draft, and the characters of the second reply to wait for."""
    real = ready_pair(REAL_PAIR)
    if real is None:
        print("chat: the fixture pair (random weights); `python scripts/real_pair.py` first")
        return scene.library / "fast-target", scene.library / "fast-draft", 1000
    packs = [shutil.copytree(real[role], scene.library / real[role].name) for role in real]
    scene.window.library_page.refresh()
    return packs[0], packs[1], 300


def shoot_chat(scene: Scene) -> None:
    window, app = scene.window, scene.app
    target, draft, chars = _pair(scene)
    choose_pair(scene, target, draft)
    window.show_page("chat")
    chat = window.chat_page
    wait_until(app, lambda: chat.bridge.state == READY, "the pair to load")
    chat.input.setPlainText("What makes a lighthouse visible so far out at sea?")
    chat.mode.setCurrentIndex(1)
    chat.max_tokens.setValue(400)
    chat.send()
    wait_until(
        app,
        lambda: chat.bridge.state == READY and chat.transcript.messages[-1].stats is not None,
        "the plain reply",
    )
    chat.mode.setCurrentIndex(0)
    chat.max_tokens.setValue(20000)
    chat.input.setPlainText("Now with the draft: give me three tips for a first visit.")
    chat.send()
    # Mid-reply (or its end, for a short one): the random-weight pair's 2,048-token
    # window ends its reply at about 1,600 tokens, one character each.
    wait_until(
        app,
        lambda: (
            len(chat.transcript.messages[-1].answer) >= chars
            or chat.transcript.messages[-1].stats is not None
        ),
        "a long reply",
    )
    scene.camera.before_grab = chat.charts.redraw  # the charts at each size, now
    scene.camera.shoot("chat", "generating", readme_name="chat")
    scene.camera.before_grab = None
    chat.stop()
    wait_until(app, lambda: chat.bridge.state == READY, "the reply to stop")
