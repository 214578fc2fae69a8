"""The export check's comparison, verdict, record and card section, on logits made here
(numpy only: the torch and MNN sides are tested in test_verify_export.py)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from app.core.pack.bundle import read_bundle
from app.core.pack.export_check import agreement_text
from app.core.pack.files import EXPORT_CHECK
from app.core.packmaking.card import CardFacts, card_text
from app.core.packmaking.verify_compare import TIE_GAP, TextAgreement, compare_text
from app.core.packmaking.verify_result import (
    FAITHFUL_FLOOR,
    ExportCheck,
    card_section,
    save_check,
)
from app.core.packmaking.verify_source import quant_spec
from tests.helpers.export_checks import check_of
from tests.helpers.paths import FIXTURES

FIXTURE = FIXTURES / "qwen3-draft-noisy"
VOCAB = 50


def decode(ids: Sequence[int]) -> str:
    return "".join(f"<{i}>" for i in ids)


def decisive(n: int, seed: int = 1) -> np.ndarray:
    """Logits whose top-1 leads by 1.0 (never a tie)."""
    rng = np.random.default_rng(seed)
    rows = rng.normal(0, 0.1, (n, VOCAB)).astype(np.float32)
    rows[np.arange(n), rng.integers(0, VOCAB, n)] += 1.0
    return rows


def test_a_pack_computing_the_quantized_source_agrees_everywhere() -> None:
    source, quantized = decisive(20, 1), decisive(20, 2)
    pack = quantized + np.float32(1e-4)
    t = compare_text("prose", list(range(20)), source, quantized, pack, decode)
    assert (t.faithful, t.ties, t.non_finite, t.divergence) == (1.0, 0, 0, None)
    assert t.max_abs_diff == pytest.approx(1e-4, rel=1e-2)
    # Quantization cost is against the source as it is: other logits, other top-1.
    assert t.cost < 0.5
    assert check_of((t,)).verified


def test_the_first_divergence_names_the_position_and_both_tokens() -> None:
    quantized = decisive(12)
    pack = quantized.copy()
    expected = int(np.argmax(quantized[5]))
    got = (expected + 1) % VOCAB
    pack[5, got] = quantized[5].max() + 3.0
    pack[9, (int(np.argmax(quantized[9])) + 1) % VOCAB] += 9.0
    ids = list(range(100, 112))
    t = compare_text("code", ids, quantized, quantized, pack, decode)
    assert t.faithful == pytest.approx(10 / 12)
    assert t.divergence is not None
    assert (t.divergence.position, t.divergence.expected_id, t.divergence.got_id) == (
        5,
        expected,
        got,
    )
    assert t.divergence.context == decode(ids[0:6])
    check = check_of((t,))
    assert not check.verified
    assert any("code: first differs after token 5" in r for r in check.reasons)
    assert any(f"at least {FAITHFUL_FLOOR}" in r for r in check.reasons)


def test_logits_far_from_the_source_fail_even_with_the_same_ranking() -> None:
    quantized = decisive(10)
    t = compare_text(
        "prose", list(range(10)), quantized, quantized, quantized * np.float32(1.5), decode
    )
    assert t.faithful == 1.0
    check = check_of((t,))
    assert not check.verified
    assert len(check.reasons) == 1 and "its weights are not the source's" in check.reasons[0]


def test_near_ties_are_left_out_and_counted() -> None:
    quantized = decisive(10)
    top = np.argmax(quantized, axis=-1)
    runner_up = (top + 1) % VOCAB
    quantized[3, runner_up[3]] = quantized[3, top[3]] - TIE_GAP / 10  # a coin toss
    pack = quantized.copy()
    pack[3, runner_up[3]] = quantized[3, top[3]] + TIE_GAP / 10  # flipped
    t = compare_text("chat", list(range(10)), quantized, quantized, pack, decode)
    assert (t.ties, t.faithful, t.divergence) == (1, 1.0, None)


def test_non_finite_logits_fail_with_the_reason() -> None:
    quantized = decisive(8)
    pack = quantized.copy()
    pack[:] = np.finfo(np.float32).max  # the block-size fault at memory normal
    t = compare_text("prose", list(range(8)), quantized, quantized, pack, decode)
    assert (t.non_finite, t.faithful, t.max_abs_diff) == (8, 0.0, float("inf"))
    check = check_of((t,))
    assert not check.verified
    assert "not finite (or near FLT_MAX) at 8 of 8 positions" in check.reasons[0]
    assert check.to_json()["runs"][0]["max_abs_logit_diff"] is None  # JSON has no inf


def just_below_the_floor() -> ExportCheck:
    """Agreement 0.9897: rounded to three decimals it would read 0.990, the floor."""
    t = TextAgreement("prose", 2000, 0, 0.9897, 0.9897, 0.0, 1.0, 0, None)
    return check_of((t,))


def test_an_agreement_below_the_floor_never_reads_as_the_floor() -> None:
    check = just_below_the_floor()
    assert not check.verified
    assert "export faithful 0.989, quantization cost 0.989" in check.summary()[1]
    assert "source is 0.989 at memory normal (at least 0.99 expected)" in check.reasons[0]
    assert [agreement_text(v) for v in (0.99, 1.0, 0.0, 0.12345)] == [
        "0.990",
        "1.000",
        "0.000",
        "0.123",
    ]


def test_the_record_beside_the_pack_goes_into_the_card(tmp_path: Path) -> None:
    t = compare_text("prose", [1, 2], decisive(2), decisive(2), decisive(2), decode)
    pack = tmp_path / "pack"
    pack.mkdir()
    assert card_section(pack) is None
    saved = save_check(pack, check_of((t,)))
    assert saved == pack / EXPORT_CHECK
    data = json.loads(saved.read_text(encoding="utf-8"))
    assert (data["verdict"], data["runs"][0]["faithful"]) == ("export verified", 1.0)
    section = card_section(pack)
    assert section is not None and "- Export verified (4-bit)" in section
    assert "export faithful 1.000" in section


def test_the_card_of_a_checked_pack_shows_the_check(tmp_path: Path) -> None:
    import shutil

    pack = tmp_path / "qwen3-draft-noisy"
    shutil.copytree(FIXTURE, pack)
    info = read_bundle(pack)
    assert "Not run:" in card_text(info, {}, {}, CardFacts())
    t = compare_text("prose", [1], decisive(1), decisive(1), decisive(1), decode)
    save_check(pack, check_of((t,)))
    text = card_text(info, {}, {}, CardFacts())
    assert "Not run:" not in text and "Export verified (4-bit)" in text


def test_the_pack_says_its_quantization() -> None:
    spec = quant_spec(read_bundle(FIXTURE))
    assert (spec.bits, spec.block, spec.embedding, spec.lm_bits) == (4, 128, "tied", 4)
