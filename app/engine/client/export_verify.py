"""Prove an export: the source model (torch, in the export environment) and the pack
(MNN, in the worker) on the same token ids, teacher-forced, compared position by
position (app/core/packmaking/verify_compare.py), and the pack's chat prompt against the
source's (verify_prompt.py).

The pack runs at `memory: normal` (the verdict) and at its recipe's own memory setting
when that is another. Logits travel as .npy files in a temporary folder, removed after.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from app.core.infra.jsonfile import read_json_object
from app.core.pack.bundle import BundleInfo, read_bundle
from app.core.pack.export_check import NORMAL
from app.core.pack.files import CONFIG
from app.core.packmaking.custom_code import refuse_untrusted_code
from app.core.packmaking.export_env import ExportEnv
from app.core.packmaking.export_process import ProcessCancelled, StreamedProcess
from app.core.packmaking.verify_compare import compare_text
from app.core.packmaking.verify_prompt import check_prompt
from app.core.packmaking.verify_result import ExportCheck, RunCheck, verdict_reasons
from app.core.packmaking.verify_source import (
    QuantSpec,
    SourceRun,
    VerifyInputError,
    quant_spec,
    run_source,
)
from app.core.packmaking.verify_texts import TEXTS, VerifyText
from app.engine.client.engine_client import EngineClient
from app.engine.protocol import Decode, Encode, ForcedLogits, Load

Say = Callable[[str], None]
MNN_DEFAULT_MEMORY = "low"  # what MNN runs at when config.json names no memory


@dataclass(frozen=True)
class VerifyOptions:
    bits: int | None = None  # when the pack does not record them
    block: int | None = None
    symmetric: bool | None = None  # llmexport --sym
    lm_bits: int | None = None  # llmexport --lm_quant_bit
    texts: Sequence[VerifyText] = TEXTS
    trust_remote_code: bool = False  # the source folder's own code may run


def recipe_memory(pack: Path) -> str:
    memory = read_json_object(pack / CONFIG).get("memory")
    return memory if isinstance(memory, str) else MNN_DEFAULT_MEMORY


def _run_pack(
    client: EngineClient, pack: Path, memory: str, source: SourceRun, out: Path
) -> RunCheck:
    """The pack at `memory`, teacher-forced on the source's ids, compared."""
    client.run(Load(str(pack), target_config={"memory": memory}))
    out.mkdir()
    written = client.run(ForcedLogits(tuple(t.ids for t in source.texts), str(out)))
    decode = _decoder(client)
    texts = tuple(
        compare_text(t.name, t.ids, t.load("source"), t.load("quantized"), np.load(file), decode)
        for t, file in zip(source.texts, written.files, strict=True)
    )
    shutil.rmtree(out)  # a vocabulary row per token: not kept past its comparison
    return RunCheck(memory, texts, written.seconds)


def _decoder(client: EngineClient) -> Callable[[Sequence[int]], str]:
    """The loaded pack's tokenizer, ids to text."""

    def decode(ids: Sequence[int]) -> str:
        return client.run(Decode(tuple(ids))).text

    return decode


def check_inputs(
    pack: Path, hf_folder: Path, options: VerifyOptions
) -> tuple[BundleInfo, QuantSpec]:
    """The pack read and its quantization known, and `hf_folder` a model folder whose code
    (if any) is trusted, before anything runs: VerifyInputError (or a FileError from
    reading the pack, CustomCodeRefused) when not."""
    info = read_bundle(pack)
    if not (hf_folder / CONFIG).is_file():
        raise VerifyInputError(f"{hf_folder}: not a Hugging Face model folder (no {CONFIG})")
    refuse_untrusted_code(hf_folder, options.trust_remote_code)
    spec = quant_spec(info, options.bits, options.block, options.symmetric, options.lm_bits)
    return info, spec


def verify_export(
    client: EngineClient,
    env: ExportEnv,
    pack: Path,
    hf_folder: Path,
    say: Say,
    options: VerifyOptions = VerifyOptions(),
    process: StreamedProcess | None = None,
) -> ExportCheck:
    """Check `pack` against `hf_folder`. VerifyInputError (or a FileError from reading
    the pack) for bad input; ProcessCancelled when `process` is cancelled (before the
    source's run ends, or before a pack run starts)."""
    started = time.perf_counter()
    info, spec = check_inputs(pack, hf_folder, options)
    say(f"quantization: {spec.describe()}")
    process = process or StreamedProcess()
    with tempfile.TemporaryDirectory(prefix="draftdeck-verify-") as tmp:
        work = Path(tmp)
        source = run_source(
            env,
            hf_folder,
            spec,
            options.texts,
            work,
            process,
            lambda done, total, what: say(f"source {done}/{total}: {what}"),
            options.trust_remote_code,
        )
        if info.vocab_size is not None and source.vocab < info.vocab_size:
            raise VerifyInputError(
                f"{hf_folder}: the source's vocabulary ({source.vocab:,}) is smaller than "
                f"the pack's ({info.vocab_size:,}): not this pack's source model"
            )
        memories = [NORMAL] + [m for m in [recipe_memory(pack)] if m != NORMAL]
        runs = []
        for memory in memories:
            say(f"pack at memory {memory}: {sum(len(t.ids) for t in source.texts)} tokens")
            # A cancel meant for the source may come once it is done: the pack's run has
            # no cancel of its own, and killing a worker still starting does nothing.
            if process.cancelled:
                raise ProcessCancelled
            runs.append(_run_pack(client, pack, memory, source, work / f"pack-{memory}"))
    say("chat prompt: the pack's against the source's")
    prompt = check_prompt(
        source.chat_prompt,
        info.chat,
        lambda text: client.run(Encode(text)).tokens,
        _decoder(client),
    )
    reasons = verdict_reasons(runs, source.halved_blocks, spec.block)
    reasons += (prompt.difference,) if prompt.difference else ()
    return ExportCheck(
        pack=str(pack),
        source=str(hf_folder),
        quantization=spec.describe(),
        runs=tuple(runs),
        halved_blocks=source.halved_blocks,
        chat_prompt=prompt,
        verified=not reasons,
        reasons=reasons,
        seconds=time.perf_counter() - started,
        date=time.strftime("%Y-%m-%d"),
    )
