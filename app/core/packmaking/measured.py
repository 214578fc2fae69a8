"""A draft measured against its targets, written as TokForge writes runtime_config.json.

TokForge's packs carry `recommended` (settings under TokForge's keys: target_backend,
draft_backend, draft_predict_length, draft_thread_num, draft_power, draft_sampler_type),
`compatible_targets` keyed by model (`qwen3_8b`) with `enabled` and either the `uplift`
measured or the `reason` it is off, and `notes`. DraftDeck writes the same shape from
its own measurements, so DraftDeck (advice.py) and TokForge read it alike, and adds
what a hand-written file leaves out: the uplift's 95 % interval in words, the figures
behind it per target (`measured`, a key the readers skip), and the host they came from
(`_measured_on`; keys starting with `_` are comments to both readers).

A target that is a known model (known_models.json) is keyed by that model's key; any
other by its folder name (`fast-target` as `fast_target`), which advice.recommendation
matches back to a target of that folder name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from app.core.measure.intervals import TIMES
from app.core.measure.tune_results import (
    SettingResult,
    best_result,
    pays_off,
    why_no_gain,
)
from app.core.pack.bundle import BundleInfo
from app.core.pack.files import DRAFT_RECIPE
from app.core.pack.known_models import identify

# The mark of a runtime_config.json DraftDeck wrote (and may therefore replace).
WRITTEN_BY = "_written_by"
WRITER = "DraftDeck measure-pack"
BENCH = "bench"
QUICK_TUNE = "quick tune"


@dataclass
class TargetMeasurement:
    """One target the draft was measured against (or why it was not)."""

    key: str  # its compatible_targets key
    name: str  # as a person knows it: the known model's name, else the folder's
    path: str
    method: str  # BENCH or QUICK_TUNE
    results: list[SettingResult] = field(default_factory=list)
    refused: str | None = None  # why it was not measured (the pair cannot work or gain)
    target_backend: str = "cpu"  # the target recipe's backend_type as it ran
    draft_recipe: dict[str, Any] = field(default_factory=dict)  # the draft's, as it ran

    @property
    def best(self) -> SettingResult | None:
        return best_result(self.results)

    @property
    def pays(self) -> bool:
        return self.refused is None and pays_off(self.results)


def target_key(info: BundleInfo) -> str:
    """The compatible_targets key: the known model's, else one from the folder name."""
    model = identify(info)
    if model is not None:
        return model.key
    return re.sub(r"[^a-z0-9]+", "_", info.name.lower()).strip("_") or "target"


def target_label(info: BundleInfo) -> str:
    model = identify(info)
    return model.name if model is not None else info.name


def percent(ratio: float) -> str:
    """An uplift ratio as TokForge writes it: 1.38 -> "+38%", 0.85 -> "-15%"."""
    return f"{(ratio - 1) * 100:+.0f}%"


def uplift_words(result: SettingResult) -> str:
    """The measured uplift with its interval and what it was measured on, in words
    (a computer's CPU, which `_measured_on` names: a phone's uplift differs)."""
    interval = result.interval
    summary = result.summary
    bounds = f"{percent(interval.low)} to {percent(interval.high)}"
    return (
        f"{percent(result.uplift)} measured on a computer, not a phone "
        f"({result.interval_text(bounds)}; {interval.n} run pairs of "
        f"{summary.get('tokens')} tokens, {_sampler(summary)}, "
        f"draft length {result.setting.draft_length})"
    )


def _sampler(summary: dict[str, Any]) -> str:
    sampler = str(summary.get("sampler") or "greedy")
    return "greedy" if sampler.startswith("greedy") else sampler


def not_paying_reason(result: SettingResult) -> str:
    return (
        f"Does not pay: {why_no_gain(result)} (measured {result.uplift:.2f}{TIMES} plain "
        f"decoding, {result.interval_text()}, not above 1)"
    )


def _figures(m: TargetMeasurement, result: SettingResult) -> dict[str, Any]:
    """What the uplift rests on, for a reader who wants the numbers."""
    row = result.row()
    return {
        "method": m.method,
        "target": m.name,
        "uplift": row["uplift"],
        "uplift_low": row["uplift_low"],
        "uplift_high": row["uplift_high"],
        "uplift_interval_level": row["uplift_interval_level"],
        "disturbed": row["disturbed"],
        "pairs": row["pairs"],
        "tokens": result.summary.get("tokens"),
        "acceptance": row["acceptance"],
        "cost_ratio": row["cost_ratio"],
        "plain_tok_s": row["paired_baseline_tok_s"],
        "speculative_tok_s": row["spec_tok_s"],
        "sampler": _sampler(result.summary),
        "lossless": row["lossless"],
        "draft_predict_length": result.setting.draft_length,
        "draft_thread_num": result.setting.draft_threads,
        "draft_precision": result.setting.draft_precision,
        "draft_memory": result.setting.draft_memory,
        "target_thread_num": result.setting.target_threads,
    }


def target_entry(m: TargetMeasurement) -> dict[str, Any]:
    """One compatible_targets entry, TokForge's keys first."""
    best = m.best
    if m.refused is not None or best is None:
        return {"enabled": False, "reason": m.refused or "Not measured"}
    entry: dict[str, Any] = {"enabled": m.pays, "uplift": uplift_words(best)}
    if not m.pays:
        entry["reason"] = not_paying_reason(best)
    entry["measured"] = _figures(m, best)
    return entry


def leading_measurement(measurements: list[TargetMeasurement]) -> TargetMeasurement | None:
    """Whose best setting becomes `recommended`: the highest uplift among the targets
    that pay, else the highest among those measured."""
    measured = [m for m in measurements if m.best is not None and m.refused is None]
    paying = [m for m in measured if m.pays] or measured
    return max(paying, key=lambda m: m.best.uplift if m.best else 0.0, default=None)


def recommended(
    m: TargetMeasurement, phone_draft: Mapping[str, Any], phone_target: Mapping[str, Any]
) -> dict[str, Any]:
    """The leading target's best setting under TokForge's keys, for the phone: the
    draft length and sampler as measured (the notes say how the length was chosen); the
    backends, thread count and power as the pack's recipes (`phone_draft`,
    `phone_target`: the files a phone reads) say them, never as they ran here (this
    computer's CPU backend and thread count are not a phone's). A key the recipes leave
    open is left out: `thread_num_note` says why."""
    best = m.best
    assert best is not None
    settings: dict[str, Any] = {
        "target_backend": str(phone_target.get("backend_type", m.target_backend)),
        "draft_backend": str(
            phone_draft.get("backend_type", m.draft_recipe.get("backend_type", "cpu"))
        ),
        "draft_predict_length": best.setting.draft_length,
    }
    threads = _phone_threads(phone_draft)
    if threads is not None:
        settings["draft_thread_num"] = threads
    if "power" in phone_draft:
        settings["draft_power"] = phone_draft["power"]
    settings["draft_sampler_type"] = _sampler(best.summary)
    return settings


def _phone_threads(phone_draft: Mapping[str, Any]) -> int | None:
    threads = phone_draft.get("thread_num")
    return threads if isinstance(threads, int) and not isinstance(threads, bool) else None


def thread_num_note(m: TargetMeasurement, phone_draft: Mapping[str, Any]) -> str:
    """Where `recommended.draft_thread_num` comes from, or why it is not there."""
    best = m.best
    assert best is not None
    here = best.setting.draft_threads
    measured = f"the thread count measured best here ({here}) is this computer's"
    threads = _phone_threads(phone_draft)
    if threads is not None:
        return (
            f"draft_thread_num {threads} is the draft recipe's ({DRAFT_RECIPE}), for the "
            f"phone; {measured} (DraftDeck runs the pack here with it)."
        )
    return (
        f"No draft_thread_num: the draft's recipe ({DRAFT_RECIPE}) sets no thread count, "
        f"and {measured}, not a phone's (set thread_num in {DRAFT_RECIPE} for the phone)."
    )


def host_sentence(host: dict[str, Any], date: str, version: str) -> str:
    cores = host.get("physical_cores")
    return (
        f"Measured by DraftDeck {version} on {date}: {host.get('cpu') or 'unknown CPU'}"
        f"{f' ({cores} physical cores)' if cores else ''}, {host.get('os') or 'unknown OS'}, "
        f"MNN {host.get('mnn') or 'unknown'}, CPU backend. A phone's figures (OpenCL "
        "target, other cores) will differ: measure there before trusting them there."
    )


def _length_note(measurements: list[TargetMeasurement]) -> str | None:
    measured = [(m, m.best) for m in measurements if m.best is not None and m.refused is None]
    if not measured:
        return None
    lengths = ", ".join(f"{m.key} d={best.setting.draft_length}" for m, best in measured)
    quick = all(m.method == QUICK_TUNE for m, _ in measured)
    how = (
        "the best of 1-4 by Quick tune"
        if quick
        else "as the recipes run it (not swept: a Quick tune, measure-pack --quick, sweeps 1-4)"
    )
    return f"Draft length per target: {lengths}; {how}."


def build_runtime_config(
    measurements: list[TargetMeasurement],
    host: dict[str, Any],
    date: str,
    version: str,
    phone_draft: Mapping[str, Any] | None = None,
    phone_target: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """runtime_config.json as TokForge's packs spell it, from DraftDeck's measurements;
    `phone_draft` and `phone_target` are the pack's own recipes (the draft's and the
    leading target's, as a phone reads them) for `recommended`."""
    lead = leading_measurement(measurements)
    phone_draft = phone_draft or {}
    notes: dict[str, str] = {"measured_on": host_sentence(host, date, version)}
    if (length := _length_note(measurements)) is not None:
        notes["draft_predict_length"] = length
    if lead is not None:
        notes["draft_thread_num"] = thread_num_note(lead, phone_draft)
    config: dict[str, Any] = {
        "_comment": "Runtime configuration for speculative decoding, measured by DraftDeck",
        WRITTEN_BY: f"{WRITER} {version}",
        "_measured_on": {**host, "date": date, "draftdeck": version},
        "recommended": (
            recommended(lead, phone_draft, phone_target or {}) if lead is not None else {}
        ),
        "compatible_targets": {m.key: target_entry(m) for m in measurements},
        "notes": notes,
    }
    return config


def written_by_draftdeck(runtime_config: dict[str, Any]) -> bool:
    """The file carries DraftDeck's mark (a file TokForge or a person wrote does not)."""
    return str(runtime_config.get(WRITTEN_BY, "")).startswith(WRITER)
