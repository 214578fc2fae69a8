"""What is checked before an export starts, from the Hugging Face folder's own files:
settings known to export a broken pack, a tokenizer whose eos would stop the pack on the
wrong token, and an output folder DraftDeck may not write into.

A quant_block that does not divide the hidden size (or the intermediate size, or the
attention width) exports to the end without a warning and the pack answers in garbage
(SmolLM2-135M, hidden 576, block 128: every logit FLT_MAX at `memory: normal`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.core.infra.errors import CodedError

ROLES = ("draft", "target")
BITS = (2, 3, 4, 5, 6, 7, 8)
EXPORT_MARK = ".draftdeck-export.json"  # in every folder an export made: source, settings


class ExportRefused(CodedError):
    """An export DraftDeck will not start, and why (naming the file and the numbers)."""

    code = "export_refused"


@dataclass(frozen=True)
class ExportSettings:
    bits: int = 4
    block: int = 128  # 0: one block per row (llmexport's "channel-wise")
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


def read_source(folder: Path) -> SourceModel:
    """Read config.json and the tokenizer files; ExportRefused when they cannot be used."""
    raise NotImplementedError


def blocks_that_fit(source: SourceModel, upto: int = 256) -> tuple[int, ...]:
    """The quant_block values (powers of two up to `upto`) that divide every input width."""
    raise NotImplementedError


def check_settings(
    source: SourceModel, settings: ExportSettings, adjust: bool = False
) -> tuple[ExportSettings, tuple[str, ...]]:
    """Refuse (or, with `adjust`, change) settings known to break; the settings to use and
    the sentences saying what was changed."""
    raise NotImplementedError


def check_out_folder(out: Path) -> None:
    """Refuse an output folder that exists, is not empty and was not made by an export."""
    raise NotImplementedError


def plan_export(
    folder: Path, out: Path, settings: ExportSettings, adjust: bool = False
) -> ExportPlan:
    """Every check, in order: the source's files, the settings against its sizes, its
    tokenizer's eos, the output folder. Raises ExportRefused with the first problem."""
    raise NotImplementedError
