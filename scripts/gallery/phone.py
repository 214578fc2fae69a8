"""Phone: one phone with a pack on it and a push under way, one phone locked."""

from __future__ import annotations

from gallery.camera import wait_until
from gallery.stage import Scene
from tests.fake_phone import FakePhone


def shoot_phone(scene: Scene) -> None:
    app, library, page = scene.app, scene.library, scene.window.phone_page
    phone = FakePhone(scene.home / "phone-a", model="Pixel 8 Pro", android="15", ram_kb=12_000_000)
    locked = FakePhone(scene.home / "phone-b", model="Galaxy S24", authorized=False)
    try:
        scene.adb.connect(phone)
        scene.adb.connect(locked, state="unauthorized")
        scene.window.show_page("phone")
        wait_until(
            app,
            lambda: page.device_list.count() >= 2 and page.pack_list.count() >= 5,
            "both phones and the library's packs",
        )
        for row in range(page.device_list.count()):
            if "Pixel" in page.device_list.item(row).text():
                page.device_list.setCurrentRow(row)
        first = page.start_push(phone.address, library / "fast-draft", recipe_only=False)
        wait_until(app, first.is_finished, "the first push")
        page.refresh_queue()
        phone.throttle_bytes_per_s = 25_000  # about 14 s for this pack: caught part-way
        second = page.start_push(phone.address, library / "qwen3-draft-noisy", False)

        def a_third_pushed() -> bool:
            page.refresh_queue()
            return second.status().fraction >= 0.35

        wait_until(app, a_third_pushed, "35 % pushed")
        page.refresh_phone()
        # The finished pack and the .partial folder of the one under way.
        wait_until(app, lambda: page.packs_model.rowCount() >= 2, "the phone's packs")
        page.pack_list.setCurrentRow(1)
        scene.camera.shoot("phone", "pushing", readme_name="phone")
        if second.is_finished():
            scene.camera.problems.append("phone-pushing: the push ended before the shot")
        phone.throttle_bytes_per_s = None
        page.shutdown()
        page.desk.shutdown(timeout=2.0, stop_adb=True)  # as the window's close does
    finally:
        phone.close()
        locked.close()
