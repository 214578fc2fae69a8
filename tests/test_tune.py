"""Sweeps on the fixture pairs find what is true of them."""

from __future__ import annotations

import json
import platform
import subprocess
import sys
import types
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from app.core import tune
from app.core.metrics import break_even_acceptance
from app.core.tune import (
    Setting,
    SettingResult,
    SweepPlan,
    TuneRun,
    best_result,
    pays_off,
    plan_for,
    recipe_defaults,
    verdict_sentence,
)
from app.core.tune_apply import apply_setting, restore
from app.engine.client import EngineClient
from app.engine.tune_runner import run_sweep
from tests.helpers.cli import run_cli

Copy = Callable[..., Path]
QUICK = {"tokens": 48, "prompts": ("Tell me about rivers.", "def add(a, b):\n")}


def _pair(bundle_copy: Copy, target: str, draft: str) -> tuple[Path, Path]:
    return bundle_copy(target, desktop=True), bundle_copy(draft, desktop=True)


def _quick(target: Path, draft: Path, **changes: object) -> SweepPlan:
    return replace(plan_for("quick", recipe_defaults(target, draft)), **{**QUICK, **changes})  # type: ignore[arg-type]


def test_fast_pair_gains_and_the_best_is_reported(client: EngineClient, bundle_copy: Copy) -> None:
    target, draft = _pair(bundle_copy, "fast-target", "fast-draft")
    run = run_sweep(client, target, draft, _quick(target, draft))
    assert [r.setting.draft_length for r in run.results] == [1, 2, 3, 4]
    assert pays_off(run.results)
    best = best_result(run.results)
    assert best is not None and best.uplift > 1.0
    record = run.to_json()
    assert record["pays_off"] is True and record["best"]["uplift"] == best.uplift
    assert "pays off" in record["verdict"]
    for row in record["results"]:
        for key in (
            "spec_tok_s",
            "baseline_tok_s",
            "uplift",
            "acceptance",
            "mean_accepted_length",
            "cost_ratio",
            "predicted_speedup",
            "lossless",
            "break_even_acceptance",
        ):
            assert key in row
        # The figures derive from each other as documented.
        assert row["break_even_acceptance"] == break_even_acceptance(
            row["draft_length"], row["cost_ratio"]
        )
    assert record["best"]["uplift"] == max(row["uplift"] for row in record["results"])
    assert record["host"]["mnn"] == "3.6.1" and record["host"]["physical_cores"]


def test_independent_draft_gains_nowhere(client: EngineClient, bundle_copy: Copy) -> None:
    target, draft = _pair(bundle_copy, "qwen3-target", "qwen3-draft-independent")
    run = run_sweep(client, target, draft, _quick(target, draft, draft_lengths=(1, 3)))
    assert not pays_off(run.results)
    assert all(r.uplift < 1.0 for r in run.results)
    assert "does not pay" in run.to_json()["verdict"]


def test_identical_draft_accepts_all_and_the_verdict_follows_the_figures(
    client: EngineClient, bundle_copy: Copy
) -> None:
    target, draft = _pair(bundle_copy, "qwen3-target", "qwen3-draft-identical")
    run = run_sweep(client, target, draft, _quick(target, draft, draft_lengths=(2, 3)))
    assert all(r.summary["acceptance"] == 1.0 for r in run.results)
    assert all(r.summary["lossless"] for r in run.results)
    # The desktop recipe (memory normal) verifies exactly, so nothing limits acceptance.
    assert all(r.row()["verify_agreement"] == 1.0 for r in run.results)
    assert not any(r.summary["acceptance_limited_by_verify"] for r in run.results)
    # Whether it gains is a measurement (a busy machine moves it); the verdict must
    # follow the measured figures either way. What it says for a draft as costly as the
    # target is checked on fixed figures below.
    verdict = run.to_json()["verdict"]
    assert ("pays off" in verdict) == pays_off(run.results)


def _result(draft_length: int, uplift: float, acceptance: float, c: float) -> SettingResult:
    setting = Setting(draft_length, 1, "low", "low", 1)
    return SettingResult(setting, {"uplift": uplift, "acceptance": acceptance, "cost_ratio": c})


def test_verdicts_on_fixed_figures() -> None:
    costly = [_result(2, 0.97, 1.0, 1.0), _result(3, 0.93, 1.0, 1.0)]
    assert not pays_off(costly)
    assert verdict_sentence(costly) == (
        "Speculation does not pay for this pair: the draft costs about as much as the "
        "target (c = 1.00), so even perfect acceptance cannot win. Best uplift 0.97x."
    )
    # d=2, c=0.25: speedup (1 + a + a^2) / 1.5 > 1 from a = 0.366 (hand-solved).
    weak = [_result(2, 0.8, 0.2, 0.25)]
    assert verdict_sentence(weak) == (
        "Speculation does not pay for this pair: acceptance 0.20 is below the 0.37 "
        "needed to gain anything at c = 0.25. Best uplift 0.80x."
    )
    held = _result(2, 0.97, 0.85, 1.0)
    held.summary.update(acceptance_limited_by_verify=True, verify_note="Verify agreement 0.88.")
    assert verdict_sentence([held]).endswith("Best uplift 0.97x. Verify agreement 0.88.")
    good = [_result(1, 1.2, 0.9, 0.1), _result(3, 1.6, 0.9, 0.1)]
    assert pays_off(good)
    assert verdict_sentence(good).startswith(
        "Speculation pays off: best d=3 draft 1t low/low target 1t runs 1.60x"
    )


def test_cancel_keeps_what_was_measured(client: EngineClient, bundle_copy: Copy) -> None:
    target, draft = _pair(bundle_copy, "fast-target", "fast-draft")
    seen: list[object] = []
    run = run_sweep(
        client,
        target,
        draft,
        _quick(target, draft),
        cancelled=lambda: len(seen) >= 2,
        on_result=seen.append,
    )
    assert run.cancelled
    assert len(run.results) == 2 and run.results == seen


def test_apply_best_changes_exactly_the_swept_keys(bundle_copy: Copy, tmp_path: Path) -> None:
    target, draft = _pair(bundle_copy, "fast-target", "fast-draft")
    before_target = json.loads((target / "config.json").read_text())
    before_draft = json.loads((draft / "config_cpu.json").read_text())
    plan = _quick(target, draft)
    setting = replace(plan.settings()[2], draft_threads=2)
    snapshot = apply_setting(setting, target, draft)
    after_target = json.loads((target / "config.json").read_text())
    after_draft = json.loads((draft / "config_cpu.json").read_text())
    assert {k for k in after_target if after_target[k] != before_target.get(k)} == {
        "draft_predict_length"
    }
    assert after_target["draft_predict_length"] == 3
    assert {k for k in after_draft if after_draft[k] != before_draft.get(k)} == {"thread_num"}
    assert list(after_draft) == list(before_draft)  # order kept
    restore(snapshot)
    assert json.loads((target / "config.json").read_text()) == before_target
    assert json.loads((draft / "config_cpu.json").read_text()) == before_draft


def test_saved_results_reload(client: EngineClient, bundle_copy: Copy, tmp_path: Path) -> None:
    target, draft = _pair(bundle_copy, "fast-target", "fast-draft")
    run = run_sweep(client, target, draft, _quick(target, draft, draft_lengths=(2,)))
    run.save(tmp_path / "run.json")
    again = TuneRun.load(tmp_path / "run.json")
    assert again.to_json() == run.to_json()
    csv_text = (tmp_path / "run.csv").read_text()
    assert csv_text.startswith("draft_length,") and len(csv_text.splitlines()) == 2


def test_cli_tune_json_and_apply(bundle_copy: Copy, draftdeck_home: Path) -> None:
    target, draft = _pair(bundle_copy, "fast-target", "fast-draft")
    proc = run_cli(
        "tune",
        "--target",
        str(target),
        "--draft",
        str(draft),
        "--quick",
        "--tokens",
        "48",
        "--json",
        "--apply",
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert {"results", "best", "pays_off"} <= set(out)
    assert out["pays_off"] is True
    applied = json.loads((target / "config.json").read_text())["draft_predict_length"]
    assert applied == out["best"]["draft_length"]
    assert Path(out["saved"]).is_file() and Path(out["saved"]).with_suffix(".csv").is_file()


def test_cpu_name_on_macos_comes_from_sysctl(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[list[str]] = []

    def sysctl(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        asked.append(command)
        return subprocess.CompletedProcess(command, 0, "Apple M2 Pro\n", "")

    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setattr(subprocess, "run", sysctl)
    assert tune._cpu_model() == "Apple M2 Pro"
    assert asked[0][-2:] == ["-n", "machdep.cpu.brand_string"]


def test_cpu_name_on_windows_comes_from_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[str] = []

    class Key:
        def __enter__(self) -> Key:
            return self

        def __exit__(self, *exc: object) -> None:
            pass

    def open_key(root: object, path: str) -> Key:
        opened.append(path)
        return Key()

    winreg = types.SimpleNamespace(
        HKEY_LOCAL_MACHINE=object(),
        OpenKey=open_key,
        QueryValueEx=lambda key, name: ("Intel(R) Core(TM) i7-1185G7 @ 3.00GHz  ", 1),
    )
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setitem(sys.modules, "winreg", winreg)
    assert tune._cpu_model() == "Intel(R) Core(TM) i7-1185G7 @ 3.00GHz"
    assert opened == [r"HARDWARE\DESCRIPTION\System\CentralProcessor\0"]


def test_cpu_name_falls_back_to_platform(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_sysctl(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        raise FileNotFoundError(command[0])

    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setattr(subprocess, "run", no_sysctl)
    monkeypatch.setattr(platform, "processor", lambda: "arm")
    assert tune._cpu_model() == "arm"
