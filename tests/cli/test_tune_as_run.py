"""Tune measures the recipes as they run, applies what it measured, says when a run is
stale, shows figures a reader can check, and estimates its time from the plan.

The figures here are made up or scripted (no machine speed is asserted); the thread
counts are compared with the engine's own rule (app/engine/worker/mnn_llm.py).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from app.cli.tune import format_rows
from app.core.measure.metrics import DecodeStats
from app.core.measure.tune_apply import COMPUTER, best_changes, refusal_now
from app.core.measure.tune_eta import RISE_LIMIT, SweepClock, seconds_left, time_left_text
from app.core.measure.tune_plan import (
    Setting,
    SweepPlan,
    plan_for,
    recipe_defaults,
    sampling_text,
    thread_counts,
)
from app.core.measure.tune_results import SettingResult, rows
from app.core.measure.tune_run import TuneRun
from app.core.measure.verify_agreement import VerifyAgreement
from app.core.measure.words import StopReason, VerifyMethod
from app.core.recipe.desktop_settings import read_desktop
from app.core.recipe.drafting_settings import FIXED_DRAFTING, write_drafting
from app.core.recipe.files import draft_settings
from app.core.recipe.schema import physical_cores
from app.engine.client.tune_job import DONE, TuneJob, TuneStatus
from app.engine.protocol import (
    AgreementMeasured,
    Done,
    Generate,
    Load,
    MeasureAgreement,
    Request,
    ResetDone,
)
from app.engine.worker.mnn_llm import runtime_config
from tests.helpers.engine_events import ScriptedClient, loaded_event
from tests.helpers.tune_results import setting_result

Copy = Callable[..., Path]


def _edit(path: Path, **keys: object) -> None:
    data = json.loads(path.read_text())
    data.update(keys)
    for key in [k for k, v in keys.items() if v is None]:
        del data[key]
    path.write_text(json.dumps(data, indent=4))


# -- the recipes as they run -------------------------------------------------------------


def test_thread_counts_are_the_engines(bundle_copy: Copy) -> None:
    """What Tune calls the current recipe is what the engine runs: a config.json count
    held to the cores, a count the draft's recipe sets passed as it is."""
    target, draft = bundle_copy("fast-target"), bundle_copy("fast-draft")
    cores = physical_cores()
    more = cores + 2
    _edit(target / "config.json", thread_num=more)
    _edit(draft / "config_cpu.json", thread_num=more)
    engine_target = runtime_config(target, {})["thread_num"]
    engine_draft = runtime_config(draft, draft_settings(draft))["thread_num"]
    defaults = recipe_defaults(target, draft)
    assert (defaults["target_threads"], defaults["draft_threads"]) == (
        engine_target,
        engine_draft,
    )
    assert (engine_target, engine_draft) == (cores, more)
    target_count, draft_count = thread_counts(target, draft)
    assert target_count.note() == (
        f"Target threads: config.json asks for {more}; this computer has {cores} physical "
        f"cores, so it runs {cores}, and {cores} is what is measured (and kept unless swept)."
    )
    assert f"config_cpu.json asks for {more}, more than this computer's" in draft_count.note()
    # Without a count in the draft's recipe, its config.json's, held to the cores.
    _edit(draft / "config_cpu.json", thread_num=None)
    assert recipe_defaults(target, draft)["draft_threads"] == min(4, cores)
    assert runtime_config(draft, draft_settings(draft))["thread_num"] == min(4, cores)


def _run_of(plan: SweepPlan, as_run: dict[str, Any], target: Path, draft: Path) -> TuneRun:
    """A measured run of `plan`'s settings: the longest draft clearly best."""
    results = [
        SettingResult(
            s, setting_result(s.draft_length, 1.0 + s.draft_length / 10, 0.0, 0.0).summary
        )
        for s in plan.settings()
    ]
    for r in results:
        u = r.uplift
        r.summary.update(uplift_low=u - 0.01, uplift_high=u + 0.01, pair_ratios=[u] * 6)
    return TuneRun(str(target), str(draft), plan, results=results, as_run=as_run)


def test_apply_writes_what_was_measured_and_nothing_else(bundle_copy: Copy) -> None:
    # The fixture's config.json asks for 4 target threads; on 2 cores 2 run and are
    # measured. Quick sweeps the draft length and adaptive drafting only: those alone
    # are written, and the dialog's words name only them. The fixed d=4 ties with
    # adaptive drafting up to 4 and is named; the pack drafts fixed lengths already.
    target, draft = bundle_copy("fast-target"), bundle_copy("fast-draft")
    write_drafting(draft, FIXED_DRAFTING)  # whatever a pack without the file does
    as_run = recipe_defaults(target, draft, cores=2)
    assert as_run["target_threads"] == 2
    quick = plan_for("quick", as_run, cores=2)
    best = best_changes(_run_of(quick, as_run, target, draft))
    assert best is not None and best.fields == ("draft_length", "adaptive")
    assert best.label() == "draft length 4"
    # No phone chosen: the length best here goes to this computer's settings.
    assert [(c.where, c.key, c.new) for c in best.changes] == [
        (COMPUTER, "draft_predict_length", 4)
    ]
    # A plan that holds target threads at another value than they run measured that
    # value: applying its best writes it, into this computer's settings (the old value
    # is the count that runs here: config.json's 4 held to the cores).
    held = replace(quick, target_threads=(1,))
    best = best_changes(_run_of(held, as_run, target, draft))
    assert best is not None and best.fields == ("draft_length", "target_threads", "adaptive")
    assert best.label() == "draft length 4; target 1 thread"
    assert {(c.where, c.recipe, c.key, c.old, c.new) for c in best.changes} == {
        (COMPUTER, "config.json", "draft_predict_length", 3, 4),
        (COMPUTER, "config.json", "thread_num", min(4, physical_cores()), 1),
    }
    recipes = (target / "config.json").read_bytes(), (draft / "config_cpu.json").read_bytes()
    best.apply()
    assert read_desktop(target).of("config.json") == {"draft_predict_length": 4, "thread_num": 1}
    after = (target / "config.json").read_bytes(), (draft / "config_cpu.json").read_bytes()
    assert after == recipes  # the phone's recipes are untouched


def test_a_recipe_changed_after_the_run_makes_it_stale(bundle_copy: Copy) -> None:
    target, draft = bundle_copy("fast-target"), bundle_copy("fast-draft")
    write_drafting(draft, FIXED_DRAFTING)  # its fixed d=3 row is the current recipe
    as_run = recipe_defaults(target, draft)
    run = _run_of(plan_for("quick", as_run), as_run, target, draft)
    run.results[3].summary.update(uplift_low=1.2)  # d=4: not beyond d=3's 1.3x
    assert "1.30\N{MULTIPLICATION SIGN} the current recipe (draft length 3) measured" in str(
        refusal_now(run)
    )
    # The draft length was swept: another row is the current recipe now, and the
    # comparison is made with it, not with the figure of the one before.
    _edit(target / "config.json", draft_predict_length=1)
    assert refusal_now(run) is None  # d=4 beats d=1's 1.1x beyond noise
    # Memory was held as it ran: every row was measured with another recipe.
    _edit(draft / "config_cpu.json", memory="normal")
    refusal = str(refusal_now(run))
    assert refusal.startswith(
        "the recipes changed since this run measured them (draft memory low → normal), so "
        "its comparison with the current recipe is stale"
    )
    assert "1.30\N{MULTIPLICATION SIGN}" not in refusal
    _edit(draft / "config_cpu.json", memory="low")
    # Once the best is what the recipes hold (applied), it is said so.
    best = best_changes(run)
    assert best is not None
    best.apply()
    assert refusal_now(run) == "the best (draft length 4) is the current recipe already"
    # A saved run keeps what the recipes were.
    again = TuneRun.from_json(json.loads(json.dumps(run.to_json())))
    assert again.as_run == as_run


# -- figures a reader can check --------------------------------------------------------


def _drifting() -> list[SettingResult]:
    """Two draft lengths on one target setting, the machine twice as fast during d=3:
    pooled plain 234.6 tok/s, while d=3's own pairs ran plain at 445."""
    fast = setting_result(
        3,
        1.53,
        1.5,
        1.56,
        spec_tok_s=680.1,
        baseline_tok_s=445.0,
        baseline_runs_tok_s=[445.0] * 6,
    )
    slow = setting_result(
        2,
        1.2,
        1.15,
        1.25,
        spec_tok_s=150.0,
        baseline_tok_s=125.0,
        baseline_runs_tok_s=[125.0] * 6 + [234.6],
    )
    return [fast, slow]


def test_a_row_carries_the_plain_speed_of_its_own_pairs() -> None:
    row = rows(_drifting())[0]
    assert row["baseline_tok_s"] == 234.6  # pooled: honest for the target setting
    assert row["paired_baseline_tok_s"] == 445.0
    assert row["spec_tok_s"] / row["paired_baseline_tok_s"] == pytest.approx(1.53, rel=0.01)
    line = format_rows([row])[0]
    assert "spec 680.1 vs plain 445.0 tok/s in its pairs (plain pooled 234.6)" in line


def test_greedy_says_exact_only_when_the_recipe_verifies_exactly() -> None:
    plan = SweepPlan()
    inexact = sampling_text(plan, None, exact=False)
    assert "must equal" not in inexact
    assert "only when the recipe verifies exactly" in inexact and "memory “low”" in inexact
    assert "must equal plain output" in sampling_text(plan, None, exact=True)
    low = {"target": {"recipe": {"memory": "low"}}}
    differed = [setting_result(d, 1.2, 1.1, 1.3, lossless=False, sampler="greedy") for d in (1, 2)]
    run = TuneRun("t", "d", plan, results=differed, packs=low)
    assert run.sampler_text().endswith("(see Lossless). It differed in 2 of 2 settings.")


# -- time left --------------------------------------------------------------------------


class _TimedEngine(ScriptedClient):
    """The engine as a script on a made-up clock: a load and warm-up cost `setup`
    seconds, every measured generation `pair / 2`. Plain decoding 100 tokens in 1 s;
    speculative at `speed[d]`, every other run 1.3x faster still, so no interval
    narrows and every setting runs its most rounds."""

    def __init__(self, clock: list[float], setup: float, pair: float, warm: float = 0.0) -> None:
        self.clock, self.setup, self.pair, self.warm = clock, setup, pair, warm
        self.speed = {1: 1.0, 2: 1.1, 3: 1.6, 4: 1.6}  # d=3 and d=4 lead
        self.d = 1
        self.generations = 0
        self.seen: list[tuple[float, float | None]] = []
        self.statuses: list[TuneStatus] = []
        self.job: TuneJob | None = None

    def run(self, request: Request[Any], *_: Any, **__: Any) -> object:
        if self.job is not None:
            self.seen.append((self.clock[0], self.job.status().eta_seconds))
            self.statuses.append(self.job.status())
        if isinstance(request, Load):
            self.clock[0] += self.setup
            self.d, self.generations = request.draft_length or 1, 0
            return loaded_event(draft_length=self.d)
        if isinstance(request, MeasureAgreement):
            return AgreementMeasured(VerifyAgreement(1.0, 4, 4, self.d, VerifyMethod.BATCHED))
        if isinstance(request, Generate):
            self.generations += 1
            if self.generations > 2:  # the warm-up is part of the setup
                self.clock[0] += self.pair / 2
            else:  # unless it is timed apart: `warm` a generation
                self.clock[0] += self.warm
            speculative = request.mode == "speculative"
            seconds = 1.0
            if speculative:
                seconds /= self.speed[self.d] * (1.3 if self.generations % 4 < 2 else 1.0)
            stats = DecodeStats(
                request.mode or "speculative",
                self.d,
                tokens=101,
                first_tokens=1,
                decode_seconds=seconds,
            )
            if speculative:
                stats.rounds, stats.drafted, stats.accepted = 50, 50 * self.d, 50
                stats.position_reached = [50] * self.d
                stats.position_accepted = [50] + [0] * (self.d - 1)
            return Done(tokens=(1,) * 101, text="", stopped_by=StopReason.MAX_TOKENS, stats=stats)
        return ResetDone()


def _scripted_sweep(bundle_copy: Copy, warm: float = 0.0) -> tuple[_TimedEngine, TuneStatus]:
    """Four settings of five rounds each on a made-up clock (setup 3 s, a pair 1.5 s,
    and `warm` a warm-up generation), run to the end; the engine keeps what the job
    showed along the way."""
    target, draft = bundle_copy("fast-target"), bundle_copy("fast-draft")
    plan = SweepPlan(
        draft_lengths=(1, 2, 3, 4),
        prompts=("a", "b", "c"),
        budget_seconds=600.0,
        max_repeats=5,
        min_run_seconds=0.0,
    )
    clock = [0.0]
    engine = _TimedEngine(clock, setup=3.0, pair=1.5, warm=warm)
    job = TuneJob(
        target,
        draft,
        plan,
        engine=lambda: nullcontext(engine),  # type: ignore[arg-type]
        clock=lambda: clock[0],
    )
    engine.job = job
    return engine, job.run()


def test_time_left_follows_the_plan_not_the_pair_count(bundle_copy: Copy) -> None:
    """Four settings of five rounds each (their intervals never narrow), then the two
    leaders measured again: the estimate holds to the real time left all the way, where
    pairs done over pairs planned said "54 s" at 8 % of a 175 s sweep and "25 s" at 61 %.
    While the first pass runs it foresees more leaders than this sweep ends with (two of
    its first two lead), so it may run ahead, never behind: a shortfall is what makes the
    time left rise."""
    engine, end = _scripted_sweep(bundle_copy)
    assert end.state == DONE and end.run is not None
    assert [bool(r.summary.get("remeasured")) for r in end.run.results] == [
        False,
        False,
        True,
        True,
    ]
    total = end.elapsed
    assert total == pytest.approx(6 * (3.0 + 15 * 1.5))
    checked = [(t, eta) for t, eta in engine.seen if eta is not None]
    assert len(checked) > 50
    for at, eta in checked:
        left = total - at
        assert -0.2 * left - 5.0 <= eta - left <= 0.3 * left + 5.0, (at, eta, left)


def test_the_bar_never_ends_before_the_work_and_agrees_with_the_time_left(
    bundle_copy: Copy,
) -> None:
    """Rounds added and leaders re-measured: the bar stood at 100 % beside "about 70 s
    left" (pairs done over a total the runner had not grown yet). The total is now the
    run rule's estimate, more than done until the end; the bar's share left and the time
    left say the same; the status line says when the leaders are measured again."""
    engine, end = _scripted_sweep(bundle_copy)
    assert end.state == DONE and end.fraction == 1.0
    assert end.pairs_done == end.pairs_total == 6 * 15
    seen = [s for s in engine.statuses if s.pairs_done]
    assert seen and all(s.pairs_done < s.pairs_total for s in seen)
    assert all(s.fraction < 1.0 for s in seen)
    for s in seen:
        if s.eta_seconds is not None:
            share_left = s.eta_seconds / (s.eta_seconds + s.elapsed)
            assert abs((1 - s.fraction) - share_left) <= 0.15, (s.fraction, s.eta_seconds)
    messages = [s.message for s in engine.statuses]
    assert messages[0] == "Measuring 4 settings…"
    again = "Measuring the 2 leading settings again, to tell them apart…"
    assert again in messages
    assert all(m == again for m in messages[messages.index(again) :])


def test_a_figure_once_the_first_setting_is_warm_and_the_bar_never_goes_back(
    bundle_copy: Copy,
) -> None:
    """The warm-up (a generation of each mode, 0.75 s each) foretells a pair: the time
    left is shown before any pair is done (a Quick sweep said "0 %… estimating…" for
    100 s); from then on the bar only moves forward and the time left never jumps up."""
    engine, end = _scripted_sweep(bundle_copy, warm=0.75)
    assert end.state == DONE and end.fraction == 1.0
    shown = [s for s in engine.statuses if s.eta_seconds is not None]
    assert shown and shown[0].pairs_done == 0 and shown[0].fraction > 0
    assert shown[0].elapsed <= 3.0 + 2 * 0.75  # the first setting's load and warm-up
    for before, after in itertools.pairwise(engine.statuses):
        assert after.fraction >= before.fraction
        if before.eta_seconds is not None and after.eta_seconds is not None:
            # The whole sweep's estimate rises by a tenth of itself at most.
            total = before.elapsed + before.eta_seconds
            assert after.elapsed + after.eta_seconds <= total * (1 + RISE_LIMIT) + 1e-9
    total = end.elapsed
    for s in shown:
        assert s.eta_seconds is not None
        left = total - s.elapsed
        assert -0.2 * left - 5.0 <= s.eta_seconds - left <= 0.3 * left + 5.0


def test_time_left_reads_in_one_short_line() -> None:
    assert time_left_text(None) == "estimating…"
    assert time_left_text(52.0) == "about 50 s left"
    assert time_left_text(175.0) == "about 3 min left"
    clock = SweepClock(2).started(0.0).paired(4.5).paired(6.0)
    assert seconds_left(SweepPlan(draft_lengths=(1, 2)), clock, 6.0) is not None
    assert Setting(3, 1, "low", "low", 2).label(("draft_length",)) == "draft length 3"
