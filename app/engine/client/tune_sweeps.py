"""Tune sweeps as one service for the window and `draftdeck tune`.

The window queues a sweep as a TuneJob on the service's single lane (one sweep at a
time: each loads both models) and renders the job's status; the command line runs the
same sweep in its own thread, so Ctrl+C and errors reach it as raised. Both save a
finished run where the Tune page's past runs look for it.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

from app.core.infra.job_queue import JobQueue
from app.core.measure.tune_eta import SweepProgress
from app.core.measure.tune_plan import SweepPlan
from app.core.measure.tune_run import TuneRun, new_run_path
from app.engine.client.engine_client import EngineClient
from app.engine.client.tune_job import TuneJob, open_engine, tune_queue
from app.engine.client.tune_runner import run_sweep


class TuneSweeps:
    def __init__(
        self, engine: Callable[[], AbstractContextManager[EngineClient]] = open_engine
    ) -> None:
        self._engine = engine
        self.queue: JobQueue[TuneJob] = tune_queue()
        self.job: TuneJob | None = None  # the last sweep started on the queue

    def running(self) -> bool:
        return self.job is not None and not self.job.is_finished()

    def start(self, target: Path, draft: Path, plan: SweepPlan, force: bool = False) -> TuneJob:
        """Queue a sweep; while one is under way, that one is returned instead."""
        if self.job is not None and self.running():
            return self.job
        self.queue.forget(list(self.queue.jobs))  # only finished ones: one sweep at a time
        self.job = TuneJob(target, draft, plan, force, engine=self._engine)
        self.queue.submit(self.job)
        return self.job

    def sweep(
        self,
        target: Path,
        draft: Path,
        plan: SweepPlan,
        force: bool = False,
        on_progress: Callable[[SweepProgress], None] | None = None,
    ) -> TuneRun:
        """The sweep in the calling thread (blocks; raises SpeculationCannotPay for a pair
        that cannot gain unless `force`)."""
        with self._engine() as client:
            return run_sweep(client, target, draft, plan, on_progress=on_progress, force=force)

    @staticmethod
    def save(run: TuneRun, path: Path | None = None) -> Path:
        """Save a finished run (by default among the draft's past runs); its path."""
        saved = path or new_run_path(Path(run.draft))
        run.save(saved)
        return saved

    def shutdown(self, timeout: float | None = None) -> None:
        """Stop a running sweep (its engine worker closes when the sweep returns)."""
        self.queue.shutdown(timeout)
