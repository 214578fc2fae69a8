"""A pair pushed is a pair on the phone: the target's config.json there names its draft
(draft_config_path), the phone's RAM is checked first, and the phone-side check shows
the recipes. Real adb server, fake phone (tests/fake_phone/), real pack files."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core.infra.paths import app_dirs
from app.core.infra.settings import load_settings, save_settings
from app.core.infra.units import format_bytes
from app.core.measure.ram_estimate import ModelMemory, estimate_model
from app.core.pack.bundle import read_bundle
from app.core.pack.files import PHONE_MARKER
from app.core.pack.library import Library
from app.core.phone.adb import Adb
from app.core.phone.desk import PhoneDesk
from app.core.phone.pair_link import DRAFT_LINK, phone_config
from app.core.phone.phone_memory import (
    FITS,
    TIGHT,
    TOO_BIG,
    ModelNeed,
    model_need,
    phone_fit,
)
from app.core.phone.phone_packs import DIFFERS, SAME, list_packs
from app.core.phone.push import DONE, FAILED, PushJob, PushStatus
from app.core.recipe.desktop_settings import THIS_COMPUTER_FILE
from tests.fake_phone import FakePhone
from tests.helpers.cli import run_cli

ROOT = "/data/local/tmp/mnn_models"
LINK = f"{ROOT}/fast-draft/config_cpu.json"
Copy = Callable[..., Path]


def _pair(bundle_copy: Copy, library: Path) -> tuple[Path, Path]:
    """A target whose recipe drafts, and a draft, in the folder `library`."""
    target = bundle_copy("fast-target", library / "fast-target")
    config = target / "config.json"
    config.write_text(
        json.dumps({**json.loads(config.read_text()), "speculative_type": "draftmodel"}, indent=2)
    )
    draft = bundle_copy("fast-draft", library / "fast-draft")
    return target, draft


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _phone_json(phone: FakePhone, path: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(phone.local(path).read_text())
    return data


def _set_ram(phone: FakePhone, ram_bytes: int) -> None:
    phone.local("/proc/meminfo").write_text(f"MemTotal:       {ram_bytes // 1024} kB\n")


@pytest.fixture
def desk(phone: FakePhone) -> Iterator[PhoneDesk]:
    made = PhoneDesk(Library(load_settings(), save_settings), Adb(), estimate_model)
    made.devices()  # as the window and the commands do: phones are named by their model
    yield made
    made.shutdown(timeout=10.0)


def _finish(desk: PhoneDesk, *jobs: PushJob) -> list[PushStatus]:
    for job in jobs:
        desk.queue.wait(job, 60.0)
    return [job.status() for job in jobs]


def test_a_pair_pushed_together_is_linked_on_the_phone_and_the_library_is_untouched(
    tmp_path: Path, phone: FakePhone, desk: PhoneDesk, bundle_copy: Copy
) -> None:
    target, draft = _pair(bundle_copy, tmp_path / "library")
    library_before = {target: _files(target), draft: _files(draft)}
    drafted, linked = _finish(desk, *desk.push_pair(phone.address, target, draft, ROOT))
    assert (drafted.state, linked.state) == (DONE, DONE)

    # The phone's copy names the draft's recipe where it lies on the phone; every other
    # key, and the file's layout, are the library's.
    on_phone = phone.local(f"{ROOT}/fast-target/config.json").read_bytes()
    library_config = json.loads((target / "config.json").read_text())
    assert json.loads(on_phone) == {**library_config, DRAFT_LINK: LINK}
    assert on_phone == phone_config(target, LINK) and on_phone.startswith(b'{\n  "')
    assert phone.local(LINK).read_bytes() == (draft / "config_cpu.json").read_bytes()
    assert (linked.link, linked.link_ok) == (LINK, True)
    assert "config.json" in linked.verified and drafted.link == ""
    # The library's packs are byte for byte what they were.
    assert {target: _files(target), draft: _files(draft)} == library_before
    marker = _phone_json(phone, f"{ROOT}/fast-target/{PHONE_MARKER}")
    assert "config.json" in marker["files"]
    # The memory of both was checked against the phone's RAM.
    assert linked.memory.startswith("Memory on Pixel 8: the pair needs")

    # Pushed again: the phone's linked copy is recognised by its sha256, nothing is sent.
    again = _finish(desk, *desk.push_pair(phone.address, target, draft, ROOT))
    assert [s.pushed for s in again] == [(), ()]
    assert all(s.state == DONE for s in again) and again[1].link_ok is True

    # The target alone, later: its link stays (recipes alone too), and a library change
    # reaches the phone with it.
    config = target / "config.json"
    config.write_text(json.dumps({**library_config, "thread_num": 68}, indent=2))
    alone = _finish(desk, desk.push(phone.address, target, ROOT, recipe_only=True))[0]
    assert alone.state == DONE and alone.pushed == ("config.json",)
    assert _phone_json(phone, f"{ROOT}/fast-target/config.json") == {
        **library_config,
        "thread_num": 68,
        DRAFT_LINK: LINK,
    }
    whole = _finish(desk, desk.push(phone.address, target, ROOT))[0]
    assert whole.state == DONE and whole.pushed == () and whole.link == LINK


def test_the_phones_copy_is_verified_as_written(
    tmp_path: Path, phone: FakePhone, desk: PhoneDesk, bundle_copy: Copy
) -> None:
    target, draft = _pair(bundle_copy, tmp_path / "library")
    assert _finish(desk, desk.push(phone.address, draft, ROOT))[0].state == DONE
    phone.corrupt_files.append("fast-target.partial/.config.json")
    bad = _finish(desk, desk.push(phone.address, target, ROOT, draft=draft))[0]
    assert bad.state == FAILED and bad.error_code == "verify_failed"
    assert "config.json did not arrive intact" in bad.error
    assert not phone.local(f"{ROOT}/fast-target").exists()
    good = _finish(desk, desk.push(phone.address, target, ROOT, draft=draft))[0]
    assert good.state == DONE and "config.json" in good.pushed
    written = phone.local(f"{ROOT}/fast-target/config.json").read_bytes()
    assert hashlib.sha256(written).digest() == hashlib.sha256(phone_config(target, LINK)).digest()


def test_a_target_is_not_pushed_when_its_draft_did_not_arrive(
    tmp_path: Path, phone: FakePhone, desk: PhoneDesk, bundle_copy: Copy
) -> None:
    target, draft = _pair(bundle_copy, tmp_path / "library")
    phone.corrupt_files.append("fast-draft.partial/.config_cpu.json")
    drafted, linked = _finish(desk, *desk.push_pair(phone.address, target, draft, ROOT))
    assert (drafted.state, drafted.error_code) == (FAILED, "verify_failed")
    assert (linked.state, linked.error_code) == (FAILED, "draft_failed")
    assert linked.error.startswith("Not pushed: its draft fast-draft did not arrive (")
    assert drafted.error in linked.error
    assert not phone.local(f"{ROOT}/fast-target").exists()
    assert not phone.local(f"{ROOT}/fast-target.partial").exists()
    again = _finish(desk, *desk.push_pair(phone.address, target, draft, ROOT))
    assert [s.state for s in again] == [DONE, DONE] and again[1].link_ok is True


def test_a_draft_only_named_draft_config_cpu_is_linked_by_that_name(
    tmp_path: Path, phone: FakePhone, desk: PhoneDesk, bundle_copy: Copy
) -> None:
    target, draft = _pair(bundle_copy, tmp_path / "library")
    (draft / "config_cpu.json").rename(draft / "draft_config_cpu.json")
    _drafted, linked = _finish(desk, *desk.push_pair(phone.address, target, draft, ROOT))
    expected = f"{ROOT}/fast-draft/draft_config_cpu.json"
    assert (linked.state, linked.link, linked.link_ok) == (DONE, expected, True)
    assert _phone_json(phone, f"{ROOT}/fast-target/config.json")[DRAFT_LINK] == expected


def test_a_target_whose_draft_is_not_on_the_phone_says_so(
    tmp_path: Path, phone: FakePhone, desk: PhoneDesk, bundle_copy: Copy
) -> None:
    target, draft = _pair(bundle_copy, tmp_path / "library")
    unlinked = _finish(desk, desk.push(phone.address, target, ROOT))[0]
    assert unlinked.state == DONE and unlinked.link == ""
    assert unlinked.notes == (
        "fast-target's recipe drafts (speculative_type: draftmodel) but names no draft on "
        "the phone: push it with its draft to link them.",
    )
    # The card's placeholder in the library's recipe goes as it is, and is said to lead
    # nowhere on the phone.
    config = target / "config.json"
    library_config = json.loads(config.read_text())
    placeholder = {**library_config, DRAFT_LINK: "/path/to/config_cpu.json"}
    config.write_text(json.dumps(placeholder))
    carded = _finish(desk, desk.push(phone.address, target, ROOT))[0]
    assert (carded.state, carded.link, carded.link_ok) == (DONE, placeholder[DRAFT_LINK], False)
    assert carded.notes == (
        "The target's draft_config_path, /path/to/config_cpu.json, is not a file on Pixel 8: "
        "push the target with its draft to link them.",
    )
    missing = _finish(desk, desk.push(phone.address, target, ROOT, draft=draft))[0]
    assert (missing.state, missing.link, missing.link_ok) == (DONE, LINK, False)
    assert missing.notes == (
        f"The draft fast-draft is not on Pixel 8 at {ROOT}/fast-draft: the target's "
        f"draft_config_path points at {LINK}. Push fast-draft there too.",
    )


def test_a_target_that_does_not_draft_is_linked_and_told_so(
    tmp_path: Path, phone: FakePhone, desk: PhoneDesk, bundle_copy: Copy
) -> None:
    target, draft = _pair(bundle_copy, tmp_path / "library")
    config = target / "config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "speculative_type": ""}))
    _drafted, linked = _finish(desk, *desk.push_pair(phone.address, target, draft, ROOT))
    assert (linked.state, linked.link, linked.link_ok) == (DONE, LINK, True)
    assert linked.notes == (
        "fast-target's config.json names the draft fast-draft but does not turn drafting on "
        "(speculative_type is not draftmodel): the phone runs the target alone.",
    )


def test_a_pair_that_cannot_fit_in_the_phones_ram_is_refused_with_the_numbers(
    tmp_path: Path, phone: FakePhone, desk: PhoneDesk, bundle_copy: Copy
) -> None:
    target, draft = _pair(bundle_copy, tmp_path / "library")
    need = [
        model_need(estimate_model, target, "target"),
        model_need(estimate_model, draft, "draft"),
    ]
    least, most = sum(n.least for n in need), sum(n.most for n in need)
    ram = least  # less than the pair needs once Android's share is kept
    _set_ram(phone, ram)
    refused = _finish(desk, *desk.push_pair(phone.address, target, draft, ROOT))
    assert [s.state for s in refused] == [FAILED, FAILED]
    assert refused[0].error_code == "too_big"
    error = refused[0].error
    assert error.startswith("Not enough memory on Pixel 8: the pair needs ")
    assert f"{format_bytes(least)} to {format_bytes(most)}" in error
    assert f"has {format_bytes(ram // 1024 * 1024)} of RAM" in error
    assert not phone.local(f"{ROOT}/fast-draft").exists()  # nothing was sent
    assert not phone.local(f"{ROOT}/fast-draft.partial").exists()

    _set_ram(phone, int(most / 0.7) - 4096)  # fits, but above 70 % of the phone's RAM
    tight = _finish(desk, *desk.push_pair(phone.address, target, draft, ROOT))
    assert [s.state for s in tight] == [DONE, DONE]
    assert tight[1].notes[0].startswith("Memory is tight on Pixel 8: the pair needs ")


def test_memory_normal_on_an_8b_target_is_refused_on_a_16_gb_phone() -> None:
    """The figures of Qwen3-8B (8.2 B parameters in its linear layers, 4-bit as stored,
    36 layers of 8 KV heads of 128): fp32 weights at memory normal are ~33 GB."""
    gib = 1024**3

    def qwen3_8b(memory: str) -> ModelMemory:
        return ModelMemory(
            "Qwen3-8B-MNN",
            memory,
            layers=36,
            stored_weights=4_700_000_000,
            fp32_weights=8_200_000_000 * 4,
            kv_cache=36 * 8 * 128 * 2 * 4 * 2048,
            kv_per_token=36 * 8 * 128 * 2 * 4,
            context_tokens=2048,
            prompt_work=60_000_000,
            fixed=200_000_000,
        )

    exact = ModelNeed("target", qwen3_8b("normal"), fp16=False)
    fit = phone_fit([exact], 16 * gib, "RedMagic 11 Pro")
    assert fit.level == TOO_BIG and fit.least == fit.most == exact.estimate.total
    rest = 36 * 8 * 128 * 2 * 4 * 2048 + 60_000_000 + 200_000_000  # cache, prefill, fixed
    assert exact.estimate.total == 8_200_000_000 * 4 + rest  # ~31.4 GB (binary units)
    assert f"needs about {format_bytes(8_200_000_000 * 4 + rest)} on the phone" in fit.message
    assert f"has {format_bytes(16 * gib)} of RAM" in fit.message
    low = format_bytes(4_700_000_000 + rest)
    assert f'with memory "low" (weights as stored) it would need about {low}' in fit.message
    # In fp16 (precision low) the unpacked weights take half: still more than Android leaves.
    half = phone_fit([ModelNeed("target", qwen3_8b("normal"), fp16=True)], 16 * gib, "P")
    assert half.level == TOO_BIG and half.least < half.most
    stored = phone_fit([ModelNeed("target", qwen3_8b("low"), fp16=True)], 16 * gib, "P")
    assert stored.level == FITS
    assert phone_fit([ModelNeed("target", qwen3_8b("low"), fp16=False)], 8 * gib, "P").level == (
        FITS
    )
    assert phone_fit([ModelNeed("target", qwen3_8b("low"), fp16=False)], 7 * gib, "P").level == (
        TIGHT
    )


def test_this_computers_settings_never_reach_the_phone(
    tmp_path: Path, phone: FakePhone, desk: PhoneDesk, bundle_copy: Copy
) -> None:
    target, draft = _pair(bundle_copy, tmp_path / "library")
    desktop = {"version": 1, "config.json": {"memory": "normal", "thread_num": 1}}
    for pack in (target, draft):
        (pack / THIS_COMPUTER_FILE).write_text(json.dumps(desktop))
    states = _finish(desk, *desk.push_pair(phone.address, target, draft, ROOT))
    assert [s.state for s in states] == [DONE, DONE]
    for name in ("fast-target", "fast-draft"):
        folder = phone.local(f"{ROOT}/{name}")
        assert not (folder / THIS_COMPUTER_FILE).exists()
        marker = _phone_json(phone, f"{ROOT}/{name}/{PHONE_MARKER}")
        assert THIS_COMPUTER_FILE not in marker["files"]
    on_phone = _phone_json(phone, f"{ROOT}/fast-target/config.json")
    assert on_phone["memory"] == "low" and on_phone["thread_num"] == 4
    # Recipes alone neither.
    again = _finish(desk, desk.push(phone.address, target, ROOT, recipe_only=True))[0]
    assert again.state == DONE and THIS_COMPUTER_FILE not in again.verified
    assert not phone.local(f"{ROOT}/fast-target/{THIS_COMPUTER_FILE}").exists()


def test_the_phone_side_check_shows_recipe_keys_the_link_and_the_ram(
    tmp_path: Path, phone: FakePhone, desk: PhoneDesk, bundle_copy: Copy
) -> None:
    target, draft = _pair(bundle_copy, tmp_path / "library")
    assert all(
        s.state == DONE for s in _finish(desk, *desk.push_pair(phone.address, target, draft, ROOT))
    )
    library = {"fast-target": read_bundle(target), "fast-draft": read_bundle(draft)}
    device = Adb().phone(phone.address)
    packs = {p.name: p for p in list_packs(device, ROOT, library, estimate_model)}
    assert {n: p.match for n, p in packs.items()} == {"fast-draft": SAME, "fast-target": SAME}
    check = packs["fast-target"].recipes
    assert check is not None and check.same and (check.link, check.link_ok) == (LINK, True)
    assert check.memory is not None and check.memory.level == FITS
    need = [
        model_need(estimate_model, target, "target"),
        model_need(estimate_model, draft, "draft"),
    ]
    assert (check.memory.least, check.memory.most) == (
        sum(n.least for n in need),
        sum(n.most for n in need),
    )
    assert check.memory.ram == 7_864_320 * 1024  # the fake phone's MemTotal

    # The library moves on (the Recipes page, a Tune apply), the phone keeps its copy.
    config = target / "config.json"
    config.write_text(
        json.dumps({**json.loads(config.read_text()), "thread_num": 68, "backend_type": "opencl"})
    )
    recipe = draft / "config_cpu.json"
    recipe.write_text(json.dumps({**json.loads(recipe.read_text()), "memory": "normal"}))
    packs = {p.name: p for p in list_packs(device, ROOT, library, estimate_model)}
    assert {n: p.match for n, p in packs.items()} == {
        "fast-draft": DIFFERS,
        "fast-target": DIFFERS,
    }
    assert packs["fast-target"].recipes is not None
    assert [d.words() for d in packs["fast-target"].recipes.differences] == [
        'config.json: backend_type: "cpu" → "opencl"',
        "config.json: thread_num: 4 → 68",
    ]
    assert packs["fast-draft"].recipes is not None
    assert [d.words() for d in packs["fast-draft"].recipes.differences] == [
        'config_cpu.json: memory: "low" → "normal"'
    ]
    # The draft goes away on the phone: the target's link no longer resolves.
    desk.delete(phone.address, ROOT, "fast-draft")
    [left] = list_packs(device, ROOT, library, estimate_model)
    assert left.recipes is not None and (left.recipes.link, left.recipes.link_ok) == (LINK, False)
    assert f"{DRAFT_LINK}: {LINK} (is NOT on the phone)" in left.recipes.lines()
    # Pushing the recipes brings them in line and keeps the (phone's) link.
    fixed = _finish(desk, desk.push(phone.address, target, ROOT, recipe_only=True))[0]
    assert fixed.state == DONE and fixed.link == LINK
    [left] = list_packs(device, ROOT, library, estimate_model)
    assert left.recipes is not None and left.recipes.differences == ()


def test_cli_pushes_a_pair_and_shows_the_phone_side_check(
    tmp_path: Path, phone: FakePhone, bundle_copy: Copy
) -> None:
    target, draft = _pair(bundle_copy, app_dirs().default_library)
    alone = run_cli("push", "fast-target")
    assert alone.returncode == 0, alone.stderr
    assert "names no draft on the phone" in alone.stderr
    assert f"draftdeck push {target} --draft DRAFT" in alone.stderr
    pushed = run_cli("push", "fast-target", "--draft", "fast-draft", "--json")
    assert pushed.returncode == 0, pushed.stderr
    record = json.loads(pushed.stdout)
    assert record["draft"]["state"] == record["target"]["state"] == DONE
    assert record["target"]["draft_config_path"] == LINK
    assert record["target"]["link_resolves"] is True
    assert record["target"]["memory"].startswith("Memory on Pixel 8: the pair needs")
    assert _phone_json(phone, f"{ROOT}/fast-target/config.json")[DRAFT_LINK] == LINK

    plain = run_cli("push", str(target))
    assert plain.returncode == 0, plain.stderr
    assert f"draft_config_path: {LINK} (on the phone)" in plain.stdout

    config = target / "config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "thread_num": 68}))
    listing = run_cli("phone-packs", "--json")
    assert listing.returncode == 0, listing.stderr
    packs = {p["name"]: p for p in json.loads(listing.stdout)["packs"]}
    checked = packs["fast-target"]["recipes"]
    assert packs["fast-target"]["match"] == DIFFERS
    assert checked["differences"] == [
        {"file": "config.json", "key": "thread_num", "phone": 4, "library": 68}
    ]
    assert (checked["draft_config_path"], checked["link_resolves"]) == (LINK, True)
    assert checked["memory"]["level"] == FITS
    assert checked["memory"]["phone_ram"] == 7_864_320 * 1024
    words = run_cli("phone-packs")
    assert "    config.json: thread_num: 4 → 68\n" in words.stdout
    assert f"    {DRAFT_LINK}: {LINK} (is on the phone)\n" in words.stdout

    _set_ram(phone, 1024 * 1024)
    refused = run_cli("push", str(target), "--draft", str(draft))
    assert refused.returncode == 1
    assert "Not enough memory on Pixel 8: the pair needs" in refused.stderr
    assert "has 1.0 MB of RAM" in refused.stderr
