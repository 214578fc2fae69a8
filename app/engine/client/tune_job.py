"""A tune sweep as a tracked job, like a download or a push.

It runs on its own single-lane JobQueue ("tune"): one sweep at a time, with its own
engine worker. Its status is an immutable snapshot (state, run pairs and settings done,
the results so far, then the finished TuneRun or the error), so the Tune page renders
from whatever snapshot it reads and never receives a call from the sweep's thread.
Cancelling keeps what was measured: the run ends "cancelled" with partial results.
It stops at once: the sweep's engine is told to stop the generation under way (within a
round) and whatever is sent after, and no further setting starts; the status says
"Cancelling…" from the moment it was asked.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from app.core.infra.errors import SpeculationCannotPay
from app.core.infra.job_queue import JobQueue, TrackedJob
from app.core.infra.words import Word
from app.core.measure.measure_lock import measuring
from app.core.measure.tune_eta import SweepProgress
from app.core.measure.tune_plan import SweepPlan
from app.core.measure.tune_results import SettingResult
from app.core.measure.tune_run import TuneRun
from app.engine.client.engine_client import EngineClient
from app.engine.client.tune_runner import run_sweep

log = logging.getLogger("draftdeck.tune")


class TuneState(Word):
    QUEUED = "queued"
    MEASURING = "measuring"
    DONE = "done"
    CANCELLED = "cancelled"
    REFUSED = "refused"  # the pair cannot gain and was not forced
    FAILED = "failed"


# Module names for the states, as the pages and tests import them.
QUEUED, MEASURING, DONE = TuneState.QUEUED, TuneState.MEASURING, TuneState.DONE
CANCELLED, REFUSED, FAILED = TuneState.CANCELLED, TuneState.REFUSED, TuneState.FAILED
FINISHED = (DONE, CANCELLED, REFUSED, FAILED)
CANCELLING = "Cancelling…"


@dataclass(frozen=True)
class TuneStatus:
    state: TuneState = QUEUED
    settings_total: int = 0
    pairs_done: int = 0
    pairs_total: int = 0  # expected in all as the run rule makes it (tune_eta)
    results: tuple[SettingResult, ...] = ()
    run: TuneRun | None = None  # once done or cancelled
    error: str = ""  # once refused or failed
    elapsed: float = 0.0  # seconds from the start to this snapshot
    message: str = ""
    eta_seconds: float | None = None  # time left at this snapshot (None: not known yet)
    share: float | None = None  # the share done as shown (tune_eta), never going back
    cancelling: bool = False  # a cancel was asked; the sweep is stopping

    @property
    def settings_done(self) -> int:
        return len(self.results)

    @property
    def fraction(self) -> float:
        """The share done as shown (before a pace is known, pairs done over pairs
        expected): below 1 until the sweep has ended."""
        return SweepProgress(self.pairs_done, self.pairs_total, None, self.share).fraction


def open_engine() -> AbstractContextManager[EngineClient]:
    return EngineClient()


class TuneJob(TrackedJob[TuneStatus]):
    finished_states = FINISHED

    def __init__(
        self,
        target: Path,
        draft: Path,
        plan: SweepPlan,
        force: bool = False,
        engine: Callable[[], AbstractContextManager[EngineClient]] = open_engine,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.target, self.draft, self.plan, self.force = target, draft, plan, force
        self._engine = engine
        self._clock = clock
        self._started = 0.0
        self._stop = threading.Event()
        # The sweep's engine while it runs; the lock keeps a cancel from interrupting it
        # after the sweep has let it go (an engine the caller lends outlives the job).
        self._client: EngineClient | None = None
        self._client_lock = threading.Lock()
        super().__init__(self._fresh_status(), clock)

    def _fresh_status(self) -> TuneStatus:
        settings = len(self.plan.settings())
        return TuneStatus(
            settings_total=settings,
            pairs_total=settings * self.plan.pairs_per_setting,
            message=f"Measuring {settings} settings…",
        )

    # -- control (any thread) -----------------------------------------------------------

    def cancel(self) -> None:
        """Stop now: the engine's generation under way ends within a round and no
        further setting starts; the pairs measured whole are kept."""
        with self._client_lock:
            if self._stop.is_set():
                return  # asked already (a watcher of the status may ask again)
            self._stop.set()
            if self._client is not None:
                self._client.interrupt()
        # Said at once, unless it has ended meanwhile (its verdict stays).
        self._set_if((QUEUED, MEASURING), cancelling=True, message=CANCELLING)

    pause = cancel  # a queue shutting down stops the sweep (a sweep does not resume)

    def restart(self) -> None:
        self._stop.clear()
        with self._lock:
            self._status = self._fresh_status()

    # -- the work (the queue's thread) ------------------------------------------------------

    def run(self) -> TuneStatus:
        """The sweep. Never raises: the status says how it ended."""
        self._started = self._clock()
        self._set(state=MEASURING)
        final: dict[str, object]
        try:
            with measuring("the window's Tune page"), self._engine() as client:
                with self._client_lock:  # cancel() interrupts it, or run_sweep sees the flag
                    self._client = client
                run = run_sweep(
                    client,
                    self.target,
                    self.draft,
                    self.plan,
                    self._stop.is_set,
                    self._on_result,
                    self._on_progress,
                    self.force,
                    on_stage=self._on_stage,
                    clock=self._clock,
                )
        except SpeculationCannotPay as exc:
            final = {"state": REFUSED, "error": exc.message}
        except Exception as exc:  # told in the status: a sweep stuck "measuring" is worse
            log.exception("tune sweep of %s + %s failed", self.target, self.draft)
            final = {"state": FAILED, "error": str(exc)}
        else:
            final = {
                "state": CANCELLED if run.cancelled else DONE,
                "run": run,
                "results": tuple(run.results),
                "message": run.verdict(),
            }
        finally:
            with self._client_lock:
                if self._client is not None:
                    self._client.resume()
                self._client = None
        # One update, so watchers see the final state once, complete.
        self._set(elapsed=self._clock() - self._started, eta_seconds=0.0, **final)
        return self.status()

    def _on_result(self, result: SettingResult) -> None:
        self._set(results=(*self.status().results, result), elapsed=self._elapsed())

    def _on_stage(self, remeasures: int | None) -> None:
        if remeasures is not None and not self._stop.is_set():
            # Said in the status line: the plan grew by the re-measures.
            self._set(
                message=f"Measuring the {remeasures} leading settings again, to tell them apart…"
            )

    def _on_progress(self, progress: SweepProgress) -> None:
        self._set(
            pairs_done=progress.done,
            pairs_total=progress.total,
            elapsed=self._elapsed(),
            eta_seconds=progress.seconds_left,
            share=progress.share,
        )

    def _elapsed(self) -> float:
        return self._clock() - self._started


def tune_queue() -> JobQueue[TuneJob]:
    """The lane sweeps run on: one at a time (each loads both models)."""
    return JobQueue(1, "tune")
