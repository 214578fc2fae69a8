"""Downloads mid-download from the local Hub stand-in, one pack already installed."""

from __future__ import annotations

from gallery.camera import wait_until
from gallery.stage import FIXTURES, Scene

SLOW_REPO = "darkmaniac7/Qwen3-0.6B-kl-baseline-20k-MNN"
QUICK_REPO = "taobao-mnn/Qwen3-8B-MNN"


def shoot_downloads(scene: Scene) -> None:
    hub, app = scene.hub, scene.app
    hub.add_folder(SLOW_REPO, FIXTURES / "qwen3-draft-noisy")
    hub.add_folder(QUICK_REPO, FIXTURES / "fast-target")
    page = scene.window.downloads_page
    scene.window.show_page("downloads")
    page.start_download(QUICK_REPO)
    page.select_repo(SLOW_REPO)
    wait_until(
        app,
        lambda: not page.downloads.queue.running(QUICK_REPO) and page.files_model.rowCount() > 0,
        "the first download and the file plan",
    )
    hub.throttle_bytes_per_s = 120_000  # slow enough to be caught part-way
    page.start_download(SLOW_REPO)
    # The page watches its queue: processing events is enough, no polling.
    wait_until(app, lambda: page.queue_model.status(1).fraction >= 0.4, "40 % downloaded")
    scene.camera.shoot("downloads", "downloading", readme_name="downloads")
    hub.throttle_bytes_per_s = None
    page.downloads.shutdown(timeout=2.0)
