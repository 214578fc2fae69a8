"""The bytes of weights a pack's model reads per token, as its files store them (bits,
blocks and scales included): what a decoding step costs where memory bandwidth bounds
it, as on phones. The phone forecast scales recorded results by it
(measure/phone_profiles.py); the Pair page's and `check`'s cost estimate of a draft
step weighs the two models by it (draft_cost.py)."""

from __future__ import annotations

from pathlib import Path

from app.core.infra.errors import FileError
from app.core.infra.jsonfile import read_json_object
from app.core.pack.files import CONFIG, LLM_WEIGHT


def bytes_per_token(pack: Path) -> int | None:
    """The bytes of weights the pack's model reads per token: its weight file (the
    quantized layers and the lm_head) and a quantized embedding kept apart (it is the
    lm_head when tied); not `embeddings_bf16.bin`, of which one row is read a token.
    None when the weight file is not there."""
    pack = Path(pack)
    name = LLM_WEIGHT
    try:
        named = read_json_object(pack / CONFIG).get("llm_weight")
    except FileError:
        named = None  # an unreadable config: MNN's default name, as the pack reader says
    # Only a file of the pack's own folder is sized: a hostile name cannot point out.
    if isinstance(named, str) and named and Path(named).name == named:
        name = named
    try:
        size = (pack / name).stat().st_size
    except OSError:
        return None
    for extra in pack.glob("embeddings_int*.bin"):
        try:
            size += extra.stat().st_size
        except OSError:
            continue
    return size or None
