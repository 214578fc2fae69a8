"""`draftdeck export`: make an MNN pack from a Hugging Face model with MNN's exporter,
run in the separate export environment (created on first use, after asking), then prove
it against its source (`draftdeck verify-export`'s check; `--no-verify` skips it) and add
a verified pack to the Library by reference, as the Make Pack window does. The pack is
made and checked in a hidden partial folder and moved into place last, with its check
recorded (an interrupted one as such).

Exit 0 made and verified (or made, with --no-verify), 1 failed or not verified (the pack
and its export_check.json are left as made, to look at), 2 refused (also a source folder
with code of its own, without --trust-remote-code), 130 cancelled.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from app.cli.arg_types import whole_number
from app.cli.export_jobs import (
    add_trust_arg,
    add_yes_arg,
    export_env_asking,
    printing_lines,
    run_cancellable,
    say,
    say_code_refused,
)
from app.cli.verify_export import CANCELLED as VERIFY_CANCELLED
from app.cli.verify_export import verify_and_report
from app.core.infra.errors import AlreadyExistsError, FileError
from app.core.pack.files import EXPORT_CHECK
from app.core.packmaking.custom_code import CustomCodeRefused
from app.core.packmaking.export_checks import (
    BITS,
    DEFAULT_BLOCK,
    ROLES,
    ExportRefused,
    ExportSettings,
    plan_export,
)
from app.core.packmaking.export_env import ExportEnv
from app.core.packmaking.verify_result import (
    COULD_NOT_RUN,
    INTERRUPTED,
    save_check,
    unfinished_check,
)

if TYPE_CHECKING:
    from app.core.packmaking.export_run import ExportJob

REFUSED, CANCELLED = 2, 130


def cmd_export(args: argparse.Namespace) -> int:
    from app.core.packmaking.export_partials import remove_abandoned
    from app.core.packmaking.export_run import ExportJob, source_folder

    remove_abandoned()  # what a killed export left: hidden, as large as a model
    chosen = args.block is not None  # else the default, fitted to the model
    block = args.block if chosen else DEFAULT_BLOCK
    settings = ExportSettings(bits=args.bits, block=block, role=args.role)
    out, trust = Path(args.out), args.trust_remote_code
    try:
        # A repo's config.json first: a block it refuses is said before the weights come.
        fit = args.adjust or not chosen  # the default block is fitted to the model
        source = source_folder(args.source, trust_remote_code=trust, settings=settings, adjust=fit)
        plan = plan_export(source, out, settings, fit, trust)
    except CustomCodeRefused as exc:
        say_code_refused(exc)
        return REFUSED
    except ExportRefused as exc:
        flags = f" (--block {exc.block}, or --adjust)" if exc.block is not None else ""
        print(f"draftdeck: {exc.message}{flags}", file=sys.stderr)
        return REFUSED
    if chosen:
        for note in plan.adjusted:
            print(f"draftdeck: {note}", file=sys.stderr)
    elif plan.adjusted:
        print(f"draftdeck: {_fitted_block(plan.settings.block)}", file=sys.stderr)
    try:
        env = export_env_asking(args.yes, "nothing was exported")
    except KeyboardInterrupt:
        return CANCELLED
    if env is None:
        return 1
    job = ExportJob(env, plan)
    job.listen(printing_lines("", job.status))
    made = run_export(job)
    if made != 0:
        return made
    if not args.no_verify:
        return verify_made_pack(env, job)
    placed = place_made_pack(job)
    if placed == 0:
        say(
            f"draftdeck: not verified (--no-verify), so not added to the Library; "
            f"`draftdeck verify-export {plan.out} {plan.source.folder}` checks it"
        )
    return placed


def _fitted_block(block: int) -> str:
    """What the default --block became for a model it does not divide."""
    fits = f"block {block}, the largest" if block else "block 0 (one per row): no block"
    return (
        f"quantizing with {fits} up to {DEFAULT_BLOCK} that divides the model's hidden size, "
        "intermediate size and attention width (--block chooses another)"
    )


def verify_made_pack(env: ExportEnv, job: ExportJob) -> int:
    """Prove the pack `job` made (still in its partial folder) against its source, record
    the outcome in it (a check that was interrupted or could not run as such: never as
    if it had not been checked), then move it into place; a verified one joins the
    Library. The exit code (0 verified and listed)."""
    from app.engine.client.export_verify import VerifyOptions

    plan, pack = job.plan, job.partial
    source = plan.source.folder
    say(f"verifying {plan.out} against its source model…")
    options = VerifyOptions(trust_remote_code=plan.trust_remote_code)
    code, check = verify_and_report(env, pack, source, options, recorded_as=plan.out)
    if check is None:
        why = INTERRUPTED if code == VERIFY_CANCELLED else COULD_NOT_RUN
        try:
            save_check(pack, unfinished_check(plan.out, source, why))
        except OSError as exc:
            say(f"draftdeck: the check's outcome was not recorded beside the pack: {exc}")
    placed = place_made_pack(job)
    if placed != 0:
        return placed
    if code == VERIFY_CANCELLED:
        say(f"draftdeck: {plan.out} was made but not verified: the check was interrupted")
        return CANCELLED
    if check is None:
        say(f"draftdeck: export not verified: the check could not run; {plan.out} is as made")
        return 1
    if not check.verified:
        say(
            f"draftdeck: export not verified (what differs is above, and in "
            f"{plan.out / EXPORT_CHECK}); {plan.out} is left as made and not added to the "
            "Library"
        )
        return 1
    return _add_to_library(plan.out)


def _add_to_library(pack: Path) -> int:
    """Add the pack by reference: it stays where it was made."""
    from app.core.infra.settings import load_settings, save_settings
    from app.core.pack.library import Library

    try:
        Library(load_settings(), save_settings).add_folder(pack)
    except AlreadyExistsError:
        pass  # made inside the library folder, or made again: it is listed already
    except FileError as exc:
        say(f"draftdeck: {pack} is made and verified but was not added to the Library: {exc}")
        return 1
    print(
        f"{pack.name} is in the Library ({pack.absolute()}): pair it, chat, tune or push it; "
        "`draftdeck publish` puts it on the Hub",
        flush=True,
    )
    return 0


def run_export(job: ExportJob) -> int:
    """Run `job` until it ends or Ctrl+C cancels it, saying how it ended; the exit code
    (0: the pack is made, in its partial folder until `place_made_pack`)."""
    from app.core.packmaking.export_run import CANCELLED as EXPORT_CANCELLED
    from app.core.packmaking.export_run import DONE

    plan = job.plan
    ran = run_cancellable(job)
    status = job.status()
    if status.state == EXPORT_CANCELLED:
        print(f"draftdeck: export cancelled; nothing was left in {plan.out}", file=sys.stderr)
        return CANCELLED
    if not ran:  # Ctrl+C came after the exporter had finished: the job ran to its end
        print("draftdeck: too late to cancel: the export had finished", file=sys.stderr)
    if status.state != DONE:
        print(f"draftdeck: {status.error}", file=sys.stderr)
        return 1
    return 0


def place_made_pack(job: ExportJob) -> int:
    """Move the made pack where it was asked for, saying so; the exit code."""
    plan = job.plan
    try:
        job.place()
    except ExportRefused as exc:
        say(f"draftdeck: {exc.message}; the export was removed")
        return 1
    except OSError as exc:
        say(f"draftdeck: the pack could not be put in {plan.out}: {exc}; the export was removed")
        return 1
    info = job.bundle()
    print(
        f"made {info.path} ({plan.source.architecture or info.model_type}, "
        f"{plan.settings.bits}-bit, block {plan.settings.block}, {plan.settings.role})",
        flush=True,
    )
    return 0


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "export",
        help="make an MNN pack from a Hugging Face model folder or repo (MNN's exporter, "
        "in an environment DraftDeck creates on first use), prove it against its source and "
        "add it to the Library",
        description="Make an MNN pack from a Hugging Face model with MNN's own exporter, run "
        "in a separate environment DraftDeck creates on first use (torch CPU, about 1.3 GB), "
        "after asking (--yes: without; with no terminal to ask, only with --yes). Settings "
        "known to break are refused before anything runs. The pack is then proved against "
        "its source (as verify-export does) and, verified, added to the Library where it "
        "was made. Exit 0 made and verified, 1 failed or not verified (the pack is left as "
        "made, out of the Library), 2 refused, 130 cancelled.",
    )
    p.add_argument(
        "source",
        metavar="HF_FOLDER_OR_REPO",
        help="a Hugging Face model folder (config.json, tokenizer and weights), or a Hub repo "
        "id (owner/name) to download",
    )
    p.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="where the pack goes: a new or empty folder, or an earlier export's",
    )
    p.add_argument(
        "--bits",
        type=int,
        choices=BITS,
        default=4,
        help=f"{', '.join(map(str, BITS))} (default 4; what the exporter writes)",
    )
    p.add_argument(
        "--block",
        type=whole_number(0),
        metavar="K",
        help=f"quantization block (0 = one per row); it must divide the model's hidden and "
        f"intermediate sizes and attention width, read from its config.json. Default: "
        f"{DEFAULT_BLOCK}, or the largest of 64 and 32 that divides them, else 0 (said)",
    )
    p.add_argument("--role", choices=ROLES, default="draft", help="draft packs get config_cpu.json")
    p.add_argument(
        "--adjust",
        action="store_true",
        help="use the largest block that fits instead of refusing a --block that does not",
    )
    add_yes_arg(p)
    p.add_argument(
        "--no-verify",
        action="store_true",
        help="do not prove the pack against its source (then it is not added to the Library)",
    )
    add_trust_arg(p)
    p.set_defaults(func=cmd_export)
