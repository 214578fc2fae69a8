"""The phone in the loop, end to end as a TokForge phone owner meets it on the command
line: the TokForge recipe, two results recorded on the phone, a Tune sweep here applied
for that phone, the pair pushed; the phone then holds a pair whose recipe is the
phone's (OpenCL target, two draft threads, the draft length the forecast chose, a
`draft_config_path` that resolves there) and nothing measured on this computer.

Real MNN on the fixtures' fast pair, the real adb server, the fake phone ("Pixel 8")."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.core.infra.paths import app_dirs
from app.core.recipe.desktop_settings import THIS_COMPUTER_FILE
from app.core.recipe.files import run_recipes
from app.core.recipe.presets import builtin_presets
from tests.fake_phone import FakePhone
from tests.helpers.cli import run_cli

ROOT = "/data/local/tmp/mnn_models"
PHONE = "Pixel 8"  # the fake phone's model name


def _json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _load_tokforge_recipe(target: Path, draft: Path) -> None:
    """What Recipes → Preset: TokForge published recipe (phone) saves."""
    preset = {p.key: p for p in builtin_presets()}["tokforge"]
    recipes = ((target / "config.json", preset.target), (draft / "config_cpu.json", preset.draft))
    for path, values in recipes:
        data = _json(path) if path.is_file() else {}
        path.write_text(json.dumps({**data, **values}, indent=4))


def _ok(*args: str) -> str:
    proc = run_cli(*args, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_tokforge_recipe_tuned_here_applied_and_pushed_is_the_phones_pair(
    phone: FakePhone, bundle_copy: Callable[..., Path]
) -> None:
    library = app_dirs().default_library
    target = bundle_copy("fast-target", library / "fast-target")
    draft = bundle_copy("fast-draft", library / "fast-draft")
    _load_tokforge_recipe(target, draft)
    pair = ("--target", str(target), "--draft", str(draft))
    phone_target = _json(target / "config.json")
    phone_draft = _json(draft / "config_cpu.json")

    # Two runs on the phone, as TokForge shows them, give the phone its profile.
    _ok("phone-result", "add", "--phone", PHONE, *pair, "9.0", "12.5", "3")
    _ok("phone-result", "add", "--phone", PHONE, *pair, "9.1", "12.0", "2")

    tuned = json.loads(
        _ok(
            "tune",
            *pair,
            "--quick",
            "--tokens",
            "48",
            "--budget",
            "2",
            "--min-run-seconds",
            "0.05",
            "--apply",
            "--device",
            PHONE,
            "--json",
        )
    )
    forecast = json.loads(_ok("forecast", *pair, "--device", PHONE, "--json"))
    best_on_phone = forecast["best_draft_length"]
    assert 1 <= best_on_phone <= 6

    # Apply wrote the phone's recipe only where the forecast chose the length.
    on_phone = [c for c in tuned["changes"] if c["where"] == "phone"]
    assert all(c["key"] == "draft_predict_length" for c in on_phone)
    expected_target = {**phone_target, "draft_predict_length": best_on_phone}
    assert _json(target / "config.json") == expected_target
    assert _json(draft / "config_cpu.json") == phone_draft
    # What runs here is the pack's recipe under this computer's settings: the CPU.
    target_run, _draft_run = run_recipes(target, draft)
    assert target_run["backend_type"] == "cpu"

    pushed = json.loads(_ok("push", "fast-target", "--draft", "fast-draft", "--json"))
    assert pushed["draft"]["state"] == pushed["target"]["state"] == "done"
    link = f"{ROOT}/fast-draft/config_cpu.json"
    assert pushed["target"]["draft_config_path"] == link
    assert pushed["target"]["link_resolves"] is True

    on_the_phone = _json(phone.local(f"{ROOT}/fast-target/config.json"))
    assert on_the_phone == {**expected_target, "draft_config_path": link}
    assert on_the_phone["backend_type"] == "opencl"
    assert on_the_phone["draft_predict_length"] == best_on_phone
    assert phone.local(link).is_file()
    draft_on_the_phone = _json(phone.local(link))
    assert draft_on_the_phone == phone_draft
    assert (draft_on_the_phone["thread_num"], draft_on_the_phone["power"]) == (2, "high")
    for pack in ("fast-target", "fast-draft"):
        assert not phone.local(f"{ROOT}/{pack}/{THIS_COMPUTER_FILE}").exists()
