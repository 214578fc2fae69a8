"""The source side of an export check: what quantization the pack holds, and the source
model's teacher-forced logits (as it is and quantized like the export), computed by
resources/torch_side/source_logits.py in the export environment.

The pack says its quantization: the graph keeps each linear layer's bits and whether its
blocks are symmetric (quant_facts.py), tie_embeddings the block and bits of the
embedding and its scales' layout, and the files whether the embedding is bf16, quantized
apart or the lm_head's rows. What the pack does not say (a bf16-embedding pack records
no block) comes from the caller or the export's own record (export_mark.py: `draftdeck
export` passes llmexport neither `--sym` nor `--lm_quant_bit`); what none of them says
is taken as llmexport's default (asymmetric, the lm_head at the layers' bits) and named
as assumed in the result, so a failing pack is not blamed for a guess.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from app.core.infra.errors import CodedError
from app.core.infra.resources import resource
from app.core.pack.bundle import BundleInfo
from app.core.packmaking.export_checks import EXPORTER_BITS
from app.core.packmaking.export_env import ExportEnv
from app.core.packmaking.export_mark import recorded_settings
from app.core.packmaking.export_process import StreamedProcess
from app.core.packmaking.verify_prompt import SourcePrompt
from app.core.packmaking.verify_texts import PROMPT_CONVERSATION, VerifyText

BF16_BITS = 16
SCRIPT = ("torch_side", "source_logits.py")
_PROGRESS = re.compile(r"^progress (\d+) (\d+) (.*)$")

Progress = Callable[[int, int, str], None]  # done, total, what


class VerifyInputError(CodedError):
    """The pack or the source folder cannot be checked (bad input, exit 2)."""

    code = "bad_input"


@dataclass(frozen=True)
class QuantSpec:
    """How the export quantized the source, as the torch side applies it."""

    bits: int
    block: int
    lm_bits: int
    lm_block: int
    embedding: str  # "tied" (the lm_head's rows), "bf16" or "quantized" (apart)
    embedding_bits: int
    embedding_block: int
    symmetric: bool = False  # llmexport's default (asymmetric: a zero point per block)
    assumed: tuple[str, ...] = ()  # what nothing said, in words ("asymmetric", ...)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        kind = "symmetric" if self.symmetric else "asymmetric"
        words = f"{kind} {self.bits}-bit, block {self.block}"
        if self.embedding == "tied":
            words += f"; lm_head and embedding tied at {self.lm_bits}-bit"
        else:
            embedding = "bf16" if self.embedding == "bf16" else f"{self.embedding_bits}-bit"
            words += f"; lm_head {self.lm_bits}-bit; embedding {embedding}"
        if self.assumed:
            words += f"; assumed, the pack does not say: {', '.join(self.assumed)}"
        return words


def quant_spec(
    info: BundleInfo,
    bits: int | None = None,
    block: int | None = None,
    symmetric: bool | None = None,
    lm_bits: int | None = None,
) -> QuantSpec:
    """The pack's quantization; the arguments fill in what the pack does not record.

    Without the graph's word, the linear layers' bits come from the weight file's size
    (bundle.py), which a misread block skews (a width that block does not divide gets
    more scales than the pack records): a count the exporter cannot write falls back to
    the embedding's."""
    record = recorded_settings(info.path)  # draftdeck export: neither --sym nor --lm_quant_bit
    facts = info.quant_facts
    assumed: list[str] = []
    inferred = info.quant_bits if info.quant_bits in EXPORTER_BITS else None
    bits = bits or _whole(record.get("bits")) or inferred
    if bits is None and info.embedding_bits in EXPORTER_BITS:
        bits = info.embedding_bits
        assumed.append(f"layers at the embedding's {bits}-bit")
    block = block if block is not None else _whole(record.get("block"))
    block = block if block is not None else info.quant_block
    if bits not in EXPORTER_BITS or block is None:
        raise VerifyInputError(
            f"{info.path}: the pack does not record its quantization (bits {bits}, block "
            f"{block}); give them (--bits 4 --block 128, say) as the export was made"
        )
    if symmetric is None:  # the graph says, else DraftDeck's own export (never --sym)
        symmetric = facts.symmetric if facts.symmetric is not None else (False if record else None)
    if symmetric is None:
        symmetric = False
        assumed.append("asymmetric")
    names = {f.name for f in info.files}
    emb_bits = info.embedding_bits or bits
    kind = "tied"
    if emb_bits == BF16_BITS:
        kind = "bf16"
    elif f"embeddings_int{emb_bits}.bin" in names:
        kind = "quantized"
    if lm_bits is None:  # the graph says; a tied embedding's bits are the lm_head's
        lm_bits = facts.lm_bits or (bits if record else emb_bits if kind == "tied" else None)
    if lm_bits is None:
        lm_bits = bits
        assumed.append(f"lm_head {bits}-bit")
    if lm_bits not in EXPORTER_BITS:
        raise VerifyInputError(
            f"{info.path}: the pack's lm_head is stored at {lm_bits} bits; the check "
            f"knows the exporter's {', '.join(map(str, EXPORTER_BITS))}"
        )
    return QuantSpec(bits, block, lm_bits, block, kind, emb_bits, block, symmetric, tuple(assumed))


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class SourceText:
    name: str
    text: str  # what the source tokenizer was given (a chat turn: after its template)
    ids: tuple[int, ...]
    source_logits: Path  # float32 [positions, vocab]: the source as it is
    quantized_logits: Path  # the source quantized like the export

    def load(self, which: str) -> npt.NDArray[np.float32]:
        path = self.source_logits if which == "source" else self.quantized_logits
        rows: npt.NDArray[np.float32] = np.load(path)  # no mmap: Windows keeps it open
        return rows


@dataclass(frozen=True)
class SourceRun:
    texts: tuple[SourceText, ...]
    vocab: int
    halved_blocks: dict[str, int]  # layer -> the block the exporter's quant really used
    seconds: float
    chat_prompt: SourcePrompt | str  # or why the source's template gave none


def run_source(
    env: ExportEnv,
    hf_folder: Path,
    spec: QuantSpec,
    texts: Sequence[VerifyText],
    out: Path,
    process: StreamedProcess,
    progress: Progress,
    trust_remote_code: bool = False,
) -> SourceRun:
    """Run the torch side into `out` (the folder's own code only if `trust_remote_code`);
    ProcessCancelled when `process` is cancelled, VerifyInputError when the source model
    cannot be run."""
    job = {
        "trust_remote_code": trust_remote_code,
        "hf_folder": str(hf_folder.absolute()),
        "out_dir": str(out.absolute()),
        "texts": [t.to_json() for t in texts],
        "chat_prompt": [[m["role"], m["content"]] for m in PROMPT_CONVERSATION],
        "quant": spec.to_json(),
    }
    job_file = out / "job.json"
    job_file.write_text(json.dumps(job, ensure_ascii=False), encoding="utf-8")

    def on_line(line: str) -> None:
        found = _PROGRESS.match(line)
        if found:
            progress(int(found[1]), int(found[2]), found[3])

    script = resource(*SCRIPT)
    result = process.run(
        [str(env.python), str(script), str(job_file)], env.environment(), out, on_line
    )
    summary_file = out / "source.json"
    if result.returncode != 0 or not summary_file.is_file():
        last = result.tail[-1] if result.tail else "no output"
        raise VerifyInputError(f"{hf_folder}: the source model could not be run: {last}")
    summary = json.loads(summary_file.read_text(encoding="utf-8"))
    made = tuple(
        SourceText(
            rec["name"],
            rec["text"],
            tuple(int(t) for t in np.load(out / f"{n}.ids.npy")),
            out / f"{n}.source.npy",
            out / f"{n}.quantized.npy",
        )
        for n, rec in enumerate(summary["texts"])
    )
    prompt = summary["chat_prompt"]
    return SourceRun(
        made,
        int(summary["vocab"]),
        dict(summary["halved_blocks"]),
        summary["seconds"],
        SourcePrompt(prompt["text"], tuple(int(t) for t in prompt["ids"]), str(prompt["bos"]))
        if "text" in prompt
        else str(prompt["why"]),
    )
