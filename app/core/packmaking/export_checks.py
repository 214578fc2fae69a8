"""What is checked before an export starts, from the Hugging Face folder's own files:
settings known to export a broken pack, a tokenizer whose eos would stop the pack on the
wrong token, and an output folder DraftDeck may not write into.

A quant_block that does not divide the hidden size (or the intermediate size, or the
attention width) exports to the end without a warning and the pack answers in garbage
(SmolLM2-135M, hidden 576, block 128: every logit FLT_MAX at `memory: normal`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from app.core.infra.errors import CodedError, FileError
from app.core.infra.jsonfile import read_json_object
from app.core.pack.files import EXPORT_CHECK
from app.core.packmaking.custom_code import refuse_untrusted_code
from app.core.packmaking.export_mark import EXPORT_MARK as EXPORT_MARK
from app.core.packmaking.export_mark import made_by_export
from app.core.packmaking.export_space import space_problem
from app.core.packmaking.tokenizer_files import TokenizerFileProblem, check_tokenizer_files
from app.core.packmaking.writing import MADE_FILES, foreign_files

ROLES = ("draft", "target")
# What llmexport 0.0.5 writes (its converter asserts quant_bit in (1, 2, 4, 8));
# 1 bit is left out of what an export may ask for: no draft answers usefully at 1 bit.
EXPORTER_BITS = (1, 2, 4, 8)
BITS = (2, 4, 8)
DEFAULT_BLOCK = 128  # MNN's own packs' block; a model it does not fit gets the largest that does


class ExportRefused(CodedError):
    """An export DraftDeck will not start, and why (naming the file and the numbers)."""

    code = "export_refused"

    def __init__(self, message: str, code: str | None = None, block: int | None = None) -> None:
        super().__init__(message, code)
        self.block = block  # for "bad_block": the block that fits (the CLI names its flag)


@dataclass(frozen=True)
class ExportSettings:
    bits: int = 4
    block: int = DEFAULT_BLOCK  # 0: one block per row (llmexport's "channel-wise")
    role: str = "draft"  # draft: the pack gets a draft recipe (config_cpu.json)


@dataclass(frozen=True)
class SourceModel:
    """The facts of an HF model folder the checks need."""

    folder: Path
    model_type: str
    architecture: str
    hidden_size: int
    intermediate_size: int
    attention_width: int  # heads x head_dim: the input of o_proj
    eos_token: str


@dataclass(frozen=True)
class ExportPlan:
    """A checked export: what runs, and what was adjusted to make it safe."""

    source: SourceModel
    out: Path
    settings: ExportSettings
    adjusted: tuple[str, ...]  # one sentence per setting changed (with `adjust=True`)
    # The user trusts the folder's own code (custom_code.py): only then may the exporter
    # and the verification's torch side run it.
    trust_remote_code: bool = False


def read_source(folder: Path) -> SourceModel:
    """Read config.json and the tokenizer files; ExportRefused when they cannot be used."""
    return replace(read_config(folder), eos_token=check_eos(folder))


def read_config(folder: Path) -> SourceModel:
    """config.json's facts alone (no eos_token): what the block check needs, so a Hub
    repo's settings can be refused before its weights are downloaded."""
    config = _json_object(folder / "config.json")
    try:
        check_tokenizer_files(folder)
    except TokenizerFileProblem as exc:
        raise ExportRefused(str(exc), exc.code) from None
    text = config.get("text_config")
    model = {**config, **text} if isinstance(text, dict) else config  # multimodal configs
    hidden = _width(model, "hidden_size", folder)
    heads = _width(model, "num_attention_heads", folder)
    head_dim = model.get("head_dim") or hidden // heads
    architectures = config.get("architectures") or [""]
    return SourceModel(
        folder=folder,
        model_type=str(model.get("model_type") or config.get("model_type") or ""),
        architecture=str(architectures[0]),
        hidden_size=hidden,
        intermediate_size=_width(model, "intermediate_size", folder),
        attention_width=heads * int(head_dim),
        eos_token="",
    )


def _json_object(path: Path) -> dict[str, Any]:
    try:
        data = read_json_object(path)
    except FileError as exc:
        raise ExportRefused(
            f"{exc}: an HF model folder has config.json and its tokenizer files", "not_a_model"
        ) from None
    return dict(data)


def _width(config: Mapping[str, Any], key: str, folder: Path) -> int:
    value = config.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ExportRefused(f"{folder / 'config.json'}: {key} is {value!r}, not a size")
    return value


def _widths(source: SourceModel) -> dict[str, int]:
    """The input widths of the quantized layers: a block must divide each."""
    return {
        "hidden size": source.hidden_size,
        "intermediate size": source.intermediate_size,
        "attention width (heads x head_dim)": source.attention_width,
    }


def blocks_that_fit(source: SourceModel, upto: int = 256) -> tuple[int, ...]:
    """The quant_block values (powers of two up to `upto`, largest first) that divide
    every input width."""
    widths = _widths(source).values()
    fit = [b for b in (2**n for n in range(5, upto.bit_length())) if b <= upto]
    return tuple(sorted((b for b in fit if all(w % b == 0 for w in widths)), reverse=True))


def check_settings(
    source: SourceModel, settings: ExportSettings, adjust: bool = False
) -> tuple[ExportSettings, tuple[str, ...]]:
    """Refuse (or, with `adjust`, change) settings known to break; the settings to use and
    the sentences saying what was changed."""
    if settings.bits not in BITS:
        raise ExportRefused(f"--bits {settings.bits}: the exporter writes 2, 4 or 8 bits")
    if settings.role not in ROLES:
        raise ExportRefused(f"--role {settings.role}: a pack is a draft or a target")
    block = settings.block
    bad = {name: w for name, w in _widths(source).items() if block and w % block}
    if not bad:
        return settings, ()
    fits = [b for b in blocks_that_fit(source, block)] or [0]
    what = ", ".join(f"the {name} {w}" for name, w in bad.items())
    why = (
        f"{source.folder / 'config.json'}: quant_block {block} does not divide {what}; "
        "the export would run to the end and make a pack that answers in garbage"
    )
    use = fits[0]
    instead = f"block {use}" if use else "block 0 (one block per row)"
    if not adjust:
        raise ExportRefused(f"{why}. Use {instead}.", "bad_block", use)
    return replace(settings, block=use), (f"{why}: exporting with {instead} instead",)


# Tokens that start a text or a turn: as eos, the pack would stop where it should begin
# (a tokenizer folder converted from GGUF named <|im_start|> as its eos).
START_TOKENS = frozenset(
    {
        "<|im_start|>",
        "<|begin_of_text|>",
        "<|start_header_id|>",
        "<s>",
        "<bos>",
        "<|startoftext|>",
        "<start_of_turn>",
    }
)


def check_eos(folder: Path) -> str:
    """The tokenizer's eos token, refused when it starts text or is no special token
    (the exporter keeps it as the pack's only stop token)."""
    path = folder / "tokenizer_config.json"
    config = _json_object(path)
    eos = _token_text(config.get("eos_token"))
    if not eos:
        raise ExportRefused(
            f"{path}: no eos_token: the pack would not know where to stop", "bad_eos"
        )
    # eos == bos is fine (GPT-2-style tokenizers end and start with <|endoftext|>).
    if eos in START_TOKENS:
        raise ExportRefused(
            f"{path}: eos_token is {eos}, a token that starts text: the pack "
            "would stop on the wrong token. Set the model's end token (for "
            "ChatML, <|im_end|>)",
            "bad_eos",
        )
    specials = _special_tokens(folder, config)
    if eos not in specials:
        raise ExportRefused(
            f"{path}: eos_token {eos} is not one of the tokenizer's special "
            "tokens: the pack would stop on the wrong token",
            "bad_eos",
        )
    return eos


def _token_text(value: object) -> str:
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) else ""


def _special_tokens(folder: Path, config: Mapping[str, Any]) -> set[str]:
    found = {
        _token_text(t)
        for t in (config.get("added_tokens_decoder") or {}).values()
        if isinstance(t, dict) and t.get("special")
    }
    tokenizer = folder / "tokenizer.json"
    if tokenizer.is_file():
        added = _json_object(tokenizer).get("added_tokens") or []
        found |= {_token_text(t) for t in added if isinstance(t, dict) and t.get("special")}
    return found


def check_out_folder(out: Path) -> None:
    """Refuse an output folder that is a file, or is not empty and holds anything an
    export did not make (an earlier export's folder, with only its own files and what
    DraftDeck wrote into it after, its verification and its card, is replaced)."""
    if out.exists() and not out.is_dir():
        raise ExportRefused(f"{out}: not a folder", "bad_out")
    if not out.is_dir() or not any(out.iterdir()):
        return
    made = made_by_export(out)
    if made is None:
        raise ExportRefused(
            f"{out}: the folder is not empty and DraftDeck did not make it; "
            "choose a new or empty folder",
            "bad_out",
        )
    own = made | {EXPORT_MARK, EXPORT_CHECK, *MADE_FILES}
    others = sorted(p.name for p in out.iterdir() if p.name not in own)
    others += [p.name for p in foreign_files(out)]  # a card or config someone else wrote
    if others:
        raise ExportRefused(
            f"{out}: holds files the export did not make ({', '.join(others)});"
            " choose a new or empty folder",
            "bad_out",
        )


def check_export_space(source: Path, out: Path) -> None:
    """Refuse an export the disk of `out` has no room for (export_space.py)."""
    problem = space_problem(source, out)
    if problem:
        raise ExportRefused(problem, "disk_full")


def plan_export(
    folder: Path,
    out: Path,
    settings: ExportSettings,
    adjust: bool = False,
    trust_remote_code: bool = False,
) -> ExportPlan:
    """Every check, in order: the source's files and its tokenizer's eos, the settings
    against its sizes, the output folder, the free space there, and last the folder's own
    code (so a question about trusting it comes only for an export that can run). Raises
    ExportRefused, or CustomCodeRefused, with the first problem."""
    source = read_source(folder)
    used, adjusted = check_settings(source, settings, adjust)
    check_out_folder(out)
    check_export_space(folder, out)
    refuse_untrusted_code(folder, trust_remote_code)
    return ExportPlan(source, out, used, adjusted, trust_remote_code)
