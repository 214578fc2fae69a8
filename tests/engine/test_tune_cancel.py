"""Cancel stops a real sweep at once: the first Cancel once showed no effect for 30 s,
since the sweep looked at it only between run pairs, each of many generations.

Told in events, not seconds: what the engine was asked after the cancel, and how each
generation under way ended.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from app.core.measure.tune_plan import SweepPlan, plan_for, recipe_defaults
from app.core.measure.words import StopReason
from app.engine.client.engine_client import EngineClient, OnRounds
from app.engine.client.tune_job import CANCELLED, CANCELLING, TuneJob, tune_queue
from app.engine.protocol import Done, Event, Generate, Request, Rounds

Copy = Callable[..., Path]


class _Told(EngineClient):
    """The engine worker, keeping what it was asked and how each request ended; when a
    generation streams its first tokens, `when_streaming` is called (and forgotten)."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[tuple[str, str, object]] = []  # (sent/ended, kind, how it ended)
        self._kinds: dict[int, str] = {}
        self.when_streaming: Callable[[], None] | None = None

    def send(self, request: Request[Any]) -> int:
        request_id = super().send(request)
        self._kinds[request_id] = type(request).__name__
        self.log.append(("sent", type(request).__name__, None))
        return request_id

    def wait(
        self, request_id: int, on_rounds: OnRounds | None = None, timeout: float | None = None
    ) -> Event:
        kind = self._kinds[request_id]

        def heard(rounds: Rounds) -> None:
            if kind == Generate.__name__ and rounds.tokens and self.when_streaming is not None:
                said, self.when_streaming = self.when_streaming, None
                said()
            if on_rounds is not None:
                on_rounds(rounds)

        try:
            event = super().wait(request_id, heard, timeout)
        except Exception as exc:
            self.log.append(("ended", kind, type(exc).__name__))
            raise
        self.log.append(("ended", kind, event.stopped_by if isinstance(event, Done) else None))
        return event


@contextmanager
def _engine(told: _Told) -> Iterator[EngineClient]:
    with told:
        yield told


def test_the_first_cancel_stops_a_real_sweep_mid_generation(bundle_copy: Copy) -> None:
    target = bundle_copy("fast-target", desktop=True)
    draft = bundle_copy("fast-draft", desktop=True)
    # Eight draft lengths and adaptive drafting: nine settings, long generations (one
    # streams in many batches), budgets that would keep each setting going.
    plan: SweepPlan = plan_for("quick", recipe_defaults(target, draft))
    plan = SweepPlan(
        draft_lengths=tuple(range(1, 9)),
        draft_threads=plan.draft_threads,
        draft_precisions=plan.draft_precisions,
        draft_memories=plan.draft_memories,
        target_threads=plan.target_threads,
        prompts=("Tell me about rivers.",),
        tokens=600,
        min_run_seconds=0.0,
        budget_seconds=600.0,
        adaptive=True,
    )
    told = _Told()
    job = TuneJob(target, draft, plan, engine=lambda: _engine(told))
    at_cancel: list[tuple[int, bool, str]] = []

    def cancel_once_measuring() -> None:
        generations = [kind for event, kind, _ in told.log if event == "sent"].count("Generate")
        if generations > 2:  # past the warm-up (a generation of each mode): a pair's
            job.cancel()
            status = job.status()  # said at once, before the sweep has stopped
            at_cancel.append((len(told.log), status.cancelling, status.message))
        else:
            told.when_streaming = cancel_once_measuring

    told.when_streaming = cancel_once_measuring
    queue = tune_queue()
    try:
        queue.submit(job)
        queue.wait(job, timeout=600)
    finally:
        queue.shutdown()
    end = job.status()
    assert end.state == CANCELLED and end.run is not None and end.run.cancelled
    ((logged, cancelling, message),) = at_cancel
    assert cancelling and message == CANCELLING
    # Stopped in the first setting's first pair: nothing whole to keep.
    assert end.results == () and end.settings_total == 9
    after = told.log[logged:]
    # Nothing more was started: no load of another setting, no verify check; and no
    # generation ran to its end after the cancel (the one under way was cut short).
    assert {kind for event, kind, _ in after if event == "sent"} <= {"Reset", "Generate"}
    ended = [how for event, kind, how in after if event == "ended" and kind == "Generate"]
    assert ended and all(how == StopReason.CANCELLED for how in ended)
