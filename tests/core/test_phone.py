"""Phones over a real adb server: a fake phone (tests/fake_phone/) on loopback stands
in for the USB cable and the handset, which cannot exist here. Everything above the
wire is real: the adb server, adbutils, our push, the files on the "phone"."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from app.core.infra.errors import PhoneError
from app.core.infra.paths import app_dirs
from app.core.infra.settings import load_settings, save_settings
from app.core.infra.transfer_stats import disk_margin
from app.core.infra.units import format_bytes
from app.core.pack.bundle import read_bundle
from app.core.pack.files import PHONE_MARKER
from app.core.pack.library import Library
from app.core.phone import adb as adb_module
from app.core.phone import remote_fs as fs
from app.core.phone.adb import GUIDANCE, NO_DEVICES, Adb, adb_executable
from app.core.phone.adb_wire import parse_devices
from app.core.phone.desk import PhoneDesk, PhoneFolder, device_hint, recipes_refusal
from app.core.phone.destinations import check_root, pack_path
from app.core.phone.devices import Debouncer, DeviceInfo, DeviceLister
from app.core.phone.local_files import pack_files
from app.core.phone.phone_packs import (
    DIFFERS,
    INCOMPLETE,
    NOT_IN_LIBRARY,
    SAME,
    PhonePack,
    delete_pack,
    list_packs,
)
from app.core.phone.push import CANCELLED, DONE, FAILED, PUSHING, PushJob, PushStatus
from app.core.phone.push_news import PushNews, changed_folder, push_news
from tests.adb_harness import AdbServer, free_port
from tests.fake_phone import FakePhone
from tests.helpers.cli import run_cli

ROOT = "/data/local/tmp/mnn_models"


def _pack(bundle_copy: Callable[..., Path], tmp_path: Path, extra_mb: int = 0) -> Path:
    """A copy of the fast draft pack, optionally with a bigger weight file, plus the
    clutter a real download folder has (the Hub cache, a recipe backup)."""
    pack = bundle_copy("fast-draft", tmp_path / "library" / "fast-draft")
    if extra_mb:
        with (pack / "llm.mnn.weight").open("ab") as handle:
            handle.write(os.urandom(extra_mb * 1024 * 1024))
    (pack / ".cache" / "huggingface").mkdir(parents=True)
    (pack / ".cache" / "huggingface" / "download.lock").write_text("x")
    (pack / "config_cpu.json.bak").write_text("{}")
    return pack


def _phone_copy(phone: FakePhone, name: str = "fast-draft") -> Path:
    return phone.local(f"{ROOT}/{name}")


def _same_files(pack: Path, on_phone: Path) -> None:
    expected = sorted(p.name for p in pack.iterdir() if p.is_file() and not p.name.startswith("."))
    expected.remove("config_cpu.json.bak")
    # Plus DraftDeck's marker, which lists exactly the pack's files.
    assert sorted(p.name for p in on_phone.iterdir()) == sorted([PHONE_MARKER, *expected])
    assert json.loads((on_phone / PHONE_MARKER).read_text())["files"] == expected
    for name in expected:
        assert (on_phone / name).read_bytes() == (pack / name).read_bytes(), name


def _pack_names(on_phone: Path) -> list[str]:
    """The files on the phone other than DraftDeck's marker."""
    return sorted(set(os.listdir(on_phone)) - {PHONE_MARKER})


def _list_in_marker(folder: Path, *names: str) -> None:
    """As if DraftDeck had put `names` there too (an older version of the pack)."""
    record = json.loads((folder / PHONE_MARKER).read_text())
    record["files"] = sorted({*record["files"], *names})
    (folder / PHONE_MARKER).write_text(json.dumps(record))


def _push(phone: FakePhone, pack: Path, **kwargs: object) -> PushJob:
    job = PushJob(Adb(), phone.address, pack, ROOT, **kwargs)  # type: ignore[arg-type]
    job.run()
    return job


# -- parsing what a phone's shell prints ------------------------------------------------


def test_df_parsing_handles_wrapped_lines() -> None:
    wrapped = (
        "Filesystem 1K-blocks Used Available Use% Mounted on\n"
        "/dev/block/bootdevice/by-name/userdata\n"
        "            52975816 30420812 22555004  58% /data\n"
    )
    assert fs.parse_df_available(wrapped, "/data") == 22555004 * 1024
    with pytest.raises(PhoneError, match="free space of /x"):
        fs.parse_df_available("df: /x: No such file or directory", "/x")


def test_ls_parsing_keeps_big_sizes_names_with_spaces_and_links() -> None:
    text = (
        "total 3\n"
        "drwxrwx--x 2 shell shell 4096 2026-11-30 04:50 my pack\n"
        "-rw-rw-rw- 1 shell shell 5368709120 2026-11-30 04:50 llm.mnn.weight\n"
        "lrwxrwxrwx 1 shell shell 7 2026-11-30 04:50 link -> target\n"
    )
    entries = fs.parse_ls_long(text)
    assert [(e.name, e.size, e.is_dir) for e in entries] == [
        ("my pack", 4096, True),
        ("llm.mnn.weight", 5368709120, False),
        ("link", 7, False),
    ]


def test_sha256sum_parsing_and_command_batches() -> None:
    digest = "a" * 64
    assert fs.parse_sha256sum(f"{digest}  /p/x y\nsha256sum: /q: No such file\n") == {
        "/p/x y": digest
    }
    paths = [f"/data/local/tmp/{i:04d}" for i in range(500)]
    batches = list(fs.batches(paths))
    assert len(batches) > 1 and [p for b in batches for p in b] == paths
    assert all(sum(len(p) + 1 for p in b) <= fs.COMMAND_BUDGET for b in batches)


def test_device_list_parsing_keeps_multi_word_states() -> None:
    text = (
        "emulator-5554          device product:sdk model:Pixel_8 device:emu64 transport_id:1\n"
        "0123456789ABCDEF       no permissions (missing udev rules? user is in the plugdev "
        "group); see [http://developer.android.com/tools/device.html] usb:1-1 transport_id:2\n"
        "R58M12345             unauthorized usb:1-2 transport_id:3\n"
    )
    devices = parse_devices(text)
    assert [(d.serial, d.state) for d in devices] == [
        ("emulator-5554", "device"),
        ("0123456789ABCDEF", "no permissions"),
        ("R58M12345", "unauthorized"),
    ]
    assert devices[0].tags["model"] == "Pixel_8" and devices[1].tags["usb"] == "1-1"


def test_destinations_refuse_unusable_folders_and_names() -> None:
    assert check_root(" /sdcard/Download/x/ ") == "/sdcard/Download/x"
    for bad in ("relative/path", "/", "/.."):
        with pytest.raises(PhoneError):
            check_root(bad)
    for name in ("", "..", "a/b", "x.partial"):
        with pytest.raises(PhoneError):
            pack_path(ROOT, name)


def test_debouncer_ignores_flaps_and_reports_lasting_changes() -> None:
    ready = DeviceInfo("A", "device", model="Pixel")
    debounce = Debouncer(settle=1.0)
    assert debounce.update([ready], now=0.0) == [ready]
    # Replugging: offline, gone, back, within the settle time: nothing changes.
    assert debounce.update([DeviceInfo("A", "offline")], now=0.1) == [ready]
    assert debounce.update([], now=0.3) == [ready]
    assert debounce.update([ready], now=0.5) == [ready]
    assert not debounce.settling()
    # A phone that really went away is dropped once the absence lasted.
    assert debounce.update([], now=1.0) == [ready]
    assert debounce.settling()
    assert debounce.update([], now=2.1) == []
    # A new phone appears once it stayed.
    other = DeviceInfo("B", "unauthorized")
    assert debounce.update([other], now=3.0) == []
    assert debounce.update([other], now=4.0) == [other]


def test_the_desk_says_what_a_phone_needs_and_when_recipes_alone_may_go() -> None:
    ready, locked = DeviceInfo("A", "device", model="Pixel"), DeviceInfo("B", "unauthorized")
    assert device_hint([], None) == NO_DEVICES
    assert device_hint([ready, locked], ready) == ""
    assert device_hint([ready, locked], locked) == f"B is unauthorized. {locked.guidance}"
    pack = PhonePack("fast-draft", f"{ROOT}/fast-draft", 10, 3, SAME)
    here = PhoneFolder("A", ROOT, [pack], None)
    assert recipes_refusal(ready, "fast-draft", ROOT, None) == f"Reading {ROOT} on Pixel…"
    other_folder = "/sdcard/Download/DraftDeck"
    assert recipes_refusal(ready, "fast-draft", other_folder, here).startswith("Reading")
    assert recipes_refusal(ready, "fast-draft", ROOT, here) == ""
    assert recipes_refusal(ready, "other", ROOT, here).startswith(
        f"other is not on Pixel in {ROOT}: push the whole pack once"
    )


def test_a_push_says_its_end_and_names_the_folder_it_changed() -> None:
    pack = PushStatus("fast-draft", "A", f"{ROOT}/fast-draft", recipe_only=False)
    recipes = PushStatus("fast-draft", "A", f"{ROOT}/fast-draft", recipe_only=True)
    assert push_news(pack, "Pixel") is None and changed_folder(pack) is None  # queued
    sending = replace(pack, state=PUSHING)
    assert push_news(sending, "Pixel") is None and changed_folder(sending) == ("A", ROOT)
    assert changed_folder(replace(recipes, state=PUSHING)) is None  # no .partial folder
    done = push_news(replace(pack, state=DONE, pushed=("a",), skipped=("b", "c")), "Pixel")
    assert done is not None and not done.problem
    assert done.text == "fast-draft is on Pixel: 1 file pushed, 2 already there, all verified"
    failed = push_news(replace(recipes, state=FAILED, error="cable"), "Pixel")
    assert failed is not None and failed.problem
    assert failed.text == "Push of recipes of fast-draft to Pixel failed: cable"
    stopped = replace(pack, state=CANCELLED, error="Stopped.")
    assert push_news(stopped, "Pixel") == PushNews(
        "Push of fast-draft to Pixel cancelled: Stopped.", False
    )
    assert changed_folder(stopped) == ("A", ROOT)


# -- devices -----------------------------------------------------------------------------


def test_devices_list_details_and_hot_plug(tmp_path: Path, adb_server: AdbServer) -> None:
    lister = DeviceLister(Adb())
    assert lister.list() == []
    with FakePhone(tmp_path / "a", model="Pixel 8", android="15", ram_kb=8 * 1024 * 1024) as a:
        adb_server.connect(a)
        [info] = lister.list()
        assert (info.serial, info.state, info.model, info.android, info.abi) == (
            a.address,
            "device",
            "Pixel 8",
            "15",
            "arm64-v8a",
        )
        assert info.ram_bytes == 8 * 1024**3 and info.guidance == ""
        with FakePhone(tmp_path / "b", model="Galaxy S24", android="14") as b:
            adb_server.connect(b)  # plugged in while the first one is there
            assert sorted(d.model for d in lister.list()) == ["Galaxy S24", "Pixel 8"]
            adb_server.disconnect(b)
        assert [d.model for d in lister.list()] == ["Pixel 8"]


def test_unauthorized_phone_gets_guidance_and_refuses_pushes(
    tmp_path: Path, adb_server: AdbServer, bundle_copy: Callable[..., Path]
) -> None:
    with FakePhone(tmp_path / "phone", authorized=False) as locked:
        adb_server.connect(locked, state="unauthorized")
        [info] = DeviceLister(Adb()).list()
        assert info.state == "unauthorized" and not info.ready
        assert info.guidance == GUIDANCE["unauthorized"] and "USB debugging" in info.guidance
        job = _push(locked, _pack(bundle_copy, tmp_path))
        status = job.status()
        assert status.state == FAILED and status.error_code == "unauthorized"
        assert "accept “Allow USB debugging?”" in status.error


# -- pushing -----------------------------------------------------------------------------


def test_push_copies_a_verified_pack_and_leaves_clutter_behind(
    tmp_path: Path, phone: FakePhone, bundle_copy: Callable[..., Path]
) -> None:
    pack = _pack(bundle_copy, tmp_path)
    status = _push(phone, pack).status()
    assert status.state == DONE, status.error
    on_phone = _phone_copy(phone)
    _same_files(pack, on_phone)
    assert sorted(status.pushed) == sorted(status.verified) == sorted(_pack_names(on_phone))
    assert status.skipped == ()
    assert (
        status.done_bytes
        == status.total_bytes
        == sum((on_phone / n).stat().st_size for n in status.pushed)
    )
    assert not phone.local(f"{ROOT}/fast-draft.partial").exists()
    assert status.dest == f"{ROOT}/fast-draft"


SECRET = b"hf_not_for_the_phone_0123456789"


def _everything_on(phone: FakePhone) -> list[bytes]:
    return [p.read_bytes() for p in phone.root.rglob("*") if p.is_file() and not p.is_symlink()]


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links need privileges there")
def test_a_link_out_of_the_pack_refuses_the_push_and_never_reaches_the_phone(
    tmp_path: Path, phone: FakePhone, bundle_copy: Callable[..., Path]
) -> None:
    pack = _pack(bundle_copy, tmp_path)
    token = tmp_path / "hf-home" / "token"
    token.parent.mkdir()
    token.write_bytes(SECRET)
    (pack / "LICENSE.txt").symlink_to(os.path.relpath(token, pack))
    status = _push(phone, pack).status()
    assert status.state == FAILED
    assert f"LICENSE.txt is a symbolic link to {token}, outside the pack" in status.error
    assert status.pushed == () and not phone.local(f"{ROOT}/fast-draft.partial").exists()
    assert not any(SECRET in content for content in _everything_on(phone))


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links need privileges there")
def test_a_link_to_a_file_of_the_pack_reaches_the_phone_as_that_file(
    tmp_path: Path, phone: FakePhone, bundle_copy: Callable[..., Path]
) -> None:
    pack = _pack(bundle_copy, tmp_path)
    (pack / "LICENSE").write_text("Apache-2.0\n")
    (pack / "LICENSE.txt").symlink_to("LICENSE")
    status = _push(phone, pack).status()
    assert status.state == DONE, status.error
    on_phone = _phone_copy(phone) / "LICENSE.txt"
    assert not on_phone.is_symlink() and on_phone.read_bytes() == b"Apache-2.0\n"


def test_push_again_skips_files_already_verified(
    tmp_path: Path, phone: FakePhone, bundle_copy: Callable[..., Path]
) -> None:
    pack = _pack(bundle_copy, tmp_path)
    assert _push(phone, pack).status().state == DONE
    before = phone.bytes_received
    again = _push(phone, pack).status()
    assert again.state == DONE and again.pushed == () and again.done_bytes == 0
    assert sorted(again.skipped) == sorted(again.verified) == _pack_names(_phone_copy(phone))
    assert phone.bytes_received - before < 20_000  # shell commands only, no file data

    # A changed weight file: only it travels; a file the pack no longer has goes away.
    with (pack / "llm.mnn.weight").open("r+b") as handle:
        handle.seek(-64, os.SEEK_END)
        handle.write(os.urandom(64))
    # (an older version of the pack had old-shard.bin: its marker lists it)
    _phone_copy(phone).joinpath("old-shard.bin").write_bytes(b"stale")
    _list_in_marker(_phone_copy(phone), "old-shard.bin")
    update = _push(phone, pack).status()
    assert update.state == DONE, update.error
    assert update.pushed == ("llm.mnn.weight",)
    _same_files(pack, _phone_copy(phone))


def test_push_refused_when_the_phone_is_full(
    tmp_path: Path, phone: FakePhone, bundle_copy: Callable[..., Path]
) -> None:
    phone.free_bytes = 300_000
    pack = _pack(bundle_copy, tmp_path)
    status = _push(phone, pack).status()
    assert status.state == FAILED and status.error_code == "no_space"
    assert "Not enough space" in status.error and "free" in status.error
    # The amounts are the true ones: the pack's files, the margin, and what df says.
    needed = sum(f.size for f in pack_files(pack))
    assert f"needs {format_bytes(needed)} (plus {format_bytes(disk_margin(needed))}" in (
        status.error
    )
    assert f"and {format_bytes(300_000 // 1024 * 1024)} is free" in status.error
    assert not _phone_copy(phone).exists()
    assert not phone.local(f"{ROOT}/fast-draft.partial").exists()


def test_full_disk_during_a_push_is_reported_not_installed(
    tmp_path: Path,
    phone: FakePhone,
    bundle_copy: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Another app fills the phone between our `df` and the copy: df says there is room,
    # the writes fail.
    monkeypatch.setattr(fs, "free_bytes", lambda _phone, _folder, **_kw: 10**9)
    phone.free_bytes = 300_000
    status = _push(phone, _pack(bundle_copy, tmp_path)).status()
    assert status.state == FAILED and status.error_code == "no_space"
    assert "No space left" in status.error
    assert not _phone_copy(phone).exists()


def test_cable_pulled_mid_push_then_resume(
    tmp_path: Path, adb_server: AdbServer, phone: FakePhone, bundle_copy: Callable[..., Path]
) -> None:
    pack = _pack(bundle_copy, tmp_path, extra_mb=2)
    phone.cut_after_bytes = phone.bytes_received + 1_200_000
    cut = _push(phone, pack).status()
    assert cut.state == FAILED and cut.error_code == "disconnected"
    assert "push again" in cut.error and f"of {cut.files_total} files" in cut.error
    assert not _phone_copy(phone).exists()  # never looks installed
    partial = phone.local(f"{ROOT}/fast-draft.partial")
    assert partial.is_dir()
    verified_before = set(cut.verified)
    assert verified_before  # the small files before the weight made it

    phone.cut_after_bytes = None
    phone.unplugged = False
    adb_server.connect(phone)  # plugged back in
    resumed = _push(phone, pack).status()
    assert resumed.state == DONE, resumed.error
    assert verified_before <= set(resumed.skipped)
    assert set(resumed.pushed) | set(resumed.skipped) == set(resumed.verified)
    assert "llm.mnn.weight" in resumed.pushed
    _same_files(pack, _phone_copy(phone))
    assert not partial.exists()


def test_push_progress_figures_are_true(
    tmp_path: Path, phone: FakePhone, bundle_copy: Callable[..., Path]
) -> None:
    pack = _pack(bundle_copy, tmp_path, extra_mb=4)
    cap = 4_000_000
    phone.throttle_bytes_per_s = cap  # a slow cable with a known speed
    job = PushJob(Adb(), phone.address, pack, ROOT)
    worker = threading.Thread(target=job.run)
    worker.start()
    seen = []
    while worker.is_alive():
        status = job.status()
        if status.state == "pushing" and status.speed:
            seen.append(status)
        time.sleep(0.02)
    worker.join()
    final = job.status()
    assert final.state == DONE and final.fraction == 1.0
    assert final.done_bytes == final.total_bytes == sum(f.size for f in pack_files(pack))
    assert seen, "no progress was seen"
    assert all(a.done_bytes <= b.done_bytes for a, b in itertools.pairwise(seen))
    # Never faster than the cable (a busy machine can only make it slower, so there is
    # no lower bound); speed and time left by hand, on a fake clock: test_job_cells.py.
    speeds = sorted(s.speed for s in seen)
    assert 0 < speeds[len(speeds) // 2] < 1.5 * cap


def test_cancel_keeps_what_is_verified_and_resumes(
    tmp_path: Path, phone: FakePhone, bundle_copy: Callable[..., Path]
) -> None:
    pack = _pack(bundle_copy, tmp_path, extra_mb=2)

    class CancelMidWeight(PushJob):
        def _on_bytes(self, count: int) -> None:
            super()._on_bytes(count)
            if self.status().current_file == "llm.mnn.weight":
                self.cancel()

    job = CancelMidWeight(Adb(), phone.address, pack, ROOT)
    status = job.run()
    assert status.state == CANCELLED and "resumes" in status.error
    assert not _phone_copy(phone).exists()
    partial = phone.local(f"{ROOT}/fast-draft.partial")
    # The copy in flight had a hidden name of its own, never the real one.
    assert not (partial / "llm.mnn.weight").exists()
    # A SEND closed without DONE leaves no half file: the phone deletes it when the close
    # reaches its sync service, which then ends. Waiting for that end (not for a time):
    # the push returns before the adb server has passed the close on.
    phone.settle(timeout=120)  # the timeout only guards against a hang
    assert not phone.services, "a service on the phone is still running"
    assert not list(partial.glob(".llm.mnn.weight.*"))
    resumed = _push(phone, pack).status()
    assert resumed.state == DONE and set(status.verified) <= set(resumed.skipped)
    _same_files(pack, _phone_copy(phone))


def test_recipe_only_push(
    tmp_path: Path, phone: FakePhone, bundle_copy: Callable[..., Path]
) -> None:
    pack = _pack(bundle_copy, tmp_path)
    refused = _push(phone, pack, recipe_only=True).status()
    assert refused.state == FAILED and refused.error_code == "not_on_phone"
    assert "push the whole pack once" in refused.error

    assert _push(phone, pack).status().state == DONE
    recipe = pack / "config_cpu.json"
    data = json.loads(recipe.read_text())
    data["thread_num"] = 2
    recipe.write_text(json.dumps(data, indent=2))
    before = phone.bytes_received
    status = _push(phone, pack, recipe_only=True).status()
    assert status.state == DONE and status.pushed == ("config_cpu.json",)
    assert set(status.skipped) == {"config.json"}
    assert set(status.verified) == {"config.json", "config_cpu.json"}
    assert phone.bytes_received - before < 20_000  # the weights did not travel
    _same_files(pack, _phone_copy(phone))
    assert not any(  # no temporary copy left behind
        p.name.startswith(".") and p.name != PHONE_MARKER for p in _phone_copy(phone).iterdir()
    )


def test_both_draft_recipes_reach_the_phone_in_step(
    tmp_path: Path, phone: FakePhone, bundle_copy: Callable[..., Path]
) -> None:
    """A pack with config_cpu.json and draft_config_cpu.json (the phone app may read
    either): an edit saves both, and a push of the pack or of its recipes sends both."""
    pack = bundle_copy("qwen3-draft-noisy", tmp_path / "library" / "qwen3-draft-noisy")
    twin = pack / "draft_config_cpu.json"
    twin.write_text(json.dumps(json.loads((pack / "config_cpu.json").read_text()), indent=2))
    whole = _push(phone, pack).status()
    assert whole.state == DONE, whole.error
    assert {"config_cpu.json", "draft_config_cpu.json"} <= set(whole.pushed)

    assert run_cli("recipe", "set", str(pack), "thread_num=1").returncode == 0
    status = _push(phone, pack, recipe_only=True).status()
    assert status.state == DONE, status.error
    assert sorted(status.pushed) == ["config_cpu.json", "draft_config_cpu.json"]
    on_phone = _phone_copy(phone, "qwen3-draft-noisy")
    for name in ("config_cpu.json", "draft_config_cpu.json"):
        assert (on_phone / name).read_bytes() == (pack / name).read_bytes()
        assert json.loads((on_phone / name).read_text())["thread_num"] == 1


def test_push_to_a_phone_without_the_shell_protocol(
    tmp_path: Path, adb_server: AdbServer, bundle_copy: Callable[..., Path]
) -> None:
    # No shell_v2 feature: exit codes come from `echo $?` on the v1 shell.
    with FakePhone(tmp_path / "old-phone", android="7.0", shell_v2=False) as old:
        adb_server.connect(old)
        pack = _pack(bundle_copy, tmp_path)
        status = _push(old, pack).status()
        assert status.state == DONE, status.error
        _same_files(pack, _phone_copy(old))
        again = _push(old, pack).status()
        assert again.state == DONE and again.pushed == ()
        assert any(c.startswith("sha256sum") and "DRAFTDECK-EXIT" in c for c in old.commands)
        old.missing_commands.add("sha256sum")  # toybox before Android 8
        refused = _push(old, pack).status()
        assert refused.state == FAILED and refused.error_code == "no_sha256sum"
        assert "Android 8" in refused.error


def test_cancel_does_not_wait_for_a_long_command_on_the_phone(
    tmp_path: Path, phone: FakePhone, bundle_copy: Callable[..., Path]
) -> None:
    pack = _pack(bundle_copy, tmp_path)
    phone.command_delay["sha256sum"] = 60.0  # hashing a huge weight file on the phone
    job = PushJob(Adb(), phone.address, pack, ROOT)
    worker = threading.Thread(target=job.run)
    worker.start()
    deadline = time.monotonic() + 60  # a guard against a hang, not a speed limit
    while not any(c.startswith("sha256sum") for c in phone.commands):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    job.cancel()
    worker.join(timeout=10)
    assert not worker.is_alive(), "cancel waited for the phone's command"
    assert job.status().state == CANCELLED and "resumes" in job.status().error


def test_queued_push_cancelled_before_it_starts_leaves_the_phone_alone(
    tmp_path: Path, phone: FakePhone, bundle_copy: Callable[..., Path]
) -> None:
    pack = _pack(bundle_copy, tmp_path)
    assert _push(phone, pack).status().state == DONE
    (pack / "config.json").write_text((pack / "config.json").read_text() + " ")
    job = PushJob(Adb(), phone.address, pack, ROOT)
    job.cancel()  # still waiting in the queue
    status = job.run()
    assert status.state == CANCELLED
    assert _phone_copy(phone).is_dir()  # the installed pack was not touched
    assert not phone.local(f"{ROOT}/fast-draft.partial").exists()


def test_files_deleted_on_the_phone_during_a_push_are_caught_before_install(
    tmp_path: Path, phone: FakePhone, bundle_copy: Callable[..., Path]
) -> None:
    pack = _pack(bundle_copy, tmp_path, extra_mb=1)
    partial = phone.local(f"{ROOT}/fast-draft.partial")

    class DeleteMidPush(PushJob):
        def _on_bytes(self, count: int) -> None:
            super()._on_bytes(count)
            config = partial / "config.json"
            if self.status().current_file == "llm.mnn.weight" and config.exists():
                config.unlink()  # another app (or a delete) removes a verified file

    status = DeleteMidPush(Adb(), phone.address, pack, ROOT).run()
    assert status.state == FAILED and status.error_code == "verify_failed"
    assert "config.json went missing" in status.error
    assert not _phone_copy(phone).exists()
    resumed = _push(phone, pack).status()
    assert resumed.state == DONE and "config.json" in resumed.pushed
    _same_files(pack, _phone_copy(phone))


def test_a_pack_that_vanishes_locally_fails_the_push_cleanly(
    tmp_path: Path, phone: FakePhone, bundle_copy: Callable[..., Path]
) -> None:
    pack = _pack(bundle_copy, tmp_path)

    class VanishingPack(PushJob):
        def _on_bytes(self, count: int) -> None:
            super()._on_bytes(count)
            shutil.rmtree(pack, ignore_errors=True)

    status = VanishingPack(Adb(), phone.address, pack, ROOT).run()
    assert status.state == FAILED and status.error
    assert not _phone_copy(phone).exists()


def test_phone_packs_listing_matching_and_delete(
    tmp_path: Path, phone: FakePhone, bundle_copy: Callable[..., Path]
) -> None:
    pack = _pack(bundle_copy, tmp_path)
    assert _push(phone, pack).status().state == DONE
    other = bundle_copy("qwen3-draft-noisy", tmp_path / "library" / "noisy")
    assert _push(phone, other).status().state == DONE
    shutil.copytree(_phone_copy(phone, "noisy"), phone.local(f"{ROOT}/stranger"))
    phone.local(f"{ROOT}/half.partial").mkdir()
    phone.local(f"{ROOT}/half.partial/{PHONE_MARKER}").write_text(
        json.dumps({"made_by": "DraftDeck", "pack": "half", "files": []})
    )
    phone.local(f"{ROOT}/not-a-pack").mkdir()
    # Sizes come from `ls -l`, not from sync STAT's 32 bits: a 5 GiB file stays 5 GiB.
    with phone.local(f"{ROOT}/stranger/llm.mnn.weight").open("r+b") as handle:
        handle.truncate(5 * 1024**3)
    recipe = other / "config_cpu.json"
    # The library's copy moved on: a new value (recipes are compared by their keys, so
    # a change of layout alone is no difference).
    recipe.write_text(json.dumps({**json.loads(recipe.read_text()), "thread_num": 3}))

    device = Adb().phone(phone.address)
    library = {"fast-draft": read_bundle(pack), "noisy": read_bundle(other)}
    packs = {p.name: p for p in list_packs(device, ROOT, library)}
    assert {n: p.match for n, p in packs.items()} == {
        "fast-draft": SAME,
        "half.partial": INCOMPLETE,
        "noisy": DIFFERS,
        "stranger": NOT_IN_LIBRARY,
    }
    noisy = packs["noisy"].recipes
    assert noisy is not None
    assert [d.words() for d in noisy.differences] == ["config_cpu.json: thread_num: 2 → 3"]
    assert packs["fast-draft"].size == sum(f.stat().st_size for f in _phone_copy(phone).iterdir())
    assert packs["stranger"].size > 5 * 1024**3

    delete_pack(device, ROOT, "stranger")
    delete_pack(device, ROOT, "half.partial")
    assert sorted(p.name for p in list_packs(device, ROOT, library)) == ["fast-draft", "noisy"]
    assert not phone.local(f"{ROOT}/stranger").exists()
    with pytest.raises(PhoneError):
        delete_pack(device, ROOT, "../..")


# -- the phone desk: the rules the window and the command line share ------------------


@pytest.fixture
def desk() -> Iterator[PhoneDesk]:
    phone_desk = PhoneDesk(Library(load_settings(), save_settings))
    yield phone_desk
    phone_desk.shutdown()


def test_desk_chooses_the_only_phone_or_the_one_named(
    tmp_path: Path, adb_server: AdbServer, desk: PhoneDesk
) -> None:
    with pytest.raises(PhoneError, match="No phone found") as none:
        desk.choose_device(None)
    assert none.value.code == "no_device"
    with FakePhone(tmp_path / "locked", authorized=False) as locked:
        adb_server.connect(locked, state="unauthorized")
        with pytest.raises(PhoneError, match="Allow USB debugging") as refused:
            desk.choose_device(None)
        assert refused.value.code == "unauthorized"
        with FakePhone(tmp_path / "a") as a:
            adb_server.connect(a)
            assert desk.choose_device(None).serial == a.address  # the only ready one
            with pytest.raises(PhoneError, match=f"{locked.address} is unauthorized"):
                desk.choose_device(locked.address)
            with FakePhone(tmp_path / "b") as b:
                adb_server.connect(b)
                with pytest.raises(PhoneError, match="Several phones are attached") as several:
                    desk.choose_device(None)
                assert a.address in several.value.message and b.address in several.value.message
                assert desk.choose_device(b.address).serial == b.address
                with pytest.raises(PhoneError, match=r"No phone 127\.0\.0\.1:1 is attached"):
                    desk.choose_device("127.0.0.1:1")


def test_desk_resolves_a_folder_or_a_library_pack_name(
    tmp_path: Path, desk: PhoneDesk, bundle_copy: Callable[..., Path]
) -> None:
    in_library = bundle_copy("fast-draft", app_dirs().default_library / "fast-draft")
    elsewhere = bundle_copy("fast-draft", tmp_path / "elsewhere" / "fast-draft")
    assert desk.resolve_pack("fast-draft") == in_library
    assert desk.resolve_pack(str(elsewhere)) == elsewhere.resolve()
    with pytest.raises(PhoneError, match="neither a pack folder nor the name"):
        desk.resolve_pack("no-such-pack")
    assert desk.destination(None) == ROOT
    assert desk.destination("/sdcard/Download//DraftDeck/") == "/sdcard/Download/DraftDeck"
    with pytest.raises(PhoneError):
        desk.destination("sdcard")


def test_desk_queues_a_push_once_and_never_deletes_a_pack_being_pushed(
    tmp_path: Path, phone: FakePhone, desk: PhoneDesk, bundle_copy: Callable[..., Path]
) -> None:
    pack = _pack(bundle_copy, tmp_path, extra_mb=2)
    phone.throttle_bytes_per_s = 300_000  # a slow cable: the push takes seconds
    job = desk.push(phone.address, pack, ROOT)
    assert desk.push(phone.address, pack, ROOT) is job  # already queued: the same job
    recipes = desk.push(phone.address, pack, ROOT, recipe_only=True)
    other_folder = desk.push(phone.address, pack, "/sdcard/Download/DraftDeck")
    assert len({id(job), id(recipes), id(other_folder)}) == 3
    assert desk.queue.jobs == [job, recipes, other_folder]

    deadline = time.monotonic() + 60  # a guard against a hang, not a speed limit
    while job.status().done_bytes == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert phone.local(f"{ROOT}/fast-draft.partial").is_dir()
    for name in ("fast-draft.partial", "fast-draft"):
        with pytest.raises(PhoneError, match="being pushed") as refused:
            desk.delete(phone.address, ROOT, name)
        assert refused.value.code == "in_use"
    assert phone.local(f"{ROOT}/fast-draft.partial").is_dir()
    desk.check_delete(phone.address, ROOT, "another-pack")  # other packs: no objection

    for queued in (job, recipes, other_folder):
        queued.cancel()
    for queued in (job, recipes, other_folder):
        desk.queue.wait(queued, timeout=60)
    assert job.status().state == CANCELLED
    phone.throttle_bytes_per_s = None
    again = desk.retry(job)  # resumes
    assert again is job and desk.retry(job) is job  # still running: not queued twice
    desk.queue.wait(job, timeout=60)
    assert job.status().state == DONE
    desk.clear_finished()
    assert desk.queue.jobs == []

    folder = desk.read_folder(phone.address, ROOT)
    assert [p.name for p in folder.packs] == ["fast-draft"] and folder.free is not None
    desk.delete(phone.address, ROOT, "fast-draft")  # nothing pushes it now
    assert not _phone_copy(phone).exists()
    assert desk.read_folder(phone.address, "/sdcard/never-used").free is None


# -- the command line --------------------------------------------------------------------


def test_cli_devices_push_and_phone_packs(
    tmp_path: Path, phone: FakePhone, bundle_copy: Callable[..., Path]
) -> None:
    pack = _pack(bundle_copy, tmp_path)
    devices = run_cli("devices", "--json")
    assert devices.returncode == 0, devices.stderr
    [device] = json.loads(devices.stdout)["devices"]
    assert device["serial"] == phone.address and device["model"] == "Pixel 8"

    pushed = run_cli("push", str(pack), "--json")
    assert pushed.returncode == 0, pushed.stderr
    result = json.loads(pushed.stdout.splitlines()[-1])
    assert result["serial"] == phone.address and result["dest"] == f"{ROOT}/fast-draft"
    assert sorted(result["pushed"]) == sorted(result["verified"])
    assert result["skipped"] == [] and result["bytes"] == sum(f.size for f in pack_files(pack))
    _same_files(pack, _phone_copy(phone))

    again = run_cli("push", str(pack), "--serial", phone.address, "--recipe-only", "--json")
    assert json.loads(again.stdout)["pushed"] == []

    other = run_cli("push", str(pack), "--dest", "/sdcard/Download/DraftDeck")
    assert other.returncode == 0 and "verified" in other.stdout
    assert phone.local("/sdcard/Download/DraftDeck/fast-draft/config.json").is_file()

    listing = run_cli("phone-packs", "--json")
    assert listing.returncode == 0, listing.stderr
    [entry] = json.loads(listing.stdout)["packs"]
    assert entry["name"] == "fast-draft" and entry["match"] == NOT_IN_LIBRARY

    missing = run_cli("push", str(pack), "--serial", "127.0.0.1:1")
    assert missing.returncode == 1 and "No phone 127.0.0.1:1" in missing.stderr


def test_cli_pushes_a_library_pack_by_name_and_asks_which_phone(
    tmp_path: Path, adb_server: AdbServer, phone: FakePhone, bundle_copy: Callable[..., Path]
) -> None:
    bundle_copy("fast-draft", app_dirs().default_library / "fast-draft")
    pushed = run_cli("push", "fast-draft", "--json")
    assert pushed.returncode == 0, pushed.stderr
    assert json.loads(pushed.stdout)["dest"] == f"{ROOT}/fast-draft"
    unknown = run_cli("push", "no-such-pack")
    assert unknown.returncode == 1 and "neither a pack folder nor the name" in unknown.stderr
    with FakePhone(tmp_path / "second") as second:
        adb_server.connect(second)
        several = run_cli("push", "fast-draft")
        assert several.returncode == 1
        assert "Several phones are attached" in several.stderr and "--serial" in several.stderr
        listing = run_cli("phone-packs", "--serial", second.address, "--json")
        assert listing.returncode == 0 and json.loads(listing.stdout)["packs"] == []


def test_cli_explains_when_no_phone_is_attached(adb_server: AdbServer, tmp_path: Path) -> None:
    out = run_cli("devices")
    assert out.returncode == 0 and "USB debugging" in out.stdout
    push = run_cli("push", str(tmp_path))  # a folder: a name is checked before the phone
    assert push.returncode == 1 and "No phone found" in push.stderr


def test_adb_is_found_without_a_shell_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A double-clicked app gets no shell PATH: the SDK's adb, else the bundled one.
    for name in ("ADBUTILS_ADB_PATH", "ANDROID_HOME", "ANDROID_SDK_ROOT", "LOCALAPPDATA"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(adb_module, "HOMEBREW_PREFIXES", ())  # this host's own adb aside
    bundled = adb_executable()
    assert bundled is not None and bundled.endswith(os.path.join("binaries", "adb"))
    sdk_adb = tmp_path / "sdk" / "platform-tools" / "adb"
    sdk_adb.parent.mkdir(parents=True)
    sdk_adb.write_text("#!/bin/sh\n")
    sdk_adb.chmod(0o755)
    monkeypatch.setenv("ANDROID_HOME", str(tmp_path / "sdk"))
    assert adb_executable() == str(sdk_adb)
    monkeypatch.setenv("ADBUTILS_ADB_PATH", bundled)
    assert adb_executable() == bundled


def test_no_adb_anywhere_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # A machine without any adb cannot exist here (one ships with adbutils): pretend.
    monkeypatch.setattr(adb_module, "adb_executable", lambda: None)
    with pytest.raises(PhoneError, match="adb was not found") as caught:
        Adb(port=free_port()).devices()
    assert caught.value.code == "no_adb"


# -- integrity: folders that are not ours, bad names, corruption, stale attempts --------


def test_push_never_touches_a_folder_it_did_not_make(
    tmp_path: Path, phone: FakePhone, bundle_copy: Callable[..., Path]
) -> None:
    music = phone.local("/sdcard/Music")
    music.mkdir(parents=True)
    (music / "song1.mp3").write_bytes(b"la la la")
    pack = bundle_copy("fast-draft", tmp_path / "library" / "Music")
    job = PushJob(Adb(), phone.address, pack, "/sdcard")
    status = job.run()
    assert status.state == FAILED and status.error_code == "not_ours"
    assert "/sdcard/Music" in status.error and "not made by DraftDeck" in status.error
    assert (music / "song1.mp3").read_bytes() == b"la la la"
    assert sorted(os.listdir(music)) == ["song1.mp3"]
    assert not phone.local("/sdcard/Music.partial").exists()
    device = Adb().phone(phone.address)
    with pytest.raises(PhoneError, match="not made by DraftDeck") as refused:
        delete_pack(device, "/sdcard", "Music")
    assert refused.value.code == "not_ours" and (music / "song1.mp3").exists()
    # A folder with a pack in it that DraftDeck did not put there: refused as well.
    stranger = phone.local(f"{ROOT}/fast-draft")
    shutil.copytree(pack, stranger)
    (stranger / "config.json").write_text("{}")
    refused_too = _push(phone, _pack(bundle_copy, tmp_path)).status()
    assert refused_too.state == FAILED and refused_too.error_code == "not_ours"
    assert (stranger / "config.json").read_text() == "{}"
    recipes = _push(phone, _pack(bundle_copy, tmp_path / "r"), recipe_only=True).status()
    assert recipes.state == FAILED and recipes.error_code == "not_ours"


def test_files_the_user_put_into_a_pushed_pack_stay(
    tmp_path: Path, phone: FakePhone, bundle_copy: Callable[..., Path]
) -> None:
    pack = _pack(bundle_copy, tmp_path)
    assert _push(phone, pack).status().state == DONE
    notes = _phone_copy(phone) / "my-notes.txt"
    notes.write_text("mine")
    # A stale attempt next to the installed pack: both folders are merged.
    stale = phone.local(f"{ROOT}/fast-draft.partial")
    shutil.copytree(_phone_copy(phone), stale, ignore=shutil.ignore_patterns("my-notes.txt"))
    (stale / "config.json").write_text("wrong")
    with (pack / "llm.mnn.weight").open("ab") as handle:
        handle.write(b"a new version")
    status = _push(phone, pack).status()
    assert status.state == DONE, status.error
    # The wrong config.json in the stale attempt gave way to the verified one installed.
    assert status.pushed == ("llm.mnn.weight",)
    assert notes.read_text() == "mine"
    notes.unlink()
    _same_files(pack, _phone_copy(phone))
    assert not stale.exists()


def test_packs_pushed_before_the_marker_are_adopted_only_when_identical(
    tmp_path: Path, phone: FakePhone, bundle_copy: Callable[..., Path]
) -> None:
    pack = _pack(bundle_copy, tmp_path)
    assert _push(phone, pack).status().state == DONE
    marker = _phone_copy(phone) / PHONE_MARKER
    marker.unlink()  # as an older DraftDeck left it
    again = _push(phone, pack).status()
    assert again.state == DONE and again.pushed == ()
    _same_files(pack, _phone_copy(phone))  # recognised by sha256, and marked now

    marker.unlink()
    with (pack / "llm.mnn.weight").open("ab") as handle:
        handle.write(b"changed since")
    refused = _push(phone, pack).status()
    assert refused.state == FAILED and refused.error_code == "not_ours"
    assert "delete it on the phone by hand" in refused.error
    assert not marker.exists() and not phone.local(f"{ROOT}/fast-draft.partial").exists()
    with pytest.raises(PhoneError, match="by hand"):
        delete_pack(Adb().phone(phone.address), ROOT, "fast-draft")


def test_destinations_refuse_the_phone_root_empty_and_control_characters(
    desk: PhoneDesk,
) -> None:
    assert check_root("//sdcard//Download/") == "/sdcard/Download"
    for bad in ("//", "///", "//..", "", " ", "/sdcard/a\nb", "/sdcard/\x1b"):
        with pytest.raises(PhoneError) as refused:
            check_root(bad)
        assert refused.value.code == "bad_dest"
    with pytest.raises(PhoneError):
        desk.destination("")
    for name in ("a\nb", "tab\there", "bell\x07"):
        with pytest.raises(PhoneError, match="not a usable pack folder name"):
            pack_path(ROOT, name)


def test_cli_refuses_the_phone_root_and_bad_pack_names_before_touching_the_phone(
    tmp_path: Path, phone: FakePhone, bundle_copy: Callable[..., Path]
) -> None:
    before = sorted(str(p) for p in phone.root.rglob("*"))
    pack = _pack(bundle_copy, tmp_path)
    rooted = run_cli("push", str(pack), "--dest", "//")
    assert rooted.returncode == 1 and "cannot hold packs" in rooted.stderr
    newline = bundle_copy("fast-draft", tmp_path / "library" / "bad\nname")
    named = run_cli("push", str(newline))
    assert named.returncode == 1 and "not a usable pack folder name" in named.stderr
    assert sorted(str(p) for p in phone.root.rglob("*")) == before


def test_corruption_in_transit_is_caught_and_never_installed(
    tmp_path: Path, phone: FakePhone, bundle_copy: Callable[..., Path]
) -> None:
    pack = _pack(bundle_copy, tmp_path)
    phone.corrupt_files.append("llm.mnn.weight")
    bad = _push(phone, pack).status()
    assert bad.state == FAILED and bad.error_code == "verify_failed"
    assert "llm.mnn.weight did not arrive intact" in bad.error
    assert "llm.mnn.weight" not in bad.verified
    assert not _phone_copy(phone).exists()
    partial = phone.local(f"{ROOT}/fast-draft.partial")
    assert not [p for p in partial.iterdir() if "llm.mnn.weight" in p.name]
    good = _push(phone, pack).status()
    assert good.state == DONE and "llm.mnn.weight" in good.pushed
    assert set(good.pushed) == {f.rel for f in pack_files(pack)} - set(bad.verified)
    _same_files(pack, _phone_copy(phone))

    # A recipe corrupted on its way is never renamed over the good one.
    recipe = pack / "config_cpu.json"
    recipe.write_text(recipe.read_text() + "\n")
    old = (_phone_copy(phone) / "config_cpu.json").read_bytes()
    phone.corrupt_files.append("config_cpu.json")
    bad_recipe = _push(phone, pack, recipe_only=True).status()
    assert bad_recipe.state == FAILED and bad_recipe.error_code == "verify_failed"
    assert (_phone_copy(phone) / "config_cpu.json").read_bytes() == old
    assert not [p for p in _phone_copy(phone).iterdir() if p.name.endswith(".draftdeck-partial")]


def test_a_stale_partial_with_wrong_and_extra_files_is_merged(
    tmp_path: Path, adb_server: AdbServer, phone: FakePhone, bundle_copy: Callable[..., Path]
) -> None:
    pack = _pack(bundle_copy, tmp_path, extra_mb=2)
    (pack / "old-shard.bin").write_bytes(b"an older version's file")
    phone.cut_after_bytes = phone.bytes_received + 1_200_000
    assert _push(phone, pack).status().state == FAILED
    phone.cut_after_bytes, phone.unplugged = None, False
    adb_server.connect(phone)
    partial = phone.local(f"{ROOT}/fast-draft.partial")
    assert partial.is_dir() and (partial / PHONE_MARKER).is_file()
    # The pack moved on (old-shard.bin dropped); the stale attempt has a wrong file, an
    # extra one of ours and a temporary copy cut short.
    (pack / "old-shard.bin").unlink()
    (partial / "old-shard.bin").write_bytes(b"an older version's file")
    _list_in_marker(partial, "old-shard.bin")
    config = partial / "config.json"
    config.write_bytes(bytes(len((pack / "config.json").read_bytes())))
    (partial / ".llm.mnn.weight.0123abcd.draftdeck-partial").write_bytes(b"cut")
    resumed = _push(phone, pack).status()
    assert resumed.state == DONE, resumed.error
    assert "config.json" in resumed.pushed
    _same_files(pack, _phone_copy(phone))  # no extra file carried into the pack
    assert not partial.exists()


def test_a_pack_named_like_a_users_folder_in_another_case_is_refused(
    tmp_path: Path, phone: FakePhone, bundle_copy: Callable[..., Path]
) -> None:
    # /sdcard is case-insensitive on a phone: a pack "music" would land in "Music".
    assert phone.case_insensitive_storage
    music = phone.local("/sdcard/Music")
    music.mkdir(parents=True)
    (music / "song1.mp3").write_bytes(b"la la la")
    pack = bundle_copy("fast-draft", tmp_path / "library" / "music")
    status = PushJob(Adb(), phone.address, pack, "/sdcard").run()
    assert status.state == FAILED and status.error_code == "not_ours", status.error
    assert sorted(os.listdir(music)) == ["song1.mp3"]
    assert (music / "song1.mp3").read_bytes() == b"la la la"
    assert sorted(os.listdir(phone.local("/sdcard"))) == ["Download", "Music"]


def _wait_server(port: int, running: bool, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while adb_module.server_running(port) != running and time.monotonic() < deadline:
        time.sleep(0.05)
    return adb_module.server_running(port) == running


def test_an_adb_server_draftdeck_started_stops_on_quit_and_no_other(
    tmp_path: Path, adb_server: AdbServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Isolated like the tests' own server: its own keys, no mDNS, no USB.
    monkeypatch.setenv("ANDROID_USER_HOME", str(tmp_path / "adb-home"))
    for name in ("ADB_MDNS", "ADB_MDNS_AUTO_CONNECT", "ADB_LIBUSB"):
        monkeypatch.setenv(name, "0")
    port = free_port()
    ours = PhoneDesk(Library(load_settings(), save_settings), Adb(port))
    try:
        assert ours.devices() == [] and ours.adb.started_server
        ours.shutdown(stop_adb=False)  # the command line: the server stays for the next one
        assert adb_module.server_running(port)
        ours.shutdown(stop_adb=True)  # the window quitting
        assert _wait_server(port, running=False)
        with pytest.raises(PhoneError, match="closing"):
            ours.devices()  # a late device poll starts no server again
        assert not adb_module.server_running(port)
    finally:
        if adb_module.server_running(port):  # the test failed: leave nothing behind
            subprocess.run([adb_executable() or "adb", "-P", str(port), "kill-server"], check=False)
    # A server that was running already (the tests' one, like a user's) is never stopped.
    theirs = PhoneDesk(Library(load_settings(), save_settings), Adb(adb_server.port))
    assert theirs.devices() == [] and not theirs.adb.started_server
    theirs.shutdown(stop_adb=True)
    assert adb_server.process.poll() is None and adb_module.server_running(adb_server.port)
