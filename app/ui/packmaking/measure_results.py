"""What the Measure Pack dialog shows once the pack's files are written: the measured
table (target, method, uplift with its interval, enabled or why not) and the host the
figures came from, read from the runtime_config.json written, so it shows what the
file says."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from app.core.measure.intervals import interval_words
from app.core.packmaking.measured import TargetMeasurement, percent
from app.core.packmaking.writing import Written, keys_words, what_file
from app.ui.base.scheme import colours


def _uplift(figures: Mapping[str, Any]) -> str:
    low, high = figures["uplift_low"], figures["uplift_high"]
    interval = interval_words(
        low,
        high,
        figures.get("uplift_interval_level") or 0.0,
        bool(figures.get("disturbed")),  # a re-measure disagreed with its first pass
        f"{percent(low)} to {percent(high)}",
    )
    return f"{percent(figures['uplift'])} ({interval})"


def _row(m: TargetMeasurement, entry: Mapping[str, Any]) -> str:
    figures = entry.get("measured")
    uplift = _uplift(figures) if isinstance(figures, Mapping) else "not measured"
    if entry.get("enabled"):
        state = "enabled"
    else:
        reason = html.escape(str(entry.get("reason") or "disabled"))
        state = f'<span style="color:{colours().error}">disabled: {reason}</span>'
    return (
        f"<tr><td>{html.escape(m.name)}<br><small>{html.escape(m.key)}</small></td>"
        f"<td>{html.escape(m.method)}</td><td>{html.escape(uplift)}</td><td>{state}</td></tr>"
    )


def results_html(measurements: list[TargetMeasurement], config: Mapping[str, Any]) -> str:
    targets = config.get("compatible_targets", {})
    rows = "".join(_row(m, targets.get(m.key, {})) for m in measurements)
    notes = config.get("notes", {})
    lengths = notes.get("draft_predict_length")
    return (
        '<table cellpadding="4" width="100%"><tr><th align="left">Target</th>'
        '<th align="left">Method</th><th align="left">Uplift</th>'
        f'<th align="left">Enabled</th></tr>{rows}</table>'
        + (f"<p>{html.escape(lengths)}</p>" if lengths else "")
        + f"<p><b>Host</b>: {html.escape(str(notes.get('measured_on', '')))}</p>"
    )


def written_words(written: Written) -> str:
    """Which files were written where, which file each value went to, the copies kept,
    the files left alone and what could not be saved."""
    names = ", ".join(p.name for p in written.files)
    folder = written.files[0].parent if written.files else None
    lines = [f"Wrote {names} into {folder}." if folder else "Nothing was written."]
    lines += [
        f"In {p.name}" + (f" ({what})" if (what := what_file(p)) else "") + f": {keys}."
        for p in written.files
        if (keys := keys_words(written, p))
    ]
    lines += [f"The file it replaced is kept as {p.name}." for p in written.backups]
    lines += [
        f"{p.name} is kept as it is (DraftDeck did not write it), though it does not "
        "name the sampler the draft was measured with (greedy)."
        for p in written.kept
    ]
    lines += [f"{problem[0].upper()}{problem[1:]}." for problem in written.problems]
    return " ".join(lines)
