"""Can this MNN roll a linear-attention state back? A few tokens on the loaded target.

Speculation needs to drop rejected draft tokens from the target. A KV cache drops them
with `erase_history`; a linear-attention layer (Qwen3.5) keeps one running state that
every forward updates in place, and MNN 3.6.1's `erase_history` does not take rejected
tokens out of it (a partial erase restores a prefix-cache snapshot or zeroes it). There
the only exact scheme is a reset and a full re-prefill, or verifying one token at a
time, and neither can beat plain decoding.

This probe asks the MNN at hand instead of trusting a version number, so a release
that can roll such state back gets used by itself. From a prefix reached by single
steps it verifies draft A (d + 1 rows), erases all of it, verifies draft B from the
same prefix, erases all but B's first token, then steps the next token twice (erasing
the first step in between). An MNN that restores the state exactly gives:

- B's first row equal to A's first row (both d+1-row verifies of the same token after
  the same prefix; MNN quantizes activations per row, so even `memory: "low"` gives the
  same row bit for bit when the state came back),
- the step after the partial erase equal to plain stepping (a multi-row forward may
  drift from one-token steps when `memory: "low"` quantizes activations: A's first row
  against a plain step measures that drift, and twice it is allowed, within a cap),
- the repeated step equal to the first (the state before it came from one step).

MNN 3.6.1 misses each by about the size of the logits themselves. The target must be
loaded with a verify module (`verify_length` > 1) so that multi-row forwards return
every row. The probe leaves the target's cache empty.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from app.engine.worker.mnn_llm import Logits, MnnLlm

log = logging.getLogger("draftdeck.engine.probe")

PROBE_TEXT = (
    "The lighthouse keeper counted the waves until morning, wrote the weather in his "
    "book, trimmed the lamp, and walked down the stairs to watch the boats come home."
)
PREFIX = 4  # prompt tokens before the single steps
DRIFT_ALLOWANCE = 2.0  # times the verify's own drift from one-token steps
RELATIVE_TOLERANCE = 1e-3  # of the largest logit: what counts as equal
# However noisy the recipe, never allow more than this many tolerances (10 % of the
# largest logit): a false "exact" would verify linear state in one pass and give wrong
# output; a false "no" only costs speed. Measured on full-attention fixtures at memory
# low: drift about 37 tolerances, the step after an erase 33; MNN 3.6.1's linear
# attention misses by 1,100-1,500.
MAX_ALLOWANCE = 100.0


@dataclass(frozen=True)
class ProbeResult:
    exact: bool
    drift: float  # a verify row against the same one-token step, max |difference|
    errors: tuple[float, float, float]  # B's first row, step after erase, repeated step
    allowed: float  # the largest error of the step after the erase that counts as exact
    tolerance: float  # the largest error of the first row and repeated step (rounding)

    def to_json(self) -> dict[str, object]:
        return {
            "exact": self.exact,
            "drift": self.drift,
            "errors": list(self.errors),
            "allowed": self.allowed,
            "tolerance": self.tolerance,
        }


def _tokens(model: MnnLlm, draft_length: int) -> list[int]:
    needed = PREFIX + 3 + 2 * draft_length
    ids = model.encode(PROBE_TEXT) or list(range(1, needed + 1))
    while len(ids) < needed:
        ids = ids + ids
    return ids


def _gap(a: Logits, b: Logits) -> float:
    return float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))))


def probe_linear_rollback(model: MnnLlm, draft_length: int) -> ProbeResult:
    """Whether erase_history restores this model's state exactly (see the module text)."""
    ids = _tokens(model, draft_length)
    prefix, (a, b, c) = ids[:PREFIX], ids[PREFIX : PREFIX + 3]
    rest = ids[PREFIX + 3 :]
    draft_a = rest[:draft_length]
    draft_b = rest[draft_length : 2 * draft_length][::-1]
    if draft_b == draft_a:
        draft_b = draft_b[1:] + draft_b[:1] if draft_length > 1 else [c]

    def start() -> int:
        model.reset()
        model.begin_prefill()
        model.forward(prefix)
        model.forward([a])  # past the post-prefill snapshot MNN restores on erase
        return len(model.kv_tokens)

    try:
        start()
        # Logits are copied: pymnn hands out views of buffers the next forward reuses.
        plain_b = model.forward([b])[-1].copy()
        plain_c = model.forward([c])[-1].copy()

        keep = start()
        rows_a = model.forward([b, *draft_a]).copy()
        model.truncate(keep)
        rows_b = model.forward([b, *draft_b]).copy()
        model.truncate(keep + 1)  # keep b: a round that accepted no draft token
        step_c = model.forward([c])[-1].copy()
        model.truncate(keep + 1)
        again_c = model.forward([c])[-1].copy()
    finally:
        model.reset()

    drift = _gap(rows_a[0], plain_b)
    tolerance = RELATIVE_TOLERANCE * max(1.0, float(np.max(np.abs(plain_c))))
    allowed = min(DRIFT_ALLOWANCE * drift + tolerance, MAX_ALLOWANCE * tolerance)
    errors = (_gap(rows_b[0], rows_a[0]), _gap(step_c, plain_c), _gap(again_c, step_c))
    exact = errors[0] <= tolerance and errors[1] <= allowed and errors[2] <= tolerance
    result = ProbeResult(exact, drift, errors, allowed, tolerance)
    log.info("linear-attention rollback probe on %s: %s", model.bundle.name, result.to_json())
    return result
