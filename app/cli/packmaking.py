"""`draftdeck measure-pack`, `draftdeck card` and `draftdeck publish`: make a draft into a
pack others can use (measured against its targets, with a card) and put it on the Hub."""

from __future__ import annotations

import argparse
import json
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from app.cli.arg_types import number, whole_number
from app.cli.hub import HUB_PLACE, HUB_TOKEN
from app.core.infra.errors import MissingFileError
from app.core.infra.settings import load_settings, save_settings
from app.core.infra.units import format_bytes
from app.core.measure.intervals import MIN_VALUES_FOR_LEVEL
from app.core.measure.measure_lock import measuring
from app.core.pack.export_check import ExportVerdict
from app.core.pack.library import Library
from app.core.packmaking.card import CardFacts
from app.core.packmaking.writing import Written, keys_words, what_file

if TYPE_CHECKING:  # the Hub client is imported only by the command that publishes
    from app.core.hub.publish import Progress, PublishPlan, UploadProgress


def _facts(args: argparse.Namespace) -> CardFacts:
    return CardFacts(license=args.license, base_model=args.base_model)


def _say_written(done: Written) -> None:
    for path in done.files:
        what, keys = what_file(path), keys_words(done, path)
        print(
            f"wrote {path}" + (f" ({what})" if what else "") + (f": {keys}" if keys else ""),
            file=sys.stderr,
        )
    for path in done.backups:
        print(f"kept the file it replaced as {path}", file=sys.stderr)
    for path in done.kept:
        print(
            f"kept {path} as it is: DraftDeck did not write it (--force sets the sampler "
            "measured, greedy, in it)",
            file=sys.stderr,
        )
    for problem in done.problems:
        print(f"draftdeck: {problem}", file=sys.stderr)


def _pack_folders(names: list[str]) -> list[Path]:
    """Each a pack folder, or the name of a pack in the library (read only if needed)."""
    library = Library(load_settings(), save_settings)
    folders = [library.pack_named(name) for name in names]
    for name, folder in zip(names, folders, strict=True):
        if folder is None:
            raise MissingFileError(
                Path(name), "neither a pack folder nor the name of a pack in the library"
            )
    return [f for f in folders if f is not None]


def cmd_measure_pack(args: argparse.Namespace) -> int:
    from app.core.packmaking.make import check_before_measuring, finish_pack
    from app.engine.client.engine_client import EngineClient
    from app.engine.client.pack_measure import MeasureOptions, measure_targets

    draft, *targets = _pack_folders([args.draft, *args.target])
    check_before_measuring(draft, args.force)  # before minutes of measuring, not after
    options = MeasureOptions(
        quick=args.quick,
        tokens=args.tokens,
        runs=args.runs,
        min_run_seconds=args.min_run_seconds,
        budget_seconds=args.budget,
    )

    def progress(target: str, done: int, total: int) -> None:
        print(f"{target}: {done}/{total} run pairs", file=sys.stderr)

    try:
        with measuring("draftdeck measure-pack"), EngineClient() as client:
            measurements = measure_targets(client, draft, targets, options, progress)
    except KeyboardInterrupt:
        print("draftdeck: cancelled; nothing was written", file=sys.stderr)
        return 130
    done, config = finish_pack(draft, measurements, _facts(args), args.force)
    _say_written(done)
    if args.json:
        print(json.dumps(config, indent=2, ensure_ascii=False))
        return 0
    for m in measurements:
        entry = config["compatible_targets"][m.key]
        state = "enabled" if entry["enabled"] else "disabled"
        print(f"{m.key} ({m.name}): {state}; {entry.get('uplift') or entry.get('reason')}")
        if entry.get("uplift") and entry.get("reason"):
            print(f"  {entry['reason']}")
    print(config["notes"]["measured_on"])
    return 0


def cmd_card(args: argparse.Namespace) -> int:
    from app.core.packmaking.make import write_card_only

    _say_written(write_card_only(Path(args.pack), _facts(args), args.force))
    return 0


def _interrupted(_signum: int, _frame: FrameType | None) -> None:
    # Said at once: the upload threads still finish the part they are sending.
    print("draftdeck: cancelling the upload…", file=sys.stderr, flush=True)
    raise KeyboardInterrupt


@contextmanager
def _saying_cancel() -> Iterator[None]:
    try:
        before = signal.signal(signal.SIGINT, _interrupted)
    except ValueError:  # not the main thread (a test calling main() from a thread)
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def _check_before_publishing(plan: PublishPlan, force: bool) -> bool:
    """Say what the pack's export check found; False (refused) when the export was not
    verified and the user did not --force it."""
    check = plan.export_check
    if check is None:
        print(
            "draftdeck: note: this pack's export was never checked against its source model "
            "(`draftdeck verify-export PACK SOURCE` checks it)",
            file=sys.stderr,
        )
    elif check.verdict == ExportVerdict.NOT_VERIFIED:
        if not force:
            print(
                f"draftdeck: {check.words()} Pass --force to publish it anyway.",
                file=sys.stderr,
            )
            return False
        print(f"draftdeck: publishing anyway (--force): {check.words()}", file=sys.stderr)
    elif check.verdict == ExportVerdict.UNREADABLE:
        print(f"draftdeck: note: {check.words()}; it is not uploaded", file=sys.stderr)
    return True


def _progress_printer(as_json: bool) -> Progress:
    """Progress on stderr: words, or with --json one JSON object a line (what the
    window's Publish dialog reads)."""

    def say(progress: UploadProgress) -> None:
        text = json.dumps(progress.to_json()) if as_json else progress.words()
        print(text, file=sys.stderr, flush=True)

    return say


def cmd_publish(args: argparse.Namespace) -> int:
    from app.core.hub.hub_api import HubConfig
    from app.core.hub.publish import publish, publish_plan

    plan = publish_plan(Path(args.pack), args.repo_id)
    if not _check_before_publishing(plan, args.force):
        return 1
    config = HubConfig.from_settings(load_settings())  # the saved token first, as downloads
    print(
        f"uploading {len(plan.files)} files ({format_bytes(plan.total_bytes)}) to "
        f"{args.repo_id} on {config.place()}"
        + (" as a private repo" if args.private else "")
        + "; Ctrl+C cancels",
        file=sys.stderr,
    )
    if not (plan.folder / "README.md").is_file():
        print(
            "draftdeck: the pack has no README.md (model card): `draftdeck card` writes one",
            file=sys.stderr,
        )
    try:
        with _saying_cancel():
            published = publish(
                config,
                plan,
                private=args.private,
                message=args.message,
                progress=_progress_printer(args.json),
            )
    except KeyboardInterrupt:
        print(
            f"draftdeck: publishing cancelled; {args.repo_id} keeps its last complete commit "
            "(a commit lands whole or not at all)",
            file=sys.stderr,
        )
        return 130
    if args.json:
        print(
            json.dumps(
                {"repo": published.repo_id, "commit": published.commit, "url": published.url}
            )
        )
    else:
        print(f"published {published.url} (commit {published.commit[:12]})")
    return 0


def _card_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--license",
        metavar="ID",
        help="the card's license, as the Hub spells it (default: the base model's when it "
        "is a known model, else other)",
    )
    p.add_argument(
        "--base-model",
        metavar="REPO",
        help="the model this draft was made from (default: the known model of its shape)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace a runtime_config.json or README.md DraftDeck did not write (measure-pack: "
        "and set the sampler measured in such a draft recipe); each is kept as .bak",
    )


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    measure = sub.add_parser(
        "measure-pack",
        help="measure a draft against targets and write its runtime_config.json and card",
        description="Measure a draft against each target (a bench of the pair's recipes as "
        "they are, or with --quick a Quick tune), then write into the draft's folder its "
        "runtime_config.json in TokForge's format, its config_cpu.json when it has none (the "
        "phone's recipe: only the sampler measured goes in it), its model card (README.md), "
        "and the thread count, precision and memory measured here into this computer's "
        "settings for the pack (never pushed or published). A file DraftDeck did not write "
        "is replaced only with --force; Ctrl+C writes nothing.",
    )
    measure.add_argument(
        "draft", metavar="DRAFT", help="the draft's pack folder, or a library pack's name"
    )
    measure.add_argument(
        "--target",
        action="append",
        required=True,
        metavar="PACK",
        help="a target to measure against: a pack folder or a library pack's name (repeat "
        "for more)",
    )
    measure.add_argument(
        "--quick",
        action="store_true",
        help="Quick tune each pair (draft length 1-4) instead of one bench of its recipes",
    )
    measure.add_argument(
        "--tokens",
        type=whole_number(1),
        default=128,
        metavar="N",
        help="tokens per run (default %(default)s)",
    )
    measure.add_argument(
        "--runs",
        type=whole_number(1),
        default=MIN_VALUES_FOR_LEVEL,
        metavar="N",
        help=f"bench: measured run pairs (default {MIN_VALUES_FOR_LEVEL}, the fewest for a "
        "95 %% interval)",
    )
    measure.add_argument(
        "--min-run-seconds",
        type=number(0.0),
        default=1.0,
        metavar="SECONDS",
        help="repeat a run's generation until it decodes about this long (default %(default)g)",
    )
    measure.add_argument(
        "--budget", type=number(0.0), metavar="SECONDS", help="--quick: time a setting may take"
    )
    _card_args(measure)
    measure.add_argument("--json", action="store_true", help="print the runtime_config written")
    measure.set_defaults(func=cmd_measure_pack)

    card = sub.add_parser(
        "card",
        help="write a pack's model card (README.md) from its files",
        description="Write a pack's model card (README.md) from its files: the Hub's YAML "
        "header, the measured table of its runtime_config.json, the recipe and the export's "
        "verification. A README.md DraftDeck did not write is replaced only with --force.",
    )
    card.add_argument("pack", metavar="PACK_DIR", help="the pack folder")
    _card_args(card)
    card.set_defaults(func=cmd_card)

    pub = sub.add_parser(
        "publish",
        help="upload a pack to a Hugging Face model repo (token: HF_TOKEN or `hf auth login`)",
        description="Upload a pack folder to a Hugging Face model repo in one commit, "
        "creating the repo when it does not exist (an existing one keeps its visibility). "
        "DraftDeck's own files and links out of the pack are never uploaded; a pack whose "
        "export check failed is refused unless --force. Ctrl+C stops it before the commit "
        "and the repo keeps its last complete commit.",
        epilog=f"Publishing needs a token with write access. {HUB_TOKEN} {HUB_PLACE}",
    )
    pub.add_argument("pack", metavar="DIR", help="the pack folder to upload")
    pub.add_argument("repo_id", metavar="REPO_ID", help="owner/name")
    pub.add_argument("--private", action="store_true", help="create the repo private")
    pub.add_argument("--message", metavar="TEXT", help="the commit message")
    pub.add_argument(
        "--force",
        action="store_true",
        help="publish even when the pack's export check failed (export not verified)",
    )
    pub.add_argument(
        "--json",
        action="store_true",
        help="print repo, commit and url as JSON (and progress on stderr as JSON lines)",
    )
    pub.set_defaults(func=cmd_publish)
