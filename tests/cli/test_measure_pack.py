"""`draftdeck measure-pack` on the committed fixture pairs, through the real engine
worker: the runtime_config.json it writes reads back through DraftDeck's own advice code
as TokForge's does, and the pack stays a Library pack.

Whether the fast pair pays depends on the machine; the tests hold the file to what was
measured (enabled exactly when the uplift's interval lies above 1), not to a speed."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.core.infra.settings import load_settings, save_settings
from app.core.pack.advice import read_advice, recommendation
from app.core.pack.bundle import read_bundle
from app.core.pack.compat import assess
from app.core.pack.known_models import identify
from app.core.pack.library import Library
from app.core.packmaking.card import CARD, CARD_MARK, CardFacts
from app.core.packmaking.make import finish_pack
from app.core.packmaking.measured import TargetMeasurement, percent
from app.core.recipe.desktop_settings import THIS_COMPUTER_FILE, read_desktop, update_desktop
from app.core.recipe.files import run_recipes
from tests.helpers.cli import run_cli

Copy = Callable[..., Path]
QUICK = ("--tokens", "48", "--min-run-seconds", "0.05")


def _measure(draft: Path, *targets: Path | str, extra: tuple[str, ...] = ()) -> dict[str, Any]:
    flags = [arg for t in targets for arg in ("--target", str(t))]
    proc = run_cli("measure-pack", str(draft), *flags, *QUICK, *extra, "--json", timeout=600)
    assert proc.returncode == 0, proc.stderr
    written: dict[str, Any] = json.loads((draft / "runtime_config.json").read_text())
    assert written == json.loads(proc.stdout)
    return written


def test_fast_pair_is_written_as_tokforge_writes_it(bundle_copy: Copy) -> None:
    target, draft = (
        bundle_copy("fast-target", desktop=True),
        bundle_copy("fast-draft", desktop=True),
    )
    recipe_before = (draft / "config_cpu.json").read_text()
    library = Library(load_settings(), save_settings)
    library.add_folder(target)
    written = _measure(draft, "fast-target")  # the target named as the Library lists it
    entry = written["compatible_targets"]["fast_target"]  # keyed by the folder: no known model
    figures = entry["measured"]
    pays = figures["uplift_low"] > 1.0
    assert entry["enabled"] is pays and ("reason" in entry) is not pays
    # Read back the way the Pair page and `draftdeck check` read TokForge's file.
    target_info, draft_info = read_bundle(target), read_bundle(draft)
    advice = read_advice(draft_info.runtime_config)
    rec = recommendation(advice, identify(target_info), target_info.name)
    assert rec is not None and rec.target_key == "fast_target" and rec.enabled is pays
    assert rec.uplift is not None and rec.uplift.startswith(percent(figures["uplift"]))
    assert f"{percent(figures['uplift_low'])} to {percent(figures['uplift_high'])}" in rec.uplift
    assert rec.settings["draft_predict_length"] == figures["draft_predict_length"]
    assert set(rec.settings) >= {"target_backend", "draft_backend", "draft_thread_num"}
    codes = {r.code for r in assess(target_info, draft_info).reasons}
    assert ("pack_recommends" in codes) is pays and (
        "pack_disabled_for_target" in codes
    ) is not pays
    host = written["_measured_on"]
    assert host["cpu"] and host["physical_cores"] and host["mnn"] and host["date"]
    assert advice is not None and "Measured by DraftDeck" in advice.notes["measured_on"]
    # The pack had a recipe: it is left as it was. It got a card.
    assert (draft / "config_cpu.json").read_text() == recipe_before
    card = (draft / CARD).read_text()
    assert CARD_MARK in card and "fast_target" in card and "draft-model" in card
    # Still a pack the Library lists, ready to pair.
    entries = library.add_folder(draft)
    assert [e.ok for e in entries] == [True] and entries[0].info is not None
    assert entries[0].info.role == "draft" and "runtime_config.json" in entries[0].info.recipe_files


def test_a_pair_that_does_not_pay_is_disabled_with_its_reason(bundle_copy: Copy) -> None:
    target = bundle_copy("qwen3-target", desktop=True)
    draft = bundle_copy("qwen3-draft-independent", desktop=True)
    other_vocabulary = bundle_copy("qwen35-draft")  # blocked: never measured
    (draft / "config_cpu.json").unlink()  # a fresh export has no draft recipe
    written = _measure(draft, target, other_vocabulary)
    entry = written["compatible_targets"]["qwen3_target"]
    assert entry["enabled"] is False and entry["measured"]["uplift_high"] < 1.5
    assert entry["reason"].startswith("Does not pay: ") and "acceptance" in entry["reason"]
    blocked = written["compatible_targets"]["qwen35_draft"]
    assert blocked["enabled"] is False and "measured" not in blocked
    assert blocked["reason"].startswith("This pair cannot work: ")
    # The new recipe is the phone's: only the sampler measured goes into it. Without
    # config_cpu.json the draft ran with its config.json's thread count and memory
    # ("low"): this computer's settings keep them, so DraftDeck runs it as measured.
    assert json.loads((draft / "config_cpu.json").read_text()) == {"sampler_type": "greedy"}
    _target_run, draft_run = run_recipes(target, draft)
    assert draft_run["thread_num"] == entry["measured"]["draft_thread_num"]
    assert draft_run["memory"] == entry["measured"]["draft_memory"] == "low"
    assert "draft_thread_num" not in written["recommended"]  # the recipe names none
    assert written["notes"]["draft_thread_num"].startswith("No draft_thread_num: ")
    info = read_bundle(draft)
    rec = recommendation(read_advice(info.runtime_config), None, target.name)
    assert rec is not None and rec.enabled is False and rec.reason == entry["reason"]
    assert info.role == "draft"  # its new config_cpu.json makes it one


def test_the_phone_recipes_hold_nothing_measured_here_and_draftdeck_runs_it_so(
    bundle_copy: Copy,
) -> None:
    # The TokForge way: the target on the phone's GPU (OpenCL, GPU mode 68), the draft's
    # recipe on the CPU with power high, leaving its thread count to the phone. This
    # computer's settings give the target one thread and memory normal here.
    target, draft = bundle_copy("fast-target"), bundle_copy("fast-draft")
    config = json.loads((target / "config.json").read_text())
    (target / "config.json").write_text(
        json.dumps({**config, "backend_type": "opencl", "thread_num": 68}, indent=4)
    )
    update_desktop(target, "config.json", {"thread_num": 1, "memory": "normal"})
    phone_draft = {"backend_type": "cpu", "precision": "low", "sampler_type": "greedy"}
    (draft / "config_cpu.json").write_text(json.dumps({**phone_draft, "power": "high"}))
    draft_config = json.loads((draft / "config.json").read_text())
    (draft / "config.json").write_text(json.dumps({**draft_config, "thread_num": 1}, indent=4))
    recipes = {p: p.read_bytes() for p in (target / "config.json", draft / "config_cpu.json")}
    proc = run_cli("measure-pack", str(draft), "--target", str(target), *QUICK, timeout=600)
    assert proc.returncode == 0, proc.stderr
    written = json.loads((draft / "runtime_config.json").read_text())
    figures = written["compatible_targets"]["fast_target"]["measured"]
    # The files a phone reads are byte for byte as they were.
    assert {p: p.read_bytes() for p in recipes} == recipes
    # DraftDeck runs the draft here as it was measured: this computer's settings say so.
    _target_run, draft_run = run_recipes(target, draft)
    assert draft_run["thread_num"] == figures["draft_thread_num"] == 1
    assert draft_run["memory"] == figures["draft_memory"] == "low"
    assert draft_run["precision"] == figures["draft_precision"] == "low"
    assert read_desktop(draft).of("config_cpu.json") == {"thread_num": 1, "memory": "low"}
    # recommended is the phone's: the target's OpenCL, the draft's power; no thread
    # count, as the draft's recipe gives none (the notes say why), not this computer's.
    rec = written["recommended"]
    assert rec["target_backend"] == "opencl" and rec["draft_backend"] == "cpu"
    assert rec["draft_power"] == "high" and "draft_thread_num" not in rec
    assert "this computer's, not a phone's" in written["notes"]["draft_thread_num"]
    uplift = written["compatible_targets"]["fast_target"]["uplift"]
    assert " measured on a computer, not a phone (" in uplift
    # The output says which file each value went to.
    assert (
        f"wrote {draft / THIS_COMPUTER_FILE} (this computer's settings for the pack: measured "
        "here; DraftDeck runs the pack with them, a phone never gets them): thread_num 1, "
        "memory low\n" in proc.stderr
    ), proc.stderr
    assert f"wrote {draft / 'config_cpu.json'}" not in proc.stderr
    # The card shows the phone's recipe and no thread count of this computer's.
    card = (draft / CARD).read_text()
    assert '"power": "high"' in card and '"draft_thread_num"' not in card
    assert '"thread_num"' not in card


def test_a_runtime_config_draftdeck_did_not_write_is_kept(bundle_copy: Copy) -> None:
    draft, target = bundle_copy("qwen3-draft-noisy"), bundle_copy("qwen3-target")
    theirs = (draft / "runtime_config.json").read_bytes()
    proc = run_cli("measure-pack", str(draft), "--target", str(target), timeout=120)
    assert proc.returncode == 1
    assert str(draft / "runtime_config.json") in proc.stderr and "--force" in proc.stderr
    assert (draft / "runtime_config.json").read_bytes() == theirs
    assert not (draft / CARD).exists()  # refused before measuring anything
    # With the user's say, it is replaced and kept beside; a second time, ours is
    # replaced without another copy.
    refused = TargetMeasurement("qwen3_8b", "Qwen3-8B", str(target), "bench", refused="test")
    done, _config = finish_pack(draft, [refused], CardFacts(), force=True)
    assert done.backups == [draft / "runtime_config.json.bak"]
    assert (draft / "runtime_config.json.bak").read_bytes() == theirs
    done, _config = finish_pack(draft, [refused], CardFacts())
    assert done.backups == [] and draft / "runtime_config.json" in done.files


def test_a_target_that_is_no_folder_nor_library_pack_is_named(bundle_copy: Copy) -> None:
    draft = bundle_copy("fast-draft")
    proc = run_cli("measure-pack", str(draft), "--target", "no-such-pack", timeout=120)
    assert proc.returncode == 1
    assert "no-such-pack: neither a pack folder nor the name of a pack in the library" in (
        proc.stderr
    )
    assert not (draft / "runtime_config.json").exists()
