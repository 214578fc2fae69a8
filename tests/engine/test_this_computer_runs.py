"""The real engine runs a pack with this computer's settings layered over its recipes
(recipe/desktop_settings.py): what MNN is handed, the load's facts and the reply show
the overlay, and the pack's own files stay byte for byte as they were."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import psutil

from app.core.recipe.desktop_settings import THIS_COMPUTER_FILE, update_desktop
from app.core.recipe.drafting_settings import DraftingSettings
from app.engine.protocol import Generate, Mode
from app.engine.worker.session import Session

Copy = Callable[..., Path]
FIXED = DraftingSettings(adaptive=False)


def _pack_bytes(pack: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in pack.iterdir() if p.name != THIS_COMPUTER_FILE}


def _phone_recipes(target: Path, draft: Path) -> None:
    """What a TokForge phone runs: the target on the GPU (thread_num a GPU mode), the
    draft on two CPU threads, d = 3, memory low."""
    config = json.loads((target / "config.json").read_text())
    config.update(backend_type="opencl", thread_num=68, draft_predict_length=3, memory="low")
    (target / "config.json").write_text(json.dumps(config, indent=4))
    (draft / "config_cpu.json").write_text(
        json.dumps({"backend_type": "cpu", "thread_num": 2, "power": "high", "memory": "low"})
    )


def test_a_phone_recipe_runs_here_and_this_computer_s_settings_are_what_runs(
    bundle_copy: Copy, session: Session
) -> None:
    target, draft = bundle_copy("qwen3-target"), bundle_copy("qwen3-draft-identical")
    _phone_recipes(target, draft)
    before = _pack_bytes(target), _pack_bytes(draft)
    sane = min(4, psutil.cpu_count(logical=False) or 1)

    # Nobody adapted anything: it runs on the CPU with a sane thread count.
    loaded = session.load(str(target), str(draft))
    assert session.target is not None and session.draft is not None
    assert session.target.config["backend_type"] == "cpu"
    assert session.target.config["thread_num"] == sane
    assert session.draft.config["thread_num"] == 2 and loaded.draft_length == 3
    assert not loaded.lossless_expected  # memory low, as the phone recipe says

    # This computer's settings: one thread each, memory normal (exact), d = 2.
    update_desktop(target, "config.json", {"thread_num": 1, "memory": "normal"})
    update_desktop(target, "config.json", {"draft_predict_length": 2})
    update_desktop(draft, "config_cpu.json", {"thread_num": 1, "memory": "normal"})
    loaded = session.load(str(target), str(draft))
    assert session.target is not None and session.draft is not None
    assert session.target.config["thread_num"] == 1
    assert session.target.config["memory"] == "normal"
    assert session.draft.config["thread_num"] == 1
    assert session.draft.config["memory"] == "normal"
    assert loaded.draft_length == 2 and loaded.lossless_expected
    # An identical draft at memory normal is exact: every drafted token accepted.
    result = session.generate(
        Generate(prompt="Hello", max_tokens=24, mode=Mode.SPECULATIVE, drafting=FIXED),
        lambda _rounds: None,
        lambda: False,
    )
    stats = result.stats
    assert stats.draft_length == 2 and stats.drafted > 0
    assert stats.accepted == stats.drafted
    # The caller's explicit keys still win over this computer's settings.
    session.load(str(target), str(draft), target_config={"thread_num": 2})
    assert session.target is not None and session.target.config["thread_num"] == 2
    assert (_pack_bytes(target), _pack_bytes(draft)) == before


def test_a_settings_file_that_cannot_be_used_is_said_and_the_recipes_run(
    bundle_copy: Copy, session: Session
) -> None:
    target, draft = bundle_copy("qwen3-target"), bundle_copy("qwen3-draft-identical")
    assert session.load(str(target), str(draft)).settings_problem is None
    (draft / THIS_COMPUTER_FILE).write_text('{"version": 1, "config_cpu.json": {"thread_num": 0}}')
    loaded = session.load(str(target), str(draft), target_config={"thread_num": 1})
    assert loaded.settings_problem == (
        f"{draft / THIS_COMPUTER_FILE}: config_cpu.json: thread_num: must be at least 1; "
        "running the pack as its recipes say"
    )
    recipe = json.loads((draft / "config_cpu.json").read_text())
    assert session.draft is not None
    assert session.draft.config["thread_num"] == recipe["thread_num"]
