"""Chat mid-reply with the real engine on the fast fixture pair, after a plain reply."""

from __future__ import annotations

from app.ui.base.engine_bridge import READY
from gallery.camera import wait_until
from gallery.stage import Scene


def shoot_chat(scene: Scene) -> None:
    window, library, app = scene.window, scene.library, scene.app
    window.show_page("pair")
    window.pair_page.choose(library / "fast-target", library / "fast-draft")
    window.show_page("chat")
    chat = window.chat_page
    wait_until(app, lambda: chat.bridge.state == READY, "the pair to load")
    chat.input.setPlainText("Plain decoding first, please: tell me about lighthouses.")
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
    chat.input.setPlainText("Now with the draft: tell me more about lighthouses.")
    chat.send()
    # Well inside what fits: the pair's 2,048-token window ends this reply at about
    # 1,600 sampled tokens (one character each on this tiny vocabulary).
    wait_until(app, lambda: len(chat.transcript.messages[-1].answer) >= 1000, "a long reply")
    scene.camera.before_grab = chat.charts.redraw  # the charts at each size, now
    scene.camera.shoot("chat", "generating", readme_name="chat")
    scene.camera.before_grab = None
    chat.stop()
    wait_until(app, lambda: chat.bridge.state == READY, "the reply to stop")
    chat.bridge.shutdown()
