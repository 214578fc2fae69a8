"""`draftdeck verify-export PACK HF_FOLDER`: prove an MNN pack computes what its source
model does (app/engine/client/export_verify.py); `draftdeck export` runs the same check
after every export (`verify_and_report`). The export environment is created first when
there is none, after asking, as `draftdeck export` does. Exit 0 verified, 1 not
verified, 2 bad input (or no export environment), 130 cancelled (Ctrl+C)."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from app.cli.arg_types import whole_number
from app.cli.export_jobs import (
    add_trust_arg,
    add_yes_arg,
    export_env_asking,
    say,
    say_code_refused,
)
from app.core.infra.errors import FileError
from app.core.packmaking.custom_code import CustomCodeRefused
from app.core.packmaking.export_checks import EXPORTER_BITS
from app.core.packmaking.export_env import ExportEnv
from app.core.packmaking.export_process import ProcessCancelled
from app.core.packmaking.verify_result import ExportCheck, save_check
from app.core.packmaking.verify_source import VerifyInputError

if TYPE_CHECKING:
    from app.engine.client.export_verify import VerifyOptions

VERIFIED, NOT_VERIFIED, BAD_INPUT, CANCELLED = 0, 1, 2, 130


def verify_and_report(
    env: ExportEnv,
    pack: Path,
    source: Path,
    options: VerifyOptions,
    as_json: bool = False,
    recorded_as: Path | None = None,
) -> tuple[int, ExportCheck | None]:
    """Check `pack` against `source`, print the result (progress on stderr) and save it
    beside the pack (naming the pack `recorded_as`, where it is moved next, if given);
    the exit code, and the check unless it could not run or was cancelled."""
    from app.engine.client.engine_client import EngineClient
    from app.engine.client.export_verify import verify_export

    try:
        with EngineClient() as client:
            check = verify_export(client, env, pack, source, say, options)
    except CustomCodeRefused as exc:
        say_code_refused(exc)
        return BAD_INPUT, None
    except (VerifyInputError, FileError) as exc:
        say(f"draftdeck: {exc}")
        return BAD_INPUT, None
    except (KeyboardInterrupt, ProcessCancelled):
        return CANCELLED, None
    if recorded_as is not None:
        check = replace(check, pack=str(recorded_as))
    # Printed before it is saved: a pack folder that cannot be written keeps the result.
    if as_json:
        print(json.dumps(check.to_json(), indent=2, ensure_ascii=False), flush=True)
    else:
        print("\n".join(check.summary()), flush=True)
    try:
        saved = save_check(pack, check)
    except OSError as exc:
        say(f"draftdeck: the result above was not saved beside the pack: {exc}")
    else:
        shown = (recorded_as or pack) / saved.name
        say(f"wrote {shown}; `draftdeck card` puts it in the model card")
    return (VERIFIED if check.verified else NOT_VERIFIED), check


def cmd_verify_export(args: argparse.Namespace) -> int:
    from app.engine.client.export_verify import VerifyOptions, check_inputs

    options = VerifyOptions(
        args.bits, args.block, args.sym, args.lm_bits, trust_remote_code=args.trust_remote_code
    )
    pack, source = Path(args.pack), Path(args.hf_folder)
    try:  # before the environment is offered: a typo is no reason to download the environment
        check_inputs(pack, source, options)
    except CustomCodeRefused as exc:
        say_code_refused(exc)
        return BAD_INPUT
    except (VerifyInputError, FileError) as exc:
        say(f"draftdeck: {exc}")
        return BAD_INPUT
    try:
        env = export_env_asking(args.yes, "nothing was verified")
    except KeyboardInterrupt:
        return CANCELLED
    if env is None:
        return BAD_INPUT
    code = verify_and_report(env, pack, source, options, args.json)[0]
    if code == CANCELLED:
        say("draftdeck: cancelled; nothing was written")
    return code


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "verify-export",
        help="check that an MNN pack computes what its source model does",
        description="Run the source model (torch, in the export environment) and the pack "
        "(MNN) teacher-forced on fixed texts and compare them position by position: top-1 "
        "agreement with the source quantized like the export (export faithful, at least "
        "0.99 at memory normal) and with the source as it is (quantization cost). Writes "
        "export_check.json beside the pack. Creates the export environment first when there "
        "is none, after asking (--yes: without). Exit 0 verified, 1 not verified, 2 bad "
        "input or no export environment, 130 cancelled. A source folder that carries code "
        "of its own (auto_map, *.py) is refused unless --trust-remote-code.",
    )
    p.add_argument("pack", metavar="PACK", help="the MNN pack folder")
    p.add_argument("hf_folder", metavar="HF_FOLDER", help="the source model's folder")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    add_yes_arg(p)
    p.add_argument(
        "--bits", type=whole_number(1), help="the export's bits, when the pack does not say"
    )
    add_trust_arg(p)
    p.add_argument(
        "--block", type=whole_number(0), help="the export's block, when the pack does not say"
    )
    p.add_argument(
        "--sym",
        action="store_const",
        const=True,
        help="the export was made with llmexport --sym, when the pack does not say (the "
        "result names what was assumed)",
    )
    p.add_argument(
        "--lm-bits",
        type=int,
        choices=EXPORTER_BITS,
        metavar="N",
        help="the lm_head's bits (llmexport --lm_quant_bit), when the pack does not say",
    )
    p.set_defaults(func=cmd_verify_export)
