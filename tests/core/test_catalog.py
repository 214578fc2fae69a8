"""The curated catalog tells the truth: every claim about a pack names the pack's model
card or runtime_config.json as its source and quotes it verbatim, every figure in a
summary is in a quote, what it says of TokForge's targets is what TokForge's real
runtime_config.json says, and the MNN team's targets are described by their format."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from app.core.hub.plan import is_skipped
from app.core.infra.resources import read_text
from app.core.pack.advice import read_advice, recommendation
from app.core.pack.known_models import known_models
from tests.helpers.paths import ROOT
from tests.helpers.tokforge import TOKFORGE_RUNTIME_CONFIG

CATALOG: dict[str, Any] = json.loads(read_text("catalog.json"))
REPOS: list[dict[str, Any]] = CATALOG["repos"]
CARDS = ROOT / "docs" / "pack-cards"
TOKFORGE = "darkmaniac7/TokForge-AccelerationPack-Draft"
FORMAT = "export format: "
# A figure: a number not inside a name ("Qwen3-0.6B", "SM8850", "bf16" are not figures),
# with its sign, range and percent: "+24-40%", "10,000", "0.7178", the 3 of "d=3".
FIGURE = re.compile(r"(?<![\w.\-])\+?\d(?:[\d,.]*\d)?(?:-\d+)?%?")


def _by_repo() -> dict[str, dict[str, Any]]:
    return {entry["repo"]: entry for entry in REPOS}


def _strings(value: object) -> Iterator[str]:
    """Every string value in a parsed JSON document."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _quotes(entry: dict[str, Any]) -> list[str]:
    return [quote for source in entry["sources"] for quote in source["says"]]


@pytest.mark.parametrize("entry", REPOS, ids=[e["repo"] for e in REPOS])
def test_every_source_is_a_card_or_runtime_config_and_is_quoted_verbatim(
    entry: dict[str, Any],
) -> None:
    assert entry["sources"], f"{entry['repo']} names no source"
    tokforge_strings = set(_strings(json.loads(TOKFORGE_RUNTIME_CONFIG)))
    for source in entry["sources"]:
        origin, quotes = source["from"], source["says"]
        assert quotes, origin
        if origin.startswith(FORMAT):
            continue
        repo, _, document = origin.partition(": ")
        assert repo in _by_repo(), origin
        if document == "model card":
            card = (CARDS / f"{repo.replace('/', '+')}.txt").read_text(encoding="utf-8")
            assert [q for q in quotes if q not in card] == [], origin
        else:
            assert (document, repo) == ("runtime_config.json", TOKFORGE), origin
            assert [q for q in quotes if q not in tokforge_strings] == [], origin


@pytest.mark.parametrize("entry", REPOS, ids=[e["repo"] for e in REPOS])
def test_every_figure_in_a_summary_is_in_a_quote(entry: dict[str, Any]) -> None:
    quoted = " ".join(_quotes(entry))
    figures = FIGURE.findall(entry["summary"])
    assert [f for f in figures if f not in quoted] == [], entry["repo"]


def test_the_figure_pattern_finds_figures_not_names() -> None:
    text = "Qwen3-0.6B on SM8850, bf16: +24-40% (3x), 10,000 samples, 0.7178, d=3."
    assert FIGURE.findall(text) == ["+24-40%", "3", "10,000", "0.7178", "3"]


def test_a_packs_summary_names_its_card() -> None:
    for entry in REPOS:
        if entry["role"] == "draft":
            assert "Its model card: " in entry["summary"], entry["repo"]


def test_what_the_catalog_says_of_tokforges_targets_is_what_its_runtime_config_says() -> None:
    advice = read_advice(json.loads(TOKFORGE_RUNTIME_CONFIG))
    models = {model.name: model for model in known_models()}
    checked = []
    for entry in REPOS:
        name = entry["repo"].split("/")[1].removesuffix("-MNN")
        rec = recommendation(advice, models.get(name))
        if entry["role"] != "target" or rec is None or rec.target_key is None:
            continue
        summary = entry["summary"]
        if rec.enabled:
            assert (
                f"TokForge's draft pack supports the pack with {name}, claiming {rec.uplift}"
                in (summary)
            )
        else:
            assert f"TokForge's draft pack disables the pack for {name}" in summary
            assert f'"{rec.reason}"' in summary
            assert "enabled" not in summary.lower()
        checked.append(name)
    assert checked == ["Qwen3-4B", "Qwen3-8B", "Qwen3-14B"]


def test_qwen3_4b_is_not_claimed_enabled() -> None:
    summary = _by_repo()["taobao-mnn/Qwen3-4B-MNN"]["summary"]
    assert "enabled" not in summary.lower()
    assert "TokForge's draft pack disables the pack for Qwen3-4B" in summary
    assert "Degenerates — KL trained from 8B teacher" in summary
    tokforge = _by_repo()[TOKFORGE]["summary"]
    assert 'disables Qwen3-4B ("Degenerates — KL trained from 8B teacher"' in tokforge


def test_the_mnn_teams_targets_are_described_by_their_export_format() -> None:
    targets = [e for e in REPOS if e["repo"].startswith("taobao-mnn/")]
    assert len(targets) == 5
    for entry in targets:
        assert entry["role"] == "target"
        assert "in MNN 3.1.x's export format" in entry["summary"]
        assert f"{FORMAT}MNN 3.1.x" in [s["from"] for s in entry["sources"]]
        if "(skipped unless asked)" in entry["summary"]:
            assert is_skipped("llm.mnn.json")  # as the catalog promises
