"""The pair the Phone page pushes: the target and draft chosen on the Pair page (the
shared PairSelection), pushed together so the target's config.json on the phone names
the draft (core/phone/pair_link.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import QWidget

from app.core.phone.desk import PhoneFolder
from app.core.phone.pair_link import target_drafts
from app.ui.base.dialogs import choose
from app.ui.base.pair_selection import PairSelection

PAIR_TIP = (
    "Push the target and draft chosen on the Pair page: the draft first, then the target, "
    "whose config.json on the phone names the draft (draft_config_path)"
)
NO_PAIR = "Choose a target and a draft on the Pair page to push them as a pair."


def chosen_pair(selection: PairSelection | None) -> tuple[Path, Path] | None:
    """The Pair page's target and draft, when both are chosen and still there."""
    if selection is None:
        return None
    target, draft = selection.target, selection.draft
    if target is None or draft is None or not target.is_dir() or not draft.is_dir():
        return None
    return target, draft


def pair_words(pair: tuple[Path, Path] | None) -> str:
    if pair is None:
        return NO_PAIR
    return f"Pair: {pair[0].name} with the draft {pair[1].name} (chosen on the Pair page)"


def on_phone(listed: PhoneFolder | None, serial: str, root: str, name: str) -> bool | None:
    """Whether the pack `name` is in `root` on the phone (None: that folder is not read)."""
    if listed is None or (listed.serial, listed.root) != (serial, root):
        return None
    return any(p.name == name for p in listed.packs)


def its_draft(pack: Path, pair: tuple[Path, Path] | None) -> Path | None:
    """The chosen draft when `pack` is the chosen pair's target."""
    if pair is None or pack.resolve() != pair[0].resolve():
        return None
    return pair[1]


def pair_step(
    pack: Path,
    pair: tuple[Path, Path] | None,
    listed: PhoneFolder | None,
    serial: str,
    root: str,
) -> tuple[Path | None, Path | None]:
    """How Push Pack goes for `pack`: the draft its config.json on the phone is to name
    (None: the one it names there stays), and the chosen pair's draft to ask about when
    it is not on the phone while the target's recipe drafts (None: nothing to ask)."""
    draft = its_draft(pack, pair)
    if draft is None:  # not the pair's target
        return None, None
    if on_phone(listed, serial, root, draft.name):
        return draft, None
    return None, draft if target_drafts(pack) else None


def ask_push_both(
    parent: QWidget, question: str, both: Callable[[], object], alone: Callable[[], object]
) -> None:
    """Ask whether to push the target's draft with it, or the target alone."""

    def push_both() -> None:
        both()

    def push_alone() -> None:
        alone()

    choose(
        parent,
        "Draft not on the phone",
        question,
        [("Push Both", push_both), ("Push Target Only", push_alone)],
    )
