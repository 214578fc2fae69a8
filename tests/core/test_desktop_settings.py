"""This computer's settings for a pack (.draftdeck-this-computer.json): read, checked,
written under the save lock, and layered over the pack's recipes wherever DraftDeck
runs the pack, the pack's own files left byte for byte as they are."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from app.core.infra.errors import BadValueError, FileError, InvalidJsonError, UnreadableFileError
from app.core.measure.load_plan import LoadPlan, plan_paths
from app.core.measure.tune_plan import recipe_defaults, thread_counts
from app.core.recipe.desktop_settings import (
    THIS_COMPUTER_FILE,
    DesktopSettings,
    host_threads,
    read_desktop,
    restore_desktop,
    update_desktop,
    write_desktop,
)
from app.core.recipe.files import (
    draft_run_recipe,
    draft_settings,
    run_recipes,
    target_run_recipe,
    target_settings,
)
from app.core.recipe.save_lock import saving

Copy = Callable[..., Path]
PHONE_TARGET = {"backend_type": "opencl", "thread_num": 68, "draft_predict_length": 3}


def _set_json(path: Path, **keys: object) -> None:
    data = json.loads(path.read_text())
    data.update(keys)
    path.write_text(json.dumps(data, indent=4))


def _write(pack: Path, text: str) -> Path:
    path = pack / THIS_COMPUTER_FILE
    path.write_text(text)
    return path


def _pack_bytes(pack: Path) -> dict[str, bytes]:
    """The pack's own files (this computer's settings file is DraftDeck's)."""
    return {p.name: p.read_bytes() for p in pack.iterdir() if p.name != THIS_COMPUTER_FILE}


# -- the file ------------------------------------------------------------------------------


def test_a_pack_without_the_file_has_no_settings_and_a_round_trip_keeps_them(
    bundle_copy: Copy,
) -> None:
    pack = bundle_copy("qwen3-target")
    assert read_desktop(pack) == DesktopSettings() and read_desktop(pack).empty
    settings = DesktopSettings({"config.json": {"thread_num": 1, "memory": "normal"}})
    write_desktop(pack, settings)
    on_disk = json.loads((pack / THIS_COMPUTER_FILE).read_text())
    assert on_disk == {"version": 1, "config.json": {"thread_num": 1, "memory": "normal"}}
    assert read_desktop(pack) == settings
    write_desktop(pack, DesktopSettings())  # nothing left: no file, as a pack never adapted
    assert not (pack / THIS_COMPUTER_FILE).exists()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"config.json": {}}', "version must be 1, not None"),
        ('{"version": 2}', "version 2 was written by a newer DraftDeck"),
        ('{"version": 1, "llm_config.json": {}}', "'llm_config.json' is not a recipe file"),
        ('{"version": 1, "config.json": 3}', "config.json must hold an object of settings"),
        (
            '{"version": 1, "config.json": {"sampler_type": "greedy"}}',
            "'sampler_type': not a setting of this computer",
        ),
        ('{"version": 1, "config.json": {"thread_num": 0}}', "thread_num: must be at least 1"),
        (
            '{"version": 1, "config_cpu.json": {"memory": "lots"}}',
            "config_cpu.json: memory: 'lots' is not one of",
        ),
    ],
)
def test_a_bad_file_is_refused_naming_it_and_the_problem(
    bundle_copy: Copy, text: str, problem: str
) -> None:
    pack = bundle_copy("qwen3-target")
    path = _write(pack, text)
    with pytest.raises(BadValueError) as caught:
        read_desktop(pack)
    assert caught.value.path == path and problem in str(caught.value)
    assert str(path) in str(caught.value)


def test_a_repeated_key_or_a_huge_file_is_refused_by_the_json_reader(bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-target")
    _write(pack, '{"version": 1, "config.json": {"thread_num": 1, "thread_num": 2}}')
    with pytest.raises(InvalidJsonError, match=r"'config\.json\.thread_num' is given twice"):
        read_desktop(pack)
    _write(pack, '{"version": 1, "pad": "' + "x" * (17 << 20) + '"}')
    with pytest.raises(UnreadableFileError, match="too large"):
        read_desktop(pack)


def test_update_changes_one_file_s_keys_and_gives_what_was_there_for_undo(
    bundle_copy: Copy,
) -> None:
    pack = bundle_copy("qwen3-draft-noisy")
    before = update_desktop(pack, "config_cpu.json", {"thread_num": 1, "memory": "normal"})
    assert before.empty
    again = update_desktop(pack, "config.json", {"thread_num": 2})
    assert again.of("config_cpu.json") == {"thread_num": 1, "memory": "normal"}
    update_desktop(pack, "config_cpu.json", {"memory": None})  # None takes a key out
    assert read_desktop(pack).files == {
        "config.json": {"thread_num": 2},
        "config_cpu.json": {"thread_num": 1},
    }
    restore_desktop(pack, before)
    assert not (pack / THIS_COMPUTER_FILE).exists()
    with pytest.raises(BadValueError, match="precision: 'fp8' is not one of"):
        update_desktop(pack, "config.json", {"precision": "fp8"})
    assert not (pack / THIS_COMPUTER_FILE).exists()
    with pytest.raises(FileError, match="folder not found"):
        update_desktop(pack / "gone", "config.json", {"thread_num": 1})
    assert not (pack / "gone").exists()


def test_an_update_waits_for_a_save_holding_the_file_s_lock(bundle_copy: Copy) -> None:
    pack = bundle_copy("qwen3-target")
    done = threading.Event()

    def update() -> None:
        update_desktop(pack, "config.json", {"thread_num": 1})
        done.set()

    with saving(pack / THIS_COMPUTER_FILE):
        worker = threading.Thread(target=update)
        worker.start()
        # Held here: the update cannot have written (it waits on the lock file).
        assert not done.wait(0.3) and not (pack / THIS_COMPUTER_FILE).exists()
    worker.join(30)
    assert done.is_set() and read_desktop(pack).of("config.json") == {"thread_num": 1}


# -- layered over the recipes ----------------------------------------------------------------


def test_the_target_runs_its_recipe_under_this_computer_s_settings_under_the_caller(
    bundle_copy: Copy,
) -> None:
    target = bundle_copy("qwen3-target")
    update_desktop(target, "config.json", {"memory": "normal", "thread_num": 1})
    before = _pack_bytes(target)
    assert target_settings(target) == {"memory": "normal", "thread_num": 1}
    assert target_settings(target, {"thread_num": 2}) == {"memory": "normal", "thread_num": 2}
    run = target_run_recipe(target)
    assert run["memory"] == "normal" and run["thread_num"] == 1
    assert run["llm_model"] == json.loads((target / "config.json").read_text())["llm_model"]
    assert _pack_bytes(target) == before


def test_the_draft_layers_each_file_under_its_own_settings(bundle_copy: Copy) -> None:
    draft = bundle_copy("qwen3-draft-noisy")
    _set_json(draft / "config.json", thread_num=4, precision="high")
    (draft / "config_cpu.json").write_text(json.dumps({"thread_num": 2, "memory": "low"}))
    update_desktop(draft, "config.json", {"thread_num": 3, "precision": "normal"})
    # The recipe's thread count is over config.json's layer; precision only there.
    assert draft_settings(draft) == {"thread_num": 2, "precision": "normal", "memory": "low"}
    update_desktop(draft, "config_cpu.json", {"thread_num": 1, "memory": "normal"})
    assert draft_settings(draft) == {"thread_num": 1, "precision": "normal", "memory": "normal"}
    assert draft_settings(draft, {"memory": "low"})["memory"] == "low"  # the caller's wins
    run = draft_run_recipe(draft)
    assert (run["thread_num"], run["precision"], run["memory"]) == (1, "normal", "normal")


def test_a_phone_recipe_runs_here_on_the_cpu_with_a_sane_thread_count(bundle_copy: Copy) -> None:
    """backend opencl, thread_num 68 (a GPU mode), nobody adapted anything: it runs here
    on the CPU with MNN's 4 threads held to the cores, and no file in the pack changes."""
    target = bundle_copy("qwen3-target")
    draft = bundle_copy("qwen3-draft-noisy")
    _set_json(target / "config.json", **PHONE_TARGET)
    (draft / "config_cpu.json").write_text(
        json.dumps({"backend_type": "opencl", "thread_num": 68, "power": "high"})
    )
    before = _pack_bytes(target), _pack_bytes(draft)
    sane = min(4, psutil.cpu_count(logical=False) or 1)
    assert host_threads() == sane
    target_run, draft_run = run_recipes(target, draft)
    assert (target_run["backend_type"], target_run["thread_num"]) == ("cpu", sane)
    assert (draft_run["backend_type"], draft_run["thread_num"]) == ("cpu", sane)
    assert draft_run["power"] == "high" and target_run["draft_predict_length"] == 3
    # This computer's own thread count wins over the stand-in, as the caller's does.
    update_desktop(target, "config.json", {"thread_num": 1})
    assert target_run_recipe(target)["thread_num"] == 1
    assert target_run_recipe(target, {"thread_num": 2})["thread_num"] == 2
    assert (_pack_bytes(target), _pack_bytes(draft)) == before


def test_a_file_that_cannot_be_used_runs_the_pack_as_its_recipes_say(bundle_copy: Copy) -> None:
    target = bundle_copy("qwen3-target")
    _write(target, '{"version": 1, "config.json": {"thread_num": "many"}}')
    assert target_settings(target) == {}
    assert target_run_recipe(target) == json.loads((target / "config.json").read_text())


def test_the_load_plan_and_tune_see_the_settings_of_this_computer(bundle_copy: Copy) -> None:
    target = bundle_copy("qwen3-target")
    draft = bundle_copy("qwen3-draft-noisy")
    base = plan_paths(target, draft)
    assert isinstance(base, LoadPlan) and base.target_recipe.get("memory", "low") == "low"
    update_desktop(target, "config.json", {"memory": "normal", "draft_predict_length": 5})
    update_desktop(draft, "config_cpu.json", {"memory": "normal", "thread_num": 1})
    plan = plan_paths(target, draft)
    assert isinstance(plan, LoadPlan)
    assert plan.target_recipe["memory"] == "normal" and plan.draft_recipe["memory"] == "normal"
    assert plan.draft_length == 5 and plan.verify_length == 6
    # memory normal keeps fp32 weights: the estimate grows with it.
    assert plan.memory.total > base.memory.total
    defaults = recipe_defaults(target, draft, cores=2)
    assert defaults["draft_length"] == 5 and defaults["draft_memory"] == "normal"
    assert defaults["draft_threads"] == 1
    counts = {c.field: c for c in thread_counts(target, draft, cores=2)}
    assert counts["draft_threads"].file == "this computer's settings for config_cpu.json"
    update_desktop(target, "config.json", {"thread_num": 8})
    counts = {c.field: c for c in thread_counts(target, draft, cores=2)}
    assert (counts["target_threads"].asked, counts["target_threads"].runs) == (8, 8)
    assert "this computer's settings for config.json asks for 8" in counts["target_threads"].note()
