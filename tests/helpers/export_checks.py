"""Export checks made here (no torch, no MNN) and recorded beside a pack the way
`draftdeck verify-export` records them (verify_result.save_check), for the tests of what
reads them back: the Library, `draftdeck info`, Publish."""

from __future__ import annotations

from pathlib import Path

from app.core.pack.export_check import NORMAL
from app.core.packmaking.verify_compare import Divergence, TextAgreement
from app.core.packmaking.verify_result import ExportCheck, RunCheck, save_check, verdict_reasons

# The first divergence of a failing check: the pack that answered in garbage.
GARBAGE = Divergence(3, "The capital of France is", " Paris", " ,,,,", 12366, 11)


def check_of(texts: tuple[TextAgreement, ...], memory: str = NORMAL) -> ExportCheck:
    """The check of one run over `texts`, judged as verify-export judges it."""
    runs = (RunCheck(memory, texts, 1.0),)
    reasons = verdict_reasons(runs, {}, 128)
    return ExportCheck("pack", "src", "4-bit", runs, {}, not reasons, reasons, 2.0, "2026-12-02")


def record_check(pack: Path, faithful: float, cost: float) -> ExportCheck:
    """Record a check with these agreements at memory normal in `pack`; below the floor
    it fails, with a divergence to name."""
    divergence = GARBAGE if faithful < 1 else None
    text = TextAgreement("prose", 500, 0, faithful, cost, 0.0, 10.0, 0, divergence)
    check = check_of((text,))
    save_check(pack, check)
    return check
