"""Measuring a draft against its targets as a tracked job, for the window.

The same measuring as `draftdeck measure-pack` (pack_measure.py), on an engine worker of
its own, target after target; its status is an immutable snapshot (the target under way,
its run pairs, the targets done), so the dialog renders whatever snapshot it reads. The
job writes nothing: the measurements go to whoever writes the pack's files, and only
when it ends "done". Cancel stops it at once (the worker is killed; a request in flight
then fails, which the stop turns into "cancelled") and nothing it measured is kept.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from app.core.infra.job_queue import JobQueue, TrackedJob
from app.core.infra.words import Word
from app.core.measure.measure_lock import measuring
from app.core.packmaking.measured import TargetMeasurement
from app.engine.client.engine_client import EngineClient
from app.engine.client.pack_measure import (
    MeasureCancelled,
    MeasureOptions,
    measure_target,
    numbered_keys,
)
from app.engine.client.tune_job import open_engine

log = logging.getLogger("draftdeck.pack_measure")


class MeasureState(Word):
    QUEUED = "queued"
    MEASURING = "measuring"
    DONE = "done"
    CANCELLED = "cancelled"
    FAILED = "failed"


FINISHED = (MeasureState.DONE, MeasureState.CANCELLED, MeasureState.FAILED)
ALMOST = 0.99  # the most of a target shown done before it is


@dataclass(frozen=True)
class PackMeasureStatus:
    state: MeasureState = MeasureState.QUEUED
    current: int = 0  # the index of the target under way
    pairs_done: int = 0  # of the target under way
    pairs_total: int = 0  # expected in all (a Quick tune's grows or shrinks with its pace)
    measurements: tuple[TargetMeasurement, ...] = ()  # the targets done, in order
    error: str = ""  # once failed


class PackMeasureJob(TrackedJob[PackMeasureStatus]):
    finished_states = FINISHED

    def __init__(
        self,
        draft: Path,
        targets: list[Path],
        options: MeasureOptions,
        engine: Callable[[], AbstractContextManager[EngineClient]] = open_engine,
    ) -> None:
        self.draft, self.targets, self.options = draft, list(targets), options
        self._engine = engine
        self._stop = threading.Event()
        self._client_lock = threading.Lock()
        self._client: EngineClient | None = None
        super().__init__(PackMeasureStatus())

    def fraction(self, status: PackMeasureStatus) -> float:
        """The share of the whole measuring `status` (one of this job's) has done."""
        target = status.pairs_done / status.pairs_total if status.pairs_total else 0.0
        # A target's last pair is not its end (its verify agreement is measured then):
        # it counts whole only once measured, so the bar never reads 100 % too soon.
        done = len(status.measurements) + (0.0 if status.state in FINISHED else min(target, ALMOST))
        return min(1.0, done / max(len(self.targets), 1))

    # -- control (any thread) -------------------------------------------------------------

    def cancel(self) -> None:
        self._stop.set()
        with self._client_lock:
            client = self._client
        if client is not None:
            client.kill()  # a run in flight ends now, not after its pair

    pause = cancel  # a queue shutting down stops the measuring (it does not resume)

    def restart(self) -> None:
        self._stop.clear()
        with self._lock:
            self._status = PackMeasureStatus()

    # -- the work (the queue's thread) ----------------------------------------------------

    def run(self) -> PackMeasureStatus:
        """Every target. Never raises: the status says how it ended."""
        self._set(state=MeasureState.MEASURING)
        final: dict[str, object]
        try:
            with measuring("the window's Measure Pack"), self._engine() as client:
                with self._client_lock:
                    self._client = client
                try:
                    measured = self._measure(client)
                finally:
                    with self._client_lock:
                        self._client = None
        except Exception as exc:  # a killed worker's failure is the cancel's
            if self._stop.is_set():
                final = {"state": MeasureState.CANCELLED}
            else:
                log.exception("measuring %s failed", self.draft)
                final = {"state": MeasureState.FAILED, "error": str(exc)}
        else:
            # A cancel heard as the last target ended still holds: nothing is kept.
            state = MeasureState.CANCELLED if self._stop.is_set() else MeasureState.DONE
            final = {"state": state, "measurements": tuple(measured)}
        self._set(**final)
        return self.status()

    def _measure(self, client: EngineClient) -> list[TargetMeasurement]:
        measured: list[TargetMeasurement] = []
        for index, target in enumerate(self.targets):
            if self._stop.is_set():
                raise MeasureCancelled("stopped between targets")
            self._set(current=index, pairs_done=0, pairs_total=0)
            measured.append(
                measure_target(
                    client, self.draft, target, self.options, self._on_pair, self._stop.is_set
                )
            )
            self._set(measurements=tuple(measured))
        return numbered_keys(measured)

    def _on_pair(self, _target: str, done: int, total: int) -> None:
        self._set(pairs_done=done, pairs_total=total)


def measure_queue() -> JobQueue[PackMeasureJob]:
    """The lane a pack's measuring runs on: one at a time (each loads both models)."""
    return JobQueue(1, "pack-measure")
