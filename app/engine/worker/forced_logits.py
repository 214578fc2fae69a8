"""Teacher-forced logits of the loaded target, written to .npy files (export checks).

Each sequence is fed one token a step from an empty cache, as decoding feeds it, so row
i holds the logits after token i: what the pack predicts for token i+1. One token a
step, not the d+1-row verify: under `memory: low` a verify differs from single steps
(DESIGN.md), and decoding is what the check is about. The cache is emptied afterwards.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from app.core.infra.errors import EngineError
from app.engine.protocol import FailureCode, ForcedLogits, LogitsWritten
from app.engine.worker.mnn_llm import MnnLlm
from app.engine.worker.session import Session


def forced_logits(
    session: Session, request: ForcedLogits, cancelled: Callable[[], bool]
) -> LogitsWritten:
    """Answer the request with the session's target; its conversation is forgotten after
    (the cache no longer holds it)."""
    if session.target is None:
        raise EngineError("no model is loaded", "not_loaded")
    try:
        return write_forced_logits(
            session.target, request.sequences, Path(request.out_dir), cancelled
        )
    finally:
        session.reset()


def write_forced_logits(
    target: MnnLlm,
    sequences: Sequence[Sequence[int]],
    out_dir: Path,
    cancelled: Callable[[], bool] = lambda: False,
) -> LogitsWritten:
    if not out_dir.is_dir():
        raise EngineError(f"{out_dir}: no such folder for the logits", FailureCode.BAD_REQUEST)
    started = time.perf_counter()
    files: list[str] = []
    try:
        for n, ids in enumerate(sequences):
            target.reset()
            target.begin_prefill()
            rows = []
            for token in ids:
                if cancelled():
                    raise EngineError("the teacher-forced run was cancelled", FailureCode.CANCELLED)
                rows.append(np.array(target.forward([token])[-1], dtype=np.float32))
            path = out_dir / f"{n}.pack.npy"
            np.save(path, np.stack(rows) if rows else np.zeros((0, 0), np.float32))
            files.append(str(path))
    finally:
        target.reset()
    return LogitsWritten(tuple(files), time.perf_counter() - started)
