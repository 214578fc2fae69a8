"""What a sweep's measurements say: each setting's figures, the best, the verdict.

Each setting is measured with interleaved plain/speculative pairs over a few fixed
prompts (app/engine/client/tune_runner.py) and summarised like `draftdeck bench`:
uplift is the median of within-pair ratios, so a noisy machine's drift cancels, and it
carries the 95 % interval of that median (`uplift_low`, `uplift_high`:
distribution-free, from order statistics; see app/core/measure/intervals.py).
Speculation "pays off" only when that interval's lower end is above 1.

Plain decoding depends only on the target's settings, so the plain runs of every row
that shares them are pooled into one baseline (`baseline_tok_s`, the same for those
rows). The uplift is not that baseline divided into `spec_tok_s`: it is the median of
the per-pair ratios, and is labelled so. On a machine whose speed drifts the pooled
figure can be far from the plain runs paired with a row's speculative runs, so each row
also carries those (`paired_baseline_tok_s`, the median of its own plain runs):
`spec_tok_s / paired_baseline_tok_s` is only close to the uplift. The Tune table shows
instead the pair at the median (`pair_spec_tok_s`, `pair_plain_tok_s`, median_pair):
their ratio IS the uplift, so a reader who divides the two columns gets the figure shown.

Rows at a swept temperature (sampling) are measured and shown but never compete for
the best: a temperature changes what the pair writes, so a faster one is no better
recipe at equal output. Only rows at the recipe's own sampler do (`at_recipe_sampler`).

The best is the setting with the highest uplift (among those that pay off, if any do),
unless others are equal to it within noise (each one's median lies inside the other's
95 % interval, and they pay off alike): then the cheapest of those (fixed drafting
before adaptive, shortest draft, fewest threads) is named and the tie is said. Merely
overlapping intervals are too lax a test for a tie (two intervals can overlap while
their medians differ clearly); they only mark the leading candidates that are
measured again (`leading`).
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass
from typing import Any

from app.core.measure.bench import draws
from app.core.measure.intervals import TIMES, MedianInterval, interval_words, overlaps
from app.core.measure.metrics import break_even_acceptance
from app.core.measure.tune_plan import Setting


@dataclass
class SettingResult:
    setting: Setting
    summary: dict[str, Any]  # the `draftdeck bench --json` keys

    @property
    def uplift(self) -> float:
        return float(self.summary.get("uplift") or 0.0)

    @property
    def interval(self) -> MedianInterval:
        """The uplift's 95 % interval (a saved run from before intervals: its spread)."""
        s = self.summary
        spread = s.get("uplift_spread") or [self.uplift, self.uplift]
        low = s.get("uplift_low", spread[0])
        high = s.get("uplift_high", spread[1])
        level = s.get("uplift_interval_level")
        return MedianInterval(
            self.uplift,
            float(low if low is not None else self.uplift),
            float(high if high is not None else self.uplift),
            float(level) if level is not None else 0.0,
            len(s.get("pair_ratios") or []) or int(s.get("runs") or 0),
        )

    @property
    def pays_off(self) -> bool:
        return self.interval.excludes(1.0)

    @property
    def disturbed(self) -> str | None:
        """Why its interval is no 95 % interval: a re-measure disagreed with its first
        pass (remeasure.disturbance); None: nothing to say."""
        said = self.summary.get("disturbed")
        return str(said) if said else None

    def interval_text(self, bounds: str | None = None) -> str:
        """The uplift's interval as intervals.interval_words says every interval: "95 %
        interval 1.02-3.62x", "75 % interval 1.20-1.80x" (too few pairs for 95 %), or
        measured while the machine was disturbed, "interval ... (not 95 %)"."""
        i = self.interval
        return interval_words(i.low, i.high, i.level, bool(self.disturbed), bounds)

    def row(self, pooled_baseline: float | None = None, pooled_runs: int = 0) -> dict[str, Any]:
        """The figures shown and saved; `pooled_baseline` is the plain tok/s of every row
        sharing this target setting (pooled_baselines), else this row's own."""
        s = self.summary
        c = s.get("cost_ratio")
        interval = self.interval
        own_runs = len(s.get("baseline_runs_tok_s") or []) or int(s.get("runs") or 0)
        return {
            **asdict(self.setting),
            "spec_tok_s": s.get("spec_tok_s"),
            # The plain runs of this row's own pairs: the figure beside which the
            # uplift (the median of those pairs' ratios) can be checked.
            "paired_baseline_tok_s": s.get("baseline_tok_s"),
            **dict(zip(("pair_spec_tok_s", "pair_plain_tok_s"), median_pair(s), strict=True)),
            "baseline_tok_s": pooled_baseline if pooled_baseline else s.get("baseline_tok_s"),
            "baseline_runs": pooled_runs if pooled_baseline else own_runs,
            "uplift": s.get("uplift"),
            "uplift_low": interval.low if s.get("uplift") is not None else None,
            "uplift_high": interval.high if s.get("uplift") is not None else None,
            "uplift_interval_level": s.get("uplift_interval_level"),
            "pairs": interval.n,
            "repeats": s.get("repeats"),
            "interval_target_met": s.get("interval_target_met"),
            "seconds": s.get("seconds"),
            "spec_cv": s.get("spec_cv"),
            "baseline_cv": s.get("baseline_cv"),
            "remeasured": bool(s.get("remeasured")),
            "disturbed": self.disturbed,
            "acceptance": s.get("acceptance"),
            "mean_accepted_length": s.get("mean_accepted_length"),
            "cost_ratio": c,
            "predicted_speedup": s.get("predicted_speedup"),
            # Break-even holds for a fixed length; adaptive rounds draft 0 up to it.
            "break_even_acceptance": (
                break_even_acceptance(self.setting.draft_length, c)
                if c and not self.setting.adaptive
                else None
            ),
            "sampler": s.get("sampler"),
            # A run saved before sampling existed was greedy (it has no "sampler").
            "sampled": draws(s.get("sampler") or "greedy"),
            "checked_acceptance": s.get("checked_acceptance"),
            "expected_acceptance": s.get("expected_acceptance"),
            "lossless": s.get("lossless"),
            "verify_agreement": (s.get("verify_agreement") or {}).get("agreement"),
        }


def median_pair(summary: dict[str, Any]) -> tuple[float | None, float | None]:
    """The speculative and plain tok/s of the pair whose ratio is the median (the
    uplift), so that one divided by the other is the uplift exactly.

    With an even number of pairs the median lies between the two middle pairs: plain is
    their mean plain rate and speculative the uplift times it. Medians taken separately
    (`spec_tok_s`, `baseline_tok_s`) need not divide to the uplift at all (a reviewer saw
    189.6 over 248.1 beside 1.26x). A run saved without its pairs' rates: the median
    plain rate and the uplift times it."""
    uplift = summary.get("uplift")
    if uplift is None:
        return summary.get("spec_tok_s"), summary.get("baseline_tok_s")
    spec = summary.get("spec_runs_tok_s") or []
    plain = summary.get("baseline_runs_tok_s") or []
    ratios = summary.get("pair_ratios") or []
    if ratios and len(spec) == len(plain) == len(ratios):
        order = sorted(range(len(ratios)), key=lambda i: ratios[i])
        n = len(order)
        if n % 2:
            i = order[n // 2]
            return float(spec[i]), float(plain[i])
        base = (plain[order[n // 2 - 1]] + plain[order[n // 2]]) / 2
        return float(uplift) * base, float(base)
    base = summary.get("baseline_tok_s")
    return (float(uplift) * base, float(base)) if base else (summary.get("spec_tok_s"), None)


def pooled_baselines(results: list[SettingResult]) -> dict[tuple[int], tuple[float, int]]:
    """Per target setting: the median plain tok/s of all plain runs of the rows sharing
    it, and how many runs that is."""
    runs: dict[tuple[int], list[float]] = {}
    for r in results:
        rates = r.summary.get("baseline_runs_tok_s")
        if rates is None and r.summary.get("baseline_tok_s"):
            rates = [r.summary["baseline_tok_s"]]  # a run saved before pooling
        runs.setdefault(r.setting.target_key(), []).extend(rates or [])
    return {key: (statistics.median(v), len(v)) for key, v in runs.items() if v}


def rows(results: list[SettingResult]) -> list[dict[str, Any]]:
    """Every result's row, each with its target setting's pooled baseline."""
    pooled = pooled_baselines(results)
    out = []
    for r in results:
        baseline, n = pooled.get(r.setting.target_key(), (None, 0))
        out.append(r.row(baseline, n))
    return out


def at_recipe_sampler(results: list[SettingResult]) -> list[SettingResult]:
    """The rows that may be named best: decoded with the recipe's own sampler."""
    return [r for r in results if r.setting.temperature is None]


def recipe_sampler_text(results: list[SettingResult]) -> str | None:
    """The description of the recipe's sampler as the rows at it decoded with."""
    return next((r.summary.get("sampler") for r in at_recipe_sampler(results)), None)


def _top(results: list[SettingResult]) -> SettingResult | None:
    return max(at_recipe_sampler(results), key=lambda r: r.uplift, default=None)


def _same_within_noise(a: MedianInterval, b: MedianInterval) -> bool:
    return a.low <= b.median <= a.high and b.low <= a.median <= b.high


def equal_within_noise(results: list[SettingResult]) -> list[SettingResult]:
    """The highest-uplift setting and every other one the noise cannot tell from it:
    each median inside the other's interval, paying off (or not) alike. Cheapest first.
    When any setting pays off (interval above 1), only those compete: a higher median
    whose interval reaches below 1 does not outrank a setting that surely gains."""
    results = at_recipe_sampler(results)
    paying = [r for r in results if r.pays_off]
    results = paying or results
    top = _top(results)
    if top is None:
        return []
    tied = [
        r
        for r in results
        if r is top or (_same_within_noise(r.interval, top.interval) and r.pays_off == top.pays_off)
    ]
    return sorted(tied, key=lambda r: (r.setting.cost(), -r.uplift))


def leading(results: list[SettingResult]) -> list[SettingResult]:
    """Candidates to re-measure before naming a best: the top one and all whose
    interval overlaps its interval."""
    top = _top(results)
    if top is None:
        return []
    return [r for r in at_recipe_sampler(results) if r is top or overlaps(r.interval, top.interval)]


def best_result(results: list[SettingResult]) -> SettingResult | None:
    """The cheapest of the settings equal within noise to the highest uplift."""
    tied = equal_within_noise(results)
    return tied[0] if tied else None


def pays_off(results: list[SettingResult]) -> bool:
    """The best's 95 % interval lies above 1."""
    best = best_result(results)
    return best is not None and best.pays_off


def _tie_text(results: list[SettingResult]) -> str:
    tied = equal_within_noise(results)
    if len(tied) < 2:
        return ""
    others = "; ".join(r.setting.label() for r in tied[1:])
    order = "shorter draft, fewer threads"
    if any(r.setting.adaptive for r in tied):
        order = f"fixed drafting, which MNN and TokForge run, before adaptive; {order}"
    return f" Equal to it within noise: {others}; the cheapest ({order}) is named."


def _passed_over_text(results: list[SettingResult]) -> str:
    """Why a row with a higher uplift than the best's was not named (as
    equal_within_noise decides): when some setting surely pays off, a higher median
    whose interval reaches to 1 or below does not outrank it."""
    best = best_result(results)
    if best is None or not best.pays_off:
        return ""
    tied = equal_within_noise(results)
    higher = [
        r
        for r in at_recipe_sampler(results)
        if r.uplift > best.uplift and not r.pays_off and r not in tied
    ]
    if not higher:
        return ""
    top = max(higher, key=lambda r: r.uplift)
    return (
        f" The higher {top.uplift:.2f}{TIMES} of {top.setting.label()} is not named: its "
        f"{top.interval_text()} is not above 1, so it may not gain at all; the best is "
        "picked among the settings that surely gain."
    )


def _temperature_note(results: list[SettingResult]) -> str:
    swept = sorted({t for r in results if (t := r.setting.temperature) is not None})
    if not swept:
        return ""
    listed = ", ".join(f"{t:g}" for t in swept)
    what = f"Temperatures {listed} were" if len(swept) > 1 else f"Temperature {listed} was"
    return (
        f" {what} measured, not applied: a temperature changes the "
        "output, not only the speed, so only the recipe's own sampler competes for best."
    )


def verdict_sentence(results: list[SettingResult]) -> str:
    """What to tell the user, honestly."""
    return _verdict(results) + _temperature_note(results)


def _verdict(results: list[SettingResult]) -> str:
    best = best_result(results)
    if best is None:
        return "Nothing was measured."
    row = best.row()
    if pays_off(results):
        # The first sentence says it all: the Tune page shows only it until asked.
        return (
            f"Best: {best.setting.label()}: {best.uplift:.2f}{TIMES} plain decoding "
            f"({best.interval_text()}, above 1: speculation pays off). "
            + _acceptance_text(row["acceptance"])
            + _tie_text(results)
            + _passed_over_text(results)
            + _disturbed_text(best)
            + _verify_limit(best)
        )
    return (
        f"Speculation does not pay for this pair: {why_no_gain(best)}. "
        f"Best: {best.setting.label()}: "
        f"{best.uplift:.2f}{TIMES} plain decoding ({best.interval_text()}, not above 1)."
        + _disturbed_text(best)
        + _verify_limit(best)
    )


def _acceptance_text(acceptance: float | None) -> str:
    # None: nothing was drafted (adaptive drafting may step aside all along).
    if acceptance is None:
        return "Nothing was drafted: adaptive drafting stepped aside throughout."
    return f"Acceptance {acceptance:.2f}."


def _disturbed_text(result: SettingResult) -> str:
    """A sentence when the best's re-measure disagreed with its first pass."""
    said = result.disturbed
    return f" Measured again, {said}: measure again on a quiet machine." if said else ""


def why_no_gain(best: SettingResult) -> str:
    """Why the best setting does not pay, in words (a clause, lower case)."""
    row = best.row()
    c, acceptance = row["cost_ratio"], row["acceptance"]
    need = row["break_even_acceptance"]
    if c is not None and c >= 0.9:
        return (
            f"the draft costs about as much as the target (c = {c:.2f}), so even perfect "
            "acceptance cannot win"
        )
    if need is not None and acceptance is not None and acceptance < need:
        return (
            f"acceptance {acceptance:.2f} is below the {need:.2f} needed to gain anything "
            f"at c = {c:.2f}"
        )
    if best.uplift > 1.0:
        return "no setting beat plain decoding by more than the noise"
    return "no setting beat plain decoding"


def _verify_limit(result: SettingResult) -> str:
    """A sentence when the recipe's verify, not the draft, holds acceptance down."""
    if result.summary.get("acceptance_limited_by_verify"):
        return " " + str(result.summary["verify_note"])
    return ""


@dataclass(frozen=True)
class UpliftCurve:
    """One line of the uplift chart: the draft's and the target's thread counts, fixed
    or adaptive drafting, and at each draft length (adaptive: its cap) the setting with
    the highest uplift (the others there differ in what the chart does not show:
    precision, memory)."""

    draft_threads: int
    points: tuple[SettingResult, ...]  # by draft length
    adaptive: bool = False
    target_threads: int = 1


def uplift_curves(results: list[SettingResult]) -> list[UpliftCurve]:
    """One curve per draft and target thread count (variants of the target's threads at
    one draft length were drawn on top of each other), fixed before adaptive, fewest
    draft threads first, then fewest target threads."""
    best: dict[tuple[bool, int, int], dict[int, SettingResult]] = {}
    for r in at_recipe_sampler(results):
        key = (r.setting.adaptive, r.setting.draft_threads, r.setting.target_threads)
        per_d = best.setdefault(key, {})
        d = r.setting.draft_length
        if d not in per_d or r.uplift > per_d[d].uplift:
            per_d[d] = r
    return [
        UpliftCurve(draft, tuple(per_d[d] for d in sorted(per_d)), adaptive, target)
        for (adaptive, draft, target), per_d in sorted(best.items())
    ]
