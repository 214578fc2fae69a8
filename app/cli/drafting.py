"""--adaptive, --fixed and --stop-below: how a command's speculative runs draft.

Without them a command drafts as the draft pack says (its .draftdeck-drafting.json;
fixed when it has none)."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from app.cli import arg_types
from app.core.recipe.drafting_settings import DraftingSettings, read_drafting


def add_drafting_args(p: argparse.ArgumentParser) -> None:
    how = p.add_mutually_exclusive_group()
    how.add_argument(
        "--adaptive",
        action="store_true",
        help="adaptive drafting: each round's length chosen from the measured speed, up to "
        "the draft length, and plain decoding while drafting does not pay (the default "
        "unless the draft pack says otherwise)",
    )
    how.add_argument(
        "--fixed",
        action="store_true",
        help="draft the full draft length every round (MNN's own way; kept for the draft "
        "by Chat's switch or the Recipes page)",
    )
    p.add_argument(
        "--stop-below",
        type=arg_types.probability,
        metavar="P",
        help="end a round when the draft's top-1 probability falls below P (0 to 1; 0: never)",
    )


def chosen_drafting(args: argparse.Namespace, draft: str | None) -> DraftingSettings | None:
    """The settings the flags ask for over the draft pack's own; None: no flag given (the
    engine reads the pack's). A pack file that cannot be used is a FileError naming it."""
    if not (args.adaptive or args.fixed or args.stop_below is not None):
        return None
    settings = read_drafting(Path(draft)) if draft else DraftingSettings()
    if args.adaptive or args.fixed:
        settings = dataclasses.replace(settings, adaptive=args.adaptive)
    if args.stop_below is not None:
        settings = dataclasses.replace(settings, stop_below=args.stop_below)
    return settings
