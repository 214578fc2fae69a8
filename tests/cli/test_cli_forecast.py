"""`draftdeck forecast` and `draftdeck phone-result` as a user runs them, against real MNN
on the fixture bundles."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli

CARD = "RedMagic SM8850 (20k draft card, published)"


@pytest.fixture
def identical_pair(bundle_copy: Callable[..., Path]) -> tuple[Path, Path]:
    """The Qwen3 fixture target and its identical draft at memory "normal" (exact)."""
    return bundle_copy("qwen3-target", desktop=True), bundle_copy(
        "qwen3-draft-identical", desktop=True
    )


def test_an_identical_draft_forecasts_d_plus_one_tokens_a_round(
    identical_pair: tuple[Path, Path],
) -> None:
    target, draft = identical_pair
    pair = ["--target", str(target), "--draft", str(draft)]
    run = run_cli("forecast", *pair, "--phone-result", "10", "15", "3", "--tokens", "48", "--json")
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    acceptance = out["acceptance"]
    assert acceptance["measured_now"] and acceptance["exact"]
    assert acceptance["by_position"] == [1.0] * 6
    assert acceptance["reached"][0] > 0 and acceptance["tokens"] > 0
    # Ground truth: T = 1/10 s; d = 3 yields 4 tokens in 4/15 s, so each drafted token
    # costs k = (4/15 - 1/10) / 3, and d tokens drafted yield d + 1 in 1/10 + d k.
    k = (4 / 15 - 0.1) / 3
    for row in out["forecast"]:
        d = row["draft_length"]
        assert row["plain_tok_s"] == pytest.approx(10.0)
        assert row["spec_tok_s"] == pytest.approx((d + 1) / (0.1 + d * k))
        assert row["uplift"] == pytest.approx(row["spec_tok_s"] / 10.0 - 1)
        assert row["uplift_low"] <= row["uplift"] <= row["uplift_high"]
    assert out["forecast"][2]["uplift"] == pytest.approx(0.5)
    best = max(out["forecast"], key=lambda r: r["uplift"])["draft_length"]
    assert out["best_draft_length"] == best == 6
    assert out["assumptions"]

    # The counts are stored: a second forecast measures nothing and gives the same.
    again = run_cli("forecast", *pair, "--device", CARD, "--json")
    assert again.returncode == 0, again.stderr
    stored = json.loads(again.stdout)
    assert not stored["acceptance"]["measured_now"]
    assert stored["acceptance"]["reached"] == acceptance["reached"]
    assert stored["device"] == CARD

    text = run_cli("forecast", *pair, "--device", CARD)
    assert text.returncode == 0, text.stderr
    assert "Best on the phone: d = " in text.stdout
    assert "Assumptions:" in text.stdout and "0.7178" in text.stdout


def test_measure_again_on_the_fast_pair(fixture_bundle: Callable[[str], Path]) -> None:
    pair = ["--target", str(fixture_bundle("fast-target")), "--draft"]
    pair.append(str(fixture_bundle("fast-draft")))
    args = ["forecast", *pair, "--device", CARD, "--tokens", "32", "--json"]
    first = json.loads(run_cli(*args, check=True).stdout)
    assert first["acceptance"]["measured_now"]
    assert not first["acceptance"]["exact"]  # the pack's recipe: memory "low"
    assert any('memory "low"' in w for w in first["assumptions"])
    again = json.loads(run_cli(*args, "--measure", "--prompt", "Count to ten.").stdout)
    assert again["acceptance"]["measured_now"]
    # Measured again from nothing on one prompt: fewer rounds than four prompts gave.
    assert again["acceptance"]["reached"][0] < first["acceptance"]["reached"][0]


def test_forecast_errors_name_the_problem(tmp_path: Path) -> None:
    folder = tmp_path / "pack"
    folder.mkdir()
    missing = run_cli("forecast", "--target", str(tmp_path / "nope"), "--draft", str(folder))
    assert missing.returncode == 1 and "nope" in missing.stderr
    assert "does not exist" in missing.stderr
    pair = ["--target", str(folder), "--draft", str(folder)]
    nophone = run_cli("forecast", *pair)
    assert nophone.returncode == 2 and "--device" in nophone.stderr and CARD in nophone.stderr
    unknown = run_cli("forecast", *pair, "--device", "Nokia 3310")
    assert unknown.returncode == 2 and "Nokia 3310" in unknown.stderr
    bad = run_cli("forecast", *pair, "--phone-result", "10", "fast", "3")
    assert bad.returncode == 2 and "fast" in bad.stderr


def test_phone_results_are_recorded_listed_and_deleted(tmp_path: Path) -> None:
    target, draft = tmp_path / "target", tmp_path / "draft"
    for pack in (target, draft):
        pack.mkdir()
        (pack / "llm.mnn.weight").write_bytes(b"w" * 100)
    pair = ["--target", str(target), "--draft", str(draft)]
    add = run_cli("phone-result", "add", "--phone", "SM-S948B", *pair, "11.45", "15.98", "3")
    assert add.returncode == 0, add.stderr
    assert "no forecast before it" in add.stdout
    listed = json.loads(run_cli("phone-result", "list", "--json", check=True).stdout)
    assert len(listed) == 1 and listed[0]["phone"] == "SM-S948B"
    assert listed[0]["uplift"] == pytest.approx(15.98 / 11.45 - 1)
    rid = listed[0]["id"]
    assert rid in run_cli("phone-result", "list", check=True).stdout
    refused = run_cli("phone-result", "add", "--phone", "X", *pair, "0", "1", "3")
    assert refused.returncode == 2
    gone = run_cli("phone-result", "delete", "no-such-id")
    assert gone.returncode == 2 and "no-such-id" in gone.stderr
    assert run_cli("phone-result", "delete", rid).returncode == 0
    assert json.loads(run_cli("phone-result", "list", "--json", check=True).stdout) == []
