"""A sweep whose machine slows down between a leader's first pass and its re-measure
(a scripted engine, no clock involved): the re-measure runs on to its round limit
instead of stopping at its first narrow interval, and the run says the machine was
disturbed instead of showing two 95 % intervals."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.core.measure.metrics import DecodeStats
from app.core.measure.tune_plan import SweepPlan
from app.core.measure.verify_agreement import VerifyAgreement
from app.core.measure.words import StopReason, VerifyMethod
from app.engine.client.tune_runner import run_sweep
from app.engine.protocol import (
    AgreementMeasured,
    Done,
    Generate,
    Load,
    MeasureAgreement,
    Request,
    ResetDone,
)
from tests.helpers.engine_events import ScriptedClient, loaded_event

Copy = Callable[..., Path]


class _SlowingEngine(ScriptedClient):
    """Plain decoding 100 tokens in 1 s; speculative at `speed[d]`, or once a draft
    length is loaded again (its re-measure) at `again[d]`: another machine's speed."""

    def __init__(self, speed: dict[int, float], again: dict[int, float]) -> None:
        self.speed, self.again = speed, again
        self.d = 1
        self.loads: list[int] = []

    def run(self, request: Request[Any], *_: Any, **__: Any) -> object:
        if isinstance(request, Load):
            self.d = request.draft_length or 1
            self.loads.append(self.d)
            return loaded_event(draft_length=self.d)
        if isinstance(request, MeasureAgreement):
            return AgreementMeasured(VerifyAgreement(1.0, 4, 4, self.d, VerifyMethod.BATCHED))
        if isinstance(request, Generate):
            mode = request.mode or "speculative"
            seconds = 1.0
            if mode == "speculative":
                table = self.again if self.loads.count(self.d) > 1 else self.speed
                seconds /= table[self.d]
            stats = DecodeStats(mode, self.d, tokens=101, first_tokens=1, decode_seconds=seconds)
            if mode == "speculative":
                stats.rounds, stats.drafted, stats.accepted = 50, 50 * self.d, 50
                stats.position_reached = [50] * self.d
                stats.position_accepted = [50] + [0] * (self.d - 1)
            return Done(tokens=(1,) * 101, text="", stopped_by=StopReason.MAX_TOKENS, stats=stats)
        return ResetDone()


PLAN = SweepPlan(draft_lengths=(2, 3), prompts=("a", "b", "c"), max_repeats=4)


def test_a_re_measure_that_disagrees_is_said_and_measured_longer(bundle_copy: Copy) -> None:
    target, draft = bundle_copy("fast-target"), bundle_copy("fast-draft")
    # Both lead at 1.5x in the first pass; measured again, d=3 runs at 1.2x.
    engine = _SlowingEngine({2: 1.5, 3: 1.5}, {2: 1.5, 3: 1.2})
    run = run_sweep(engine, target, draft, PLAN)  # type: ignore[arg-type]
    assert engine.loads == [2, 3, 2, 3]
    steady, slowed = run.results
    # The steady leader agreed with its first pass: it stopped at its narrow interval.
    assert steady.summary["repeats"] == PLAN.min_rounds and "disturbed" not in steady.summary
    # The other kept measuring to the round limit, and says why its interval is no 95 %.
    assert slowed.summary["repeats"] == PLAN.max_repeats
    said = slowed.summary["disturbed"]
    assert said.startswith("the machine was disturbed while measuring: the first pass gave 1.50")
    assert "measured again 1.20" in said
    assert slowed.interval_text().endswith("while the machine was disturbed (not 95 %)")
    assert run.to_json()["results"][1]["disturbed"] == said
