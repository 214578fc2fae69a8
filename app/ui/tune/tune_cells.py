"""The Tune table's cells in words: the interval with its marks and the level it has,
the drafting and sampler cells, the plain figures' tooltip, and the marks' notes (no Qt:
the model in tune_results_model.py shows them)."""

from __future__ import annotations

from typing import Any

from app.core.measure.intervals import LEVEL, interval_words, level_words

UNMET = "*"
UNMET_NOTE = (
    f"{UNMET}: the interval did not get as narrow as the target within the time a setting has"
)
DISTURBED = "!"
DISTURBED_NOTE = (
    f"{DISTURBED}: measured again, the interval did not overlap the first pass's: the machine "
    "was disturbed while measuring, so it is no 95 % interval"
)
REMEASURED = " (redone)"
REMEASURED_NOTE = "(redone): measured again at the end, beside the other leading settings"
CURRENT = " (now)"
CURRENT_NOTE = "(now): the recipes as they run now"


def plain_tip(row: dict[str, Any]) -> str:
    """What the two plain figures of a row are, with its own, and why they may differ."""
    own, pooled = row.get("pair_plain_tok_s"), row.get("baseline_tok_s")
    if own is None or pooled is None:
        return ""
    return (
        f"Plain {own:,.1f} tok/s: this setting's own plain runs, each interleaved with a "
        f"speculative run (the median pair's). Plain pooled {pooled:,.1f} tok/s: the median "
        f"of all {row.get('baseline_runs')} plain runs of the sweep with these target "
        "settings. They differ when the machine's speed drifted between settings; the "
        "uplift divides each speculative run by the plain run beside it, so the drift cancels"
    )


PLAIN_DRIFT = 0.1  # own plain vs pooled: a larger gap is said in the notes


def plain_drift(rows: list[dict[str, Any]]) -> str:
    """A legend line when a row's own plain figure is far from the pooled one ("" else)."""
    gaps = [
        abs(own / pooled - 1)
        for row in rows
        if (own := row.get("pair_plain_tok_s")) and (pooled := row.get("baseline_tok_s"))
    ]
    if not gaps or max(gaps) <= PLAIN_DRIFT:
        return ""
    return (
        "Plain tok/s is each setting's own interleaved plain runs, Plain pooled all plain "
        f"runs of the sweep: up to {max(gaps):.0%} apart here, as the machine's speed "
        "drifted; the uplift pairs each run with the one beside it"
    )


def format_interval(row: dict[str, Any]) -> str:
    """ "1.42-1.61x", with "*" when the interval target was not met in the budget and
    "!" when a re-measure disagreed with its first pass (no 95 % interval); an interval
    of too few pairs for 95 % says the level it has: "1.20-1.80x (75 %)"."""
    low, high = row.get("uplift_low"), row.get("uplift_high")
    if low is None or high is None:
        return "—"
    unmet = UNMET if row.get("interval_target_met") is False else ""
    disturbed = DISTURBED if row.get("disturbed") else ""
    level = row.get("uplift_interval_level")
    below = f" ({level_words(level)})" if level is not None and level < LEVEL else ""
    return f"{low:.2f}-{high:.2f}x{unmet}{disturbed}{below}"


def interval_tip(row: dict[str, Any]) -> str | None:
    """A row's interval in the words every interval is said in (None: no mark to
    explain): disturbed, too few pairs for 95 %, or the target not met."""
    low, high, level = (
        row.get("uplift_low"),
        row.get("uplift_high"),
        row.get("uplift_interval_level"),
    )
    if row.get("disturbed"):
        return f"Not a 95 % interval: {row['disturbed']}"
    if low is not None and high is not None and level is not None and level < LEVEL:
        return f"{interval_words(low, high, level)}: too few pairs for 95 %"
    if row.get("interval_target_met") is False:
        return UNMET_NOTE
    return None


def drafting_cell(row: dict[str, Any]) -> str:
    """ "adaptive" or "fixed": how the row drafted."""
    return "adaptive" if row["adaptive"] else "fixed"


def sampler_cell(row: dict[str, Any]) -> str:
    """ "greedy", "recipe" (the recipe's sampler), or "temp. 1.2" (it at that temperature)."""
    if not row["sampled"]:
        return "greedy"
    t = row["temperature"]
    return "recipe" if t is None else f"temp. {t:g}"
