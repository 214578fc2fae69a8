"""Reading a prompt into a model's cache: only what it does not hold yet, in chunks.

The first chunk is small (a big model reads ~100 tokens a second), each next one twice
as big while a chunk takes less than PREFILL_CHUNK_SECONDS, up to PREFILL_MAX_CHUNK, so
a long prompt reports progress and can be cancelled between two chunks.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from app.engine.worker.mnn_llm import Logits, MnnLlm

PREFILL_FIRST_CHUNK = 64
PREFILL_MAX_CHUNK = 2048
PREFILL_CHUNK_SECONDS = 0.25
OnPrefill = Callable[[str, int, int], None]  # model, tokens fed, tokens to feed


class PrefillCancelled(Exception):
    """A cancel arrived between two prefill chunks."""


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def prefill(
    model: MnnLlm,
    seq: list[int],
    name: str,
    linear: bool,
    on_prefill: OnPrefill | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> tuple[Logits, int]:
    """Make the cache hold all of `seq`; return the last logits row and how many were fed.

    Only tokens the cache does not already hold are fed, so the next turn of a chat
    prefills just its new tokens. At least the last token is always fed. A long feed
    goes in chunks (a linear-attention model's in one: its state is not chunked here),
    reporting after each as `name` and raising PrefillCancelled between two when asked.
    """
    keep = min(common_prefix(model.kv_tokens, seq), len(seq) - 1)
    if linear and keep < len(model.kv_tokens):
        model.reset()
        keep = 0
    model.truncate(keep)
    todo = seq[keep:]
    done, chunk = 0, len(todo) if linear else PREFILL_FIRST_CHUNK
    while True:
        part = todo[done : done + chunk]
        model.begin_prefill()
        began = time.perf_counter()
        rows = model.forward(part)
        chunked = done > 0
        done += len(part)
        if on_prefill is not None and (chunked or done < len(todo)):
            on_prefill(name, done, len(todo))  # the last report says it is all read
        if done >= len(todo):
            return rows[-1], len(todo)
        if cancelled is not None and cancelled():
            raise PrefillCancelled
        if time.perf_counter() - began < PREFILL_CHUNK_SECONDS:
            chunk = min(2 * chunk, PREFILL_MAX_CHUNK)
