"""Whether a pack, or a pair, fits in a phone's RAM under the recipes the phone runs.

The figures per model come from the measure domain's estimate (measure/ram_estimate.py),
which phone code may not import (the two are siblings): the desk is handed it as a
callable, `EstimateModel`, by whoever builds the desk (the window, the command line).

On the phone the target runs on the GPU and the draft on the CPU, both in the phone's
RAM, so a pair counts both. The estimate is this computer's (fp32 compute): where a
recipe asks for `precision: low` the phone computes in fp16 and may keep dequantized
weights (`memory: normal` or `high`) and the KV cache at half that size. So the need is
a range: a push is refused only when even its lower end is more than PHONE_USABLE_SHARE
of the phone's RAM, and warned about when its upper end takes more than
PHONE_TIGHT_SHARE of it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from app.core.infra.units import format_bytes
from app.core.pack.bundle import BundleInfo, read_bundle
from app.core.pack.files import CONFIG
from app.core.phone.adb import Phone
from app.core.phone.devices import parse_meminfo_total
from app.core.recipe.files import draft_recipe_path, read_recipe

FITS, TIGHT, TOO_BIG = "fits", "tight", "too_big"
# Android, its services and the app itself keep a good part of a phone's RAM, and the
# system kills a foreground app that takes most of what is left: above this share of
# the phone's RAM a pair is likely to be killed or to crawl.
PHONE_TIGHT_SHARE = 0.7
# Android keeps at least this much of its RAM for itself (the kernel, system_server, the
# display: 1.5-3 GB on a 16 GB phone), so an app can never have more.
PHONE_USABLE_SHARE = 0.9
FP16_LOW_PRECISION = "low"  # MNN's default precision: fp16 where the hardware has it


class ModelEstimate(Protocol):
    """One model's memory under a recipe (measure/ram_estimate.ModelMemory)."""

    @property
    def name(self) -> str: ...
    @property
    def memory(self) -> str: ...
    @property
    def weights(self) -> int: ...
    @property
    def stored_weights(self) -> int: ...
    @property
    def kv_cache(self) -> int: ...
    @property
    def total(self) -> int: ...
    @property
    def weights_kind(self) -> str: ...
    def describe(self) -> str: ...


EstimateModel = Callable[[BundleInfo, Mapping[str, Any]], ModelEstimate]


def phone_recipe(pack: Path, as_draft: bool) -> dict[str, Any]:
    """What the phone runs `pack` with: its config.json, and a draft's recipe over it.
    Read from the pack's own files only: this computer's settings never count here."""
    recipe = read_recipe(pack / CONFIG)
    if as_draft:
        recipe = {**recipe, **read_recipe(draft_recipe_path(pack))}
    return recipe


@dataclass(frozen=True)
class ModelNeed:
    role: str  # "target", "draft" or "pack"
    estimate: ModelEstimate
    fp16: bool  # the recipe computes in fp16 on the phone (precision low)

    @property
    def most(self) -> int:
        return self.estimate.total

    @property
    def least(self) -> int:
        """With fp16 compute: dequantized weights and the cache at half the size."""
        if not self.fp16:
            return self.most
        halved = self.estimate.kv_cache // 2
        if self.estimate.weights_kind == "fp32":
            halved += self.estimate.weights // 2
        return self.most - halved

    def describe(self) -> str:
        return f"{self.role} {self.estimate.name} {self.estimate.describe()}"


def model_need(
    estimate: EstimateModel, pack: Path, role: str, recipe: Mapping[str, Any] | None = None
) -> ModelNeed:
    """`pack`'s need as `role` under `recipe` (the pack's own phone recipe when None)."""
    info = read_bundle(pack)
    as_draft = role == "draft" or (role == "pack" and info.role == "draft")
    run = phone_recipe(pack, as_draft) if recipe is None else recipe
    precision = run.get("precision", FP16_LOW_PRECISION)
    return ModelNeed(role, estimate(info, run), precision == FP16_LOW_PRECISION)


@dataclass(frozen=True)
class PhoneFit:
    level: str  # FITS, TIGHT or TOO_BIG
    least: int
    most: int
    ram: int  # the phone's RAM (MemTotal)
    message: str

    def to_json(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "needed_least": self.least,
            "needed_most": self.most,
            "phone_ram": self.ram,
            "message": self.message,
        }


def needed_words(least: int, most: int) -> str:
    if least == most:
        return f"about {format_bytes(most)}"
    return f"{format_bytes(least)} to {format_bytes(most)}"


def phone_fit(needs: Sequence[ModelNeed], ram: int, phone: str) -> PhoneFit:
    """Whether `needs` (one model, or a target and its draft) fit in `ram` bytes of the
    phone called `phone`, with the numbers and what would help."""
    least = sum(n.least for n in needs)
    most = sum(n.most for n in needs)
    what = "the pair" if len(needs) > 1 else needs[0].estimate.name
    parts = "; ".join(n.describe() for n in needs)
    if least != most:  # the lower end is with fp16 compute, the upper with fp32
        parts = f"fp16 or fp32 on the phone; {parts}"
    numbers = (
        f"{what} needs {needed_words(least, most)} on the phone ({parts}), and {phone} "
        f"has {format_bytes(ram)} of RAM, of which Android keeps at least "
        f"{format_bytes(ram - int(ram * PHONE_USABLE_SHARE))}"
    )
    if least > ram * PHONE_USABLE_SHARE:
        advice = _advice(needs, ram)
        message = f"Not enough memory on {phone}: {numbers}. {advice}"
        return PhoneFit(TOO_BIG, least, most, ram, message)
    if most > ram * PHONE_TIGHT_SHARE:
        share = round(100 * PHONE_TIGHT_SHARE)
        return PhoneFit(
            TIGHT,
            least,
            most,
            ram,
            f"Memory is tight on {phone}: {numbers}; above {share} % of a phone's RAM the "
            f"system may close the app. {_advice(needs, ram)}",
        )
    return PhoneFit(FITS, least, most, ram, f"Memory on {phone}: {numbers}.")


def _advice(needs: Sequence[ModelNeed], ram: int) -> str:
    dequantized = [n for n in needs if n.estimate.weights_kind == "fp32"]
    if not dequantized:
        return "A smaller target, or a smaller max_all_tokens in the recipe, needs less."
    least = sum(n.least for n in needs)
    most = sum(n.most for n in needs)
    for n in dequantized:
        kept = n.estimate.weights // 2 if n.fp16 else n.estimate.weights
        least -= kept - n.estimate.stored_weights
        most -= n.estimate.weights - n.estimate.stored_weights
    names = " and ".join(f"{n.role} {n.estimate.name}" for n in dequantized)
    fits = "which fits" if most <= ram * PHONE_TIGHT_SHARE else "still a lot for this phone"
    return (
        f'The recipe of {names} says memory "{dequantized[0].estimate.memory}", which '
        f'unpacks the weights; with memory "low" (weights as stored) it would need '
        f"{needed_words(least, most)}, {fits}."
    )


def phone_ram(phone: Phone) -> int:
    """The phone's RAM (MemTotal); 0 when it cannot be read."""
    result = phone.shell("cat /proc/meminfo")
    return parse_meminfo_total(result.out) if result.code == 0 else 0
