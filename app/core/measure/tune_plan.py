"""Tuning plans: which recipe settings a sweep measures, and with how many runs.

A sweep is the cartesian product of the chosen values (`SweepPlan.settings`); "quick"
and "thorough" plans start from the pair's current recipe (`recipe_defaults`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from app.core.pack.files import CONFIG
from app.core.recipe.desktop_settings import desktop_overlay
from app.core.recipe.drafting_settings import read_drafting
from app.core.recipe.files import (
    draft_recipe_path,
    draft_settings,
    read_recipe,
    run_recipes,
    target_run_recipe,
    target_settings,
)
from app.core.recipe.sampler_settings import SamplerSettings, with_overrides
from app.core.recipe.schema import FIELDS, physical_cores

# Swept setting fields -> (which recipe, key). Only fields a plan sweeps are applied.
# The temperature is swept (with sampling) but never applied: it changes what the pair
# writes, not only how fast, so it is no recipe setting to pick by speed.
RECIPE_KEYS = {
    "draft_length": ("target", "draft_predict_length"),
    "draft_threads": ("draft", "thread_num"),
    "draft_precision": ("draft", "precision"),
    "draft_memory": ("draft", "memory"),
    "target_threads": ("target", "thread_num"),
}
_PLAN_FIELDS = {
    "draft_length": "draft_lengths",
    "draft_threads": "draft_threads",
    "draft_precision": "draft_precisions",
    "draft_memory": "draft_memories",
    "target_threads": "target_threads",
}
# The Setting field of adaptive drafting: kept in the draft pack's drafting file
# (core/recipe/drafting_settings.py), not in a recipe. A plan measures it beside the
# fixed lengths or not at all (SweepPlan.adaptive).
ADAPTIVE = "adaptive"
# Every Setting field of how the pair runs: what Apply may write and a later edit
# makes stale (the temperature is no such field, see RECIPE_KEYS).
RUN_FIELDS = (*RECIPE_KEYS, ADAPTIVE)

DEFAULT_PROMPTS = (
    "Write a short story about a lighthouse keeper who finds a message in a bottle.",
    "def fibonacci(n):\n    # Return the n-th Fibonacci number iteratively.\n",
    "Question: Why is the sky blue? Answer in three sentences.",
)

MIN_PAIRS = 6  # the fewest pairs whose ratios give a 95 % interval for their median


@dataclass(frozen=True)
class Setting:
    draft_length: int
    draft_threads: int
    draft_precision: str
    draft_memory: str
    target_threads: int
    temperature: float | None = None  # None: the recipe's sampler as it is (or greedy)
    # Drafting adaptively: each round's length picked up to draft_length (the cap).
    adaptive: bool = False

    def label(self, fields: Iterable[str] | None = None) -> str:
        """In words a newcomer reads: "draft length 3, draft 1 thread, low precision,
        normal memory; target 2 threads" ("adaptive drafting up to 4, …" for adaptive
        drafting); only `fields` of them when given (what Apply writes: "draft length 3")."""
        chosen = set(RUN_FIELDS if fields is None else fields)
        if ADAPTIVE in chosen:  # the drafting is said with the length it drafts up to
            chosen.add("draft_length")
        length = (
            f"adaptive drafting up to {self.draft_length}"
            if self.adaptive
            else f"draft length {self.draft_length}"
        )
        draft = [
            text
            for name, text in (
                ("draft_length", length),
                ("draft_threads", f"draft {threads_text(self.draft_threads)}"),
                ("draft_precision", f"{self.draft_precision} precision"),
                ("draft_memory", f"{self.draft_memory} memory"),
            )
            if name in chosen
        ]
        target = f"target {threads_text(self.target_threads)}" if "target_threads" in chosen else ""
        at = "" if self.temperature is None else f" at temperature {self.temperature:g}"
        return "; ".join(part for part in (", ".join(draft), target) if part) + at

    def sampler(self, recipe: SamplerSettings | None) -> SamplerSettings | None:
        """The sampler this setting decodes with: the recipe's (None: greedy), at this
        setting's temperature if it has one."""
        if recipe is None or self.temperature is None:
            return recipe
        return with_overrides(recipe, temperature=self.temperature)

    def target_key(self) -> tuple[int]:
        """What plain decoding's speed depends on (the target's settings; nothing of the
        draft, nor the temperature: that changes which tokens, not how many or their cost)."""
        return (self.target_threads,)

    def cost(self) -> tuple[bool, int, int, int]:
        """Orders equal-within-noise settings: fixed drafting (what MNN and TokForge
        run) before adaptive, then shorter draft, fewer threads first."""
        return (
            self.adaptive,
            self.draft_length,
            self.draft_threads + self.target_threads,
            self.draft_threads,
        )

    def target_config(self) -> dict[str, int]:
        return {"draft_predict_length": self.draft_length, "thread_num": self.target_threads}

    def draft_config(self) -> dict[str, int | str]:
        return {
            "thread_num": self.draft_threads,
            "precision": self.draft_precision,
            "memory": self.draft_memory,
        }


def threads_text(n: int) -> str:
    return f"{n} thread" if n == 1 else f"{n} threads"


@dataclass(frozen=True)
class SweepPlan:
    draft_lengths: tuple[int, ...] = (1, 2, 3, 4)
    draft_threads: tuple[int, ...] = (1,)
    draft_precisions: tuple[str, ...] = ("low",)
    draft_memories: tuple[str, ...] = ("low",)
    target_threads: tuple[int, ...] = (1,)
    prompts: tuple[str, ...] = DEFAULT_PROMPTS
    tokens: int = 96
    repeats: int = 1  # the fewest rounds (one pair per prompt each) a setting gets
    # A run repeats its generation until it has decoded this long (set from the warm-up).
    min_run_seconds: float = 0.5
    # More rounds until the uplift's 95 % interval is within +-this fraction of it…
    target_half_width: float = 0.05
    # …or this many seconds were spent on the setting, or max_repeats rounds ran.
    budget_seconds: float = 20.0
    max_repeats: int = 12
    # Decode with the target recipe's sampler (else greedy, the exact comparison)…
    sample: bool = False
    # …and, sampling, also at these temperatures: measured beside the recipe's own,
    # never applied (see RECIPE_KEYS).
    temperatures: tuple[float, ...] = ()
    seed: int | None = None  # sampling: pair i of a round draws with seed + i
    # Also measure adaptive drafting up to the longest draft length, once for every
    # combination of the other values (a saved plan without it measured fixed only).
    adaptive: bool = False

    def settings(self) -> list[Setting]:
        temperatures = (None, *self.temperatures) if self.sample else (None,)
        others = (
            self.draft_threads,
            self.draft_precisions,
            self.draft_memories,
            self.target_threads,
            temperatures,
        )
        fixed = [Setting(*values) for values in itertools.product(self.draft_lengths, *others)]
        if not (self.adaptive and self.draft_lengths):
            return fixed
        cap = max(self.draft_lengths)
        return fixed + [
            Setting(cap, *values, adaptive=True) for values in itertools.product(*others)
        ]

    @property
    def min_rounds(self) -> int:
        """Rounds before stopping is considered: enough pairs for a 95 % interval."""
        return max(self.repeats, -(-MIN_PAIRS // max(len(self.prompts), 1)))

    @property
    def pairs_per_setting(self) -> int:
        """Pairs each setting gets at least (more while its interval is wide)."""
        return self.min_rounds * len(self.prompts)

    def swept_fields(self) -> tuple[str, ...]:
        """The Setting fields this plan varies (adaptive: it measures both ways)."""
        swept = [f for f, plan in _PLAN_FIELDS.items() if len(set(getattr(self, plan))) > 1]
        return (*swept, ADAPTIVE) if self.adaptive else tuple(swept)

    def set_fields(self, running: dict[str, Any] | None) -> tuple[str, ...]:
        """The Setting fields this plan measures other than the recipes run them: those
        it sweeps, and those it holds at another value than `running` (recipe_defaults
        at the start). Only these are applied; the rest was measured as it runs. Without
        `running` (a run saved before it was kept): the swept fields. Adaptive drafting
        only when the plan measured it: a plan of fixed lengths says nothing of it,
        whatever the pack runs."""
        if running is None:
            return self.swept_fields()
        held = [
            f for f, plan in _PLAN_FIELDS.items() if set(getattr(self, plan)) != {running.get(f)}
        ]
        return (*held, ADAPTIVE) if self.adaptive else tuple(held)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        return {k: list(v) if isinstance(v, tuple) else v for k, v in data.items()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SweepPlan:
        fields = cls.__dataclass_fields__
        values: dict[str, Any] = {
            k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k in fields
        }
        return cls(**values)


@dataclass(frozen=True)
class ThreadCount:
    """A model's thread count: what its recipe file asks for and what the engine runs
    (app/engine/worker/mnn_llm.py runtime_config: a count read from config.json is held
    to the physical cores; one the draft's recipe sets is passed to MNN as it is)."""

    field: str  # "target_threads" or "draft_threads"
    file: str  # the file the count comes from
    asked: int
    runs: int
    cores: int

    def note(self) -> str:
        """What the form says when the count is not simply the file's (empty: it is)."""
        who = "Target" if self.field == "target_threads" else "Draft"
        if self.runs < self.asked:
            return (
                f"{who} threads: {self.file} asks for {self.asked}; this computer has "
                f"{self.cores} physical cores, so it runs {self.runs}, and {self.runs} is "
                "what is measured (and kept unless swept)."
            )
        if self.asked > self.cores:
            return (
                f"{who} threads: {self.file} asks for {self.asked}, more than this "
                f"computer's {self.cores} physical cores; it runs so (the threads compete), "
                f"and {self.asked} is what is measured as the current recipe."
            )
        return ""


def thread_counts(target: Path, draft: Path, cores: int | None = None) -> list[ThreadCount]:
    """The target's and the draft's thread counts as the engine runs them: a count the
    engine hands MNN (this computer's settings, the draft's recipe, the thread count a
    phone recipe's GPU mode becomes here: recipe/files.py) runs as it is; one MNN reads
    from config.json is held to the physical cores."""
    limit = cores or physical_cores()

    def count(bundle: Path, field: str, given: dict[str, Any], files: list[str]) -> ThreadCount:
        explicit = given.get("thread_num")
        if isinstance(explicit, int) and not isinstance(explicit, bool):
            named = next((f for f in files if "thread_num" in _layer(bundle, f)), CONFIG)
            return ThreadCount(field, named, explicit, explicit, limit)
        saved = read_recipe(bundle / CONFIG).get("thread_num")
        asked = saved if isinstance(saved, int) and saved > 0 else FIELDS["thread_num"].default
        return ThreadCount(field, CONFIG, int(asked), min(int(asked), limit), limit)

    recipe = draft_recipe_path(draft).name
    return [
        count(target, "target_threads", target_settings(target), [_HERE + CONFIG]),
        count(
            draft,
            "draft_threads",
            draft_settings(draft),
            [_HERE + recipe, recipe, _HERE + CONFIG],
        ),
    ]


# A layer of this computer's settings, in `_layer`'s names, and as the thread note says it.
_HERE = "this computer's settings for "


def _layer(bundle: Path, name: str) -> dict[str, Any]:
    """The keys of one layer of what a model runs with (see thread_counts)."""
    if name.startswith(_HERE):
        return desktop_overlay(bundle, name.removeprefix(_HERE))
    return read_recipe(bundle / name)


def recipe_defaults(target: Path, draft: Path, cores: int | None = None) -> dict[str, Any]:
    """The current recipe's values for the swept keys as the engine runs them: MNN's
    defaults where unset, the draft's recipe over its config.json, thread counts as
    `thread_counts` says (llmexport writes 4; on a 2-core machine a target runs 2), and
    whether the draft pack drafts adaptively (its drafting file)."""
    t, d = run_recipes(target, draft)

    def get(data: dict[str, Any], key: str) -> Any:
        return data.get(key, FIELDS[key].default)

    threads = {count.field: count.runs for count in thread_counts(target, draft, cores)}
    return {
        "draft_length": int(get(t, "draft_predict_length")),
        "draft_threads": threads["draft_threads"],
        "draft_precision": str(get(d, "precision")),
        "draft_memory": str(get(d, "memory")),
        "target_threads": threads["target_threads"],
        ADAPTIVE: read_drafting(draft).adaptive,
    }


def verifies_exactly(target: Path) -> bool:
    """Whether the target's recipe verifies d+1 tokens exactly as single steps: memory
    "low" quantizes activations per call, so a batched verify may pick other tokens
    (the engine's `lossless_expected`, for a target that is not linear-attention)."""
    return bool(target_run_recipe(target).get("memory", FIELDS["memory"].default) != "low")


def plan_for(kind: str, defaults: dict[str, Any], cores: int | None = None) -> SweepPlan:
    """ "quick": draft length 1-4, everything else as the recipe has it. "thorough": draft
    length 1-8, threads up to the cores, both precisions and memory modes, two repeats.
    Both measure adaptive drafting up to the longest length beside the fixed ones."""
    if kind == "quick":
        return SweepPlan(
            draft_lengths=(1, 2, 3, 4),
            draft_threads=(defaults["draft_threads"],),
            draft_precisions=(defaults["draft_precision"],),
            draft_memories=(defaults["draft_memory"],),
            target_threads=(defaults["target_threads"],),
            adaptive=True,
        )
    threads = tuple(range(1, (cores or physical_cores()) + 1))
    return SweepPlan(
        draft_lengths=tuple(range(1, 9)),
        draft_threads=threads,
        draft_precisions=("low", "high"),
        draft_memories=("low", "normal"),
        target_threads=threads,
        repeats=2,
        adaptive=True,
    )


def prompts_from_text(text: str) -> tuple[str, ...]:
    """The prompts in `text`, separated by an empty line (the defaults when none)."""
    prompts = tuple(p.strip() for p in text.split("\n\n") if p.strip())
    return prompts or DEFAULT_PROMPTS


def temperatures_from_text(text: str) -> tuple[float, ...]:
    """The temperatures in `text`, separated by commas or spaces, in order and each once;
    a ValueError saying which one is not a temperature (a number, 0 or more)."""
    values = []
    for part in text.replace(",", " ").split():
        try:
            value = float(part)
        except ValueError:
            raise ValueError(f"“{part}” is not a number") from None
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"temperature {part} is out of range (0 or more)")
        values.append(value)
    return tuple(dict.fromkeys(values))


def with_sampling(
    plan: SweepPlan, recipe: SamplerSettings, temperatures: tuple[float, ...], seed: int | None
) -> SweepPlan:
    """`plan` measured with the recipe's sampler, and also at `temperatures` (not the
    recipe's own: that one is measured anyway, as the recipe's sampler)."""
    extra = tuple(t for t in temperatures if t != recipe.temperature)
    return replace(plan, sample=True, temperatures=extra, seed=seed)


def sampling_text(plan: SweepPlan, sampler: str | None, exact: bool | None = None) -> str:
    """Which sampler a sweep decodes with, for a person: greedy, or the recipe's
    (`sampler`: its description) with its seed and the temperatures also measured.
    Greedy output equals plain output only when the recipe verifies exactly (`exact`:
    verifies_exactly; None: not known, a saved run without its recipe)."""
    if not plan.sample:
        head = "Greedy: the target's most likely token every time. "
        if exact:
            return head + (
                "This target's recipe verifies exactly (memory not “low”), so speculative "
                "output must equal plain output."
            )
        if exact is None:
            return head + (
                "Speculative output equals plain output only when the recipe verifies "
                "exactly (see Lossless)."
            )
        return head + (
            "Speculative output equals plain output only when the recipe verifies "
            "exactly; this target's memory “low” quantizes the verify, so it may differ "
            "(see Lossless)."
        )
    text = f"Sampled with the recipe's sampler: {sampler or 'as the recipe has it'}"
    if plan.seed is not None:
        text += f" · seed {plan.seed} (type it in Seed to repeat the draws)"
    if plan.temperatures:
        listed = ", ".join(f"{t:g}" for t in plan.temperatures)
        text += f" · also at temperature {listed} (measured, never applied)"
    return text + "."
