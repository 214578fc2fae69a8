"""Tune mid-sweep and after a short sweep of the fast pair."""

from __future__ import annotations

from gallery.camera import wait_until
from gallery.stage import Scene


def shoot_tune(scene: Scene) -> None:
    app = scene.app
    scene.window.show_page("tune")
    tune = scene.window.tune_page
    tune.form.tokens.setValue(64)
    tune.form.budget.setValue(5)  # seconds a setting: a quick sweep, not a precise one
    tune.start()
    # Mid-sweep: a first result shown while the page still offers Cancel.
    wait_until(
        app,
        lambda: tune.model.row_total() >= 1 or tune.start_button.isEnabled(),
        "a first tuning result",
    )
    if tune.start_button.isEnabled():
        scene.camera.problems.append("tune-sweeping: the sweep ended before a first result")
    else:
        scene.camera.shoot("tune", "sweeping")
    wait_until(app, tune.start_button.isEnabled, "the sweep to end")
    scene.camera.shoot("tune", "done", readme_name="tune")
