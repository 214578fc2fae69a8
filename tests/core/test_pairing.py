"""Which pair is offered first, which drafts suit a target, names that tell packs apart:
on fixture bundles copied into a real library, broken copies included."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from app.core.infra.settings import Settings
from app.core.pack.compat import assess_either
from app.core.pack.known_models import known_models
from app.core.pack.library import Library, PackEntry
from app.core.pack.pairing import best_pair, drafts_for, rank_note
from app.core.pack.verdict import Verdict

Copy = Callable[..., Path]


def _verdict(target: PackEntry, draft: PackEntry) -> Verdict:
    t = target.info if target.info is not None else target.error
    d = draft.info if draft.info is not None else draft.error
    assert t is not None and d is not None
    return assess_either(t, d)


def _library(tmp_path: Path, bundle_copy: Copy, names: dict[str, str]) -> list[PackEntry]:
    """A library holding copies of fixture bundles under the given folder names."""
    settings = Settings(library_dir=str(tmp_path / "packs"))
    for folder, fixture in names.items():
        bundle_copy(fixture, tmp_path / "packs" / folder)
    return Library(settings, lambda _: None).scan()


def _qwen35_target(bundle_copy: Copy, dest: Path) -> None:
    """A Qwen3.5 pack without a draft recipe, so the library sees a target."""
    bundle_copy("qwen35-draft", dest)
    (dest / "config_cpu.json").unlink()


def _break(tmp_path: Path) -> None:
    packs = tmp_path / "packs"
    (packs / "a-bad-json" / "config.json").write_text("{")
    weight = packs / "a-truncated" / "llm.mnn.weight"
    weight.write_bytes(weight.read_bytes()[:1000])


def test_best_pair_skips_blocked_and_broken_packs(tmp_path: Path, bundle_copy: Copy) -> None:
    _qwen35_target(bundle_copy, tmp_path / "packs" / "a-qwen35-target")
    entries = _library(
        tmp_path,
        bundle_copy,
        {
            "a-bad-json": "qwen3-target",
            "a-truncated": "qwen3-draft-noisy",
            "qwen3-target": "qwen3-target",
            "qwen3-draft-noisy": "qwen3-draft-noisy",
        },
    )
    _break(tmp_path)
    entries = Library(Settings(library_dir=str(tmp_path / "packs")), lambda _: None).scan()
    assert [e.name for e in entries if not e.ok] == ["a-bad-json", "a-truncated"]
    targets = [e for e in entries if e.name != "qwen3-draft-noisy"]
    drafts = list(entries)
    best = best_pair(targets, drafts, _verdict)
    assert best is not None
    # The Qwen3.5 target with a Qwen3 draft is blocked; a Qwen3.5 pair cannot pay; the
    # Qwen3 pair (compatible with a warning) wins.
    assert [e.name for e in best] == ["qwen3-target", "qwen3-draft-noisy"]


def _as_qwen3_8b(entry: PackEntry) -> PackEntry:
    """The entry with a Qwen3-8B-shaped target, so that packs' advice can name it."""
    assert entry.info is not None
    model = next(m for m in known_models() if m.key == "qwen3_8b")
    info = dataclasses.replace(
        entry.info, hidden_size=model.hidden_size, layers=model.layers, params_estimate=10**10
    )
    return dataclasses.replace(entry, info=info)


def test_best_pair_prefers_the_packs_own_uplift(tmp_path: Path, bundle_copy: Copy) -> None:
    entries = _library(
        tmp_path,
        bundle_copy,
        {
            "fast-target": "fast-target",
            "fast-draft": "fast-draft",
            "qwen3-target": "qwen3-target",
            "qwen3-draft-identical": "qwen3-draft-identical",
            "qwen3-draft-noisy": "qwen3-draft-noisy",
        },
    )
    by_name = {e.name: e for e in entries}
    drafts = [by_name[n] for n in ("fast-draft", "qwen3-draft-identical", "qwen3-draft-noisy")]
    # No advice matches: compatible before warnings, then the draft that is the smaller
    # share of its target, then the names.
    plain = best_pair([by_name["fast-target"], by_name["qwen3-target"]], drafts, _verdict)
    assert plain is not None and plain[0].name == "fast-target"
    # The noisy draft's runtime_config.json supports Qwen3-8B claiming +30%: that pair
    # comes first, though the identical draft is the same size and sorts first by name.
    known = _as_qwen3_8b(by_name["qwen3-target"])
    best = best_pair([by_name["fast-target"], known], drafts, _verdict)
    assert best is not None
    assert (best[0].name, best[1].name) == ("qwen3-target", "qwen3-draft-noisy")
    assert _verdict(*best).recommendation is not None


def test_no_pair_can_run(tmp_path: Path, bundle_copy: Copy) -> None:
    entries = _library(tmp_path, bundle_copy, {"qwen3-target": "qwen3-target"})
    _qwen35_target(bundle_copy, tmp_path / "packs" / "x")
    entries = Library(Settings(library_dir=str(tmp_path / "packs")), lambda _: None).scan()
    # Only a target and itself or a blocked partner: nothing to offer.
    assert best_pair(entries, entries, _verdict) is None


def test_drafts_for_lists_fitting_drafts_first(tmp_path: Path, bundle_copy: Copy) -> None:
    entries = _library(
        tmp_path,
        bundle_copy,
        {
            "a-truncated": "qwen3-draft-noisy",
            "qwen3-target": "qwen3-target",
            "qwen3-draft-noisy": "qwen3-draft-noisy",
            "qwen3-draft-identical": "qwen3-draft-identical",
            "qwen35-draft": "qwen35-draft",
        },
    )
    weight = tmp_path / "packs" / "a-truncated" / "llm.mnn.weight"
    weight.write_bytes(weight.read_bytes()[:1000])
    entries = Library(Settings(library_dir=str(tmp_path / "packs")), lambda _: None).scan()
    target = next(e for e in entries if e.name == "qwen3-target")
    fitting, others = drafts_for(target, entries, _verdict)
    assert {d.name for d in fitting} == {"qwen3-draft-noisy", "qwen3-draft-identical"}
    assert [d.name for d in others] == ["a-truncated", "qwen3-target", "qwen35-draft"]


def test_each_fitting_draft_says_why_it_ranks_where_it_does(
    tmp_path: Path, bundle_copy: Copy
) -> None:
    entries = _library(
        tmp_path,
        bundle_copy,
        {
            "qwen3-target": "qwen3-target",
            "qwen3-draft-noisy": "qwen3-draft-noisy",
            "fast-draft": "fast-draft",
        },
    )
    by_name = {e.name: e for e in entries}
    target = _as_qwen3_8b(by_name["qwen3-target"])  # the noisy pack recommends Qwen3-8B
    fitting, _ = drafts_for(target, [by_name["fast-draft"], by_name["qwen3-draft-noisy"]], _verdict)
    notes = [(d.name, rank_note(target, d, _verdict(target, d))) for d in fitting]
    assert notes[0][0] == "qwen3-draft-noisy"
    assert notes[0][1].startswith("recommended by its pack (+30%), ")
    assert notes[1][0] == "fast-draft" and notes[1][1].startswith("compatible")
    for draft, (_name, note) in zip(fitting, notes, strict=True):
        assert draft.info is not None and target.info is not None
        share = 100 * draft.info.params_estimate / target.info.params_estimate
        assert note.endswith(f"{share:.1f} % of the target's size")  # under 10 %: one decimal
    # A pair the pack says nothing about, with warnings: the count is told.
    plain = by_name["qwen3-target"]
    noisy = by_name["qwen3-draft-noisy"]
    verdict = _verdict(plain, noisy)
    count = len(verdict.of("warning"))
    assert count >= 1
    assert rank_note(plain, noisy, verdict) == (
        f"compatible, {count} warning{'s' if count > 1 else ''}, 100 % of the target's size"
    )
