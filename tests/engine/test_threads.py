"""Thread counts DraftDeck chooses stay within the physical cores (llmexport writes 4)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from app.core.measure.tune_plan import plan_for, recipe_defaults
from app.core.recipe.presets import presets_for
from app.core.recipe.schema import DRAFT, TARGET, recipe_problems
from app.engine.worker import mnn_llm

Copy = Callable[..., Path]


def _edit(path: Path, drop: str | None = None, **values: object) -> None:
    data = json.loads(path.read_text())
    if drop:
        data.pop(drop, None)
    data.update(values)
    path.write_text(json.dumps(data, indent=4))


def test_desktop_preset_is_capped_but_published_ones_are_not() -> None:
    by_key = {p.key: p for p in presets_for(None, cores=1)}
    assert by_key["desktop_cpu"].draft["thread_num"] == 1
    assert by_key["desktop_cpu"].target["thread_num"] == 1
    # The phone recipe and MNN's own defaults are shown as published.
    assert by_key["tokforge"].target["thread_num"] == 4
    assert by_key["mnn_defaults"].draft["thread_num"] == 4
    roomy = {p.key: p for p in presets_for(None, cores=16)}
    assert roomy["desktop_cpu"].draft["thread_num"] == 2


def test_tune_defaults_stay_within_the_cores(bundle_copy: Copy) -> None:
    target, draft = bundle_copy("fast-target"), bundle_copy("fast-draft")
    # As exported: config.json says 4 threads; the draft recipe says 2.
    assert recipe_defaults(target, draft, cores=2)["target_threads"] == 2
    assert recipe_defaults(target, draft, cores=2)["draft_threads"] == 2
    # The draft recipe's own count runs as it is, above the cores too (the engine passes
    # a recipe's explicit thread_num through); the Tune form says so.
    assert recipe_defaults(target, draft, cores=1)["draft_threads"] == 2
    # A draft recipe without thread_num runs with its config.json's 4, capped here.
    _edit(draft / "config_cpu.json", drop="thread_num")
    defaults = recipe_defaults(target, draft, cores=3)
    assert (defaults["draft_threads"], defaults["target_threads"]) == (3, 3)
    assert recipe_defaults(target, draft, cores=8)["draft_threads"] == 4
    quick = plan_for("quick", defaults, cores=3)
    assert quick.draft_threads == (3,) and quick.target_threads == (3,)
    thorough = plan_for("thorough", defaults, cores=3)
    assert max(thorough.draft_threads + thorough.target_threads) == 3


def test_engine_threads_stay_within_the_cores_unless_chosen(
    bundle_copy: Copy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mnn_llm, "physical_cores", lambda: 2)
    pack = bundle_copy("qwen3-target")
    # config.json says 4 (as llmexport writes): capped at the cores.
    assert mnn_llm.runtime_config(pack, {})["thread_num"] == 2
    assert mnn_llm.runtime_config(pack, {"thread_num": 6})["thread_num"] == 6  # chosen
    _edit(pack / "config.json", drop="thread_num")
    assert mnn_llm.runtime_config(pack, {})["thread_num"] == 2  # not MNN's 4
    monkeypatch.setattr(mnn_llm, "physical_cores", lambda: 16)
    assert mnn_llm.runtime_config(pack, {})["thread_num"] == 4


def test_recipe_warnings_name_both_numbers(
    bundle_copy: Copy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(psutil, "cpu_count", lambda logical=True: 2)
    draft = bundle_copy("qwen3-draft-noisy")
    # The target's recipe is its config.json, whose count the engine holds to the cores
    # (runtime_config): it runs as 2, as Tune's note says, and does not compete.
    explicit = recipe_problems({"thread_num": 4}, TARGET, draft)
    assert [str(p) for p in explicit] == [
        "thread_num: 4 threads on 2 physical cores: DraftDeck runs it with 2 here "
        "(config.json's thread count is held to the physical cores; a phone uses all of them). "
        "Set this computer's thread count under On this computer (draftdeck recipe set "
        "--this-computer); the phone's recipe keeps its own."
    ]
    assert mnn_llm.runtime_config(draft, {})["thread_num"] == 2
    # A draft recipe's own count is passed to MNN as it is: that one competes.
    chosen = recipe_problems({"thread_num": 4}, DRAFT, draft)
    assert [str(p) for p in chosen] == [
        "thread_num: 4 threads on 2 physical cores: threads will compete and run slower. Set "
        "this computer's thread count under On this computer (draftdeck recipe set "
        "--this-computer); the phone's recipe keeps its own."
    ]
    # Set for this computer: what runs here is that, and the recipe is not warned about.
    assert recipe_problems({"thread_num": 4}, DRAFT, draft, here={"thread_num": 1}) == []
    memory = recipe_problems({"memory": "normal"}, DRAFT, draft, here={"thread_num": 1})
    assert [(p.key, p.message.split(":")[0]) for p in memory] == [
        ("memory", "normal is a desktop value")
    ]
    inherited = recipe_problems({"memory": "low"}, DRAFT, draft)
    assert [p.key for p in inherited] == ["thread_num"]
    assert "the 4 threads of its config.json" in inherited[0].message
    assert "it runs with 2 here" in inherited[0].message
    # The target's own config.json is the file being edited: nothing is inherited.
    assert recipe_problems({"memory": "low"}, TARGET, draft) == []
    assert recipe_problems({"thread_num": 2}, DRAFT, draft) == []
