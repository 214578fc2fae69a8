"""The recipe keys DraftDeck knows: type, allowed values, MNN's default, and why it matters.

A recipe is the draft's `config_cpu.json` plus the target's run settings in its
`config.json`. Defaults are MNN 3.6.1's code defaults (transformers/llm/engine/src/
llmconfig.hpp); where MNN's documentation says otherwise, `docs_note` says so. The
sampler's keys, every one sampler_settings reads, are in sampler_fields. Keys not listed
here are kept, shown and written back untouched.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

# Where most callers take them from.
from app.core.recipe.field import DRAFT as DRAFT
from app.core.recipe.field import TARGET as TARGET
from app.core.recipe.field import Field as Field
from app.core.recipe.files import draft_run_recipe
from app.core.recipe.sampler_fields import SAMPLER_FIELDS

ERROR = "error"
WARNING = "warning"
# The pip build of MNN for desktops runs on the CPU only (measured: asking for opencl,
# vulkan, metal or cuda logs "Can't Find type=N backend, use 0 instead").
DESKTOP_BACKENDS = frozenset({"cpu"})
# Where what runs on this computer is set: the Recipes page's group (recipe_desktop.py)
# and the command line's `recipe set --this-computer`.
ON_THIS_COMPUTER = "On this computer (draftdeck recipe set --this-computer)"


FIELDS: dict[str, Field] = {
    f.key: f
    for f in (
        Field(
            "backend_type",
            "choice",
            "cpu",
            "Where the model runs. Phones run the target on the GPU (opencl) and the draft on "
            "the CPU so the two work side by side.",
            choices=("cpu", "opencl", "vulkan", "metal", "cuda", "npu"),
        ),
        Field(
            "thread_num",
            "int",
            4,
            "CPU threads. On phones 2 threads often beat 4: more threads spill onto the slow "
            "efficiency cores and the scheduler lowers the clock.",
            minimum=1,
            maximum=256,
            docs_note="With opencl MNN reads this as a GPU mode (68 is usual), not threads.",
        ),
        Field(
            "precision",
            "choice",
            "low",
            "Arithmetic precision: low uses fp16 where the hardware has it (faster); high "
            "keeps fp32.",
            choices=("low", "normal", "high"),
        ),
        Field(
            "memory",
            "choice",
            "low",
            "Memory mode: low quantizes activations at run time (less memory, faster), which "
            "can make a multi-token verify differ from single steps, so speculative output is "
            "no longer guaranteed identical to plain decoding; normal keeps it lossless.",
            choices=("low", "normal", "high"),
        ),
        Field(
            "power",
            "choice",
            "normal",
            "Power hint for the CPU scheduler; high keeps threads on the fast cores.",
            choices=("low", "normal", "high"),
        ),
        Field(
            "speculative_type",
            "choice",
            "",
            "MNN's own speculative mode. TokForge's recipes say draftmodel; stock MNN ignores "
            "it, and DraftDeck runs the draft itself.",
            choices=("", "draftmodel", "lookahead", "mtp", "eagle", "dflash"),
            scopes=(TARGET,),
        ),
        Field(
            "draft_predict_length",
            "int",
            3,
            "Tokens the draft proposes per round (d). Longer drafts win more when acceptance "
            "is high and waste more when it is not; 2 to 4 is typical.",
            minimum=1,
            maximum=16,
            scopes=(TARGET,),
            docs_note="MNN's documentation says the default is 4; its code uses 3.",
        ),
        Field(
            "draft_config_path",
            "path",
            "",
            "Path to the draft's recipe (config_cpu.json) on the phone. Leave it empty: "
            "pushing the pair (Phone page: Push Pair; draftdeck push TARGET --draft DRAFT) "
            "writes it into the phone's copy, pointing at the draft pushed beside it.",
            scopes=(TARGET,),
        ),
        Field(
            "max_new_tokens",
            "int",
            512,
            "Longest reply MNN generates by itself.",
            minimum=1,
            maximum=1_000_000,
        ),
        Field(
            "reuse_kv",
            "bool",
            False,
            "Keep the conversation's cache between turns (DraftDeck's engine always does).",
        ),
        Field(
            "use_mmap",
            "bool",
            False,
            "Map weights from disk instead of loading them into memory; helps phones with "
            "little RAM.",
        ),
    )
} | {f.key: f for f in SAMPLER_FIELDS}

DRAFT_FORM_KEYS = ("backend_type", "thread_num", "precision", "memory", "power", "sampler_type")
TARGET_FORM_KEYS = (
    "backend_type",
    "thread_num",
    "precision",
    "memory",
    "power",
    "sampler_type",
    "speculative_type",
    "draft_predict_length",
    "draft_config_path",
)


@dataclass(frozen=True)
class Problem:
    key: str | None
    message: str
    severity: str = ERROR

    def __str__(self) -> str:
        return f"{self.key}: {self.message}" if self.key else self.message


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _shape_error(field: Field, value: Any) -> str | None:
    """The sampler's lists and object, as sampler_settings accepts them."""
    if field.kind == "names":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return "must be a list of sampler names"
        wrong = [v for v in value if v not in field.choices]
        return f"{', '.join(map(repr, wrong))}: not a step MNN knows" if wrong else None
    if field.kind == "ids":
        ids = isinstance(value, list) and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value
        )
        return None if ids else "must be a list of token ids"
    numbers = isinstance(value, Mapping) and all(_is_number(v) for v in value.values())
    if not numbers or _has_non_finite(value):
        return "must map token ids to numbers"
    return None


def _kind_error(field: Field, value: Any) -> str | None:
    if field.kind in ("names", "ids", "bias"):
        return _shape_error(field, value)
    if field.kind == "bool":
        return None if isinstance(value, bool) else "must be true or false"
    if field.kind in ("choice", "path"):
        if not isinstance(value, str):
            return "must be text"
        if field.kind == "choice" and value not in field.choices:
            return f"{value!r} is not one of {', '.join(repr(c) for c in field.choices)}"
        return None
    numeric = _is_number(value)
    if field.kind == "int" and not (numeric and float(value).is_integer()):
        return "must be a whole number"
    if field.kind == "float" and not (numeric and math.isfinite(value)):
        return "must be a number"
    if field.minimum is not None and value < field.minimum:
        return f"must be at least {field.minimum:g}"
    if field.maximum is not None and value > field.maximum:
        return f"must be at most {field.maximum:g}"
    return None


def _has_non_finite(value: Any) -> bool:
    """NaN or Infinity anywhere in `value`: Python writes them, but they are not JSON."""
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, Mapping):
        return any(_has_non_finite(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_non_finite(v) for v in value)
    return False


def validate(data: Mapping[str, Any], scope: str) -> list[Problem]:
    """Every problem at once. Unknown keys are fine (they go to MNN untouched) as long as
    they are valid JSON."""
    problems = []
    for key, value in data.items():
        field = FIELDS.get(key)
        if field is None:
            if _has_non_finite(value):
                problems.append(Problem(key, "NaN and Infinity are not valid JSON"))
            continue
        error = _kind_error(field, value)
        if error:
            problems.append(Problem(key, error))
        elif scope not in field.scopes:
            problems.append(
                Problem(key, f"only means something in the {field.scopes[0]}'s config", WARNING)
            )
    return problems


def host_warnings(
    data: Mapping[str, Any],
    base_dir: Path,
    physical_cores: int | None,
    backends: Iterable[str] = DESKTOP_BACKENDS,
    capped: bool = False,
) -> list[Problem]:
    """What will differ on this computer: missing backends, too many threads, bad paths.
    `capped`: `data` is a config.json, whose thread count the engine holds to the
    physical cores (mnn_llm.runtime_config), so more threads run as fewer, not slower."""
    problems = []
    usable = set(backends)
    backend = data.get("backend_type")
    if isinstance(backend, str) and backend not in usable:
        problems.append(
            Problem(
                "backend_type",
                f"{backend} is the phone's: this computer's MNN has none, so DraftDeck runs "
                f"it on the cpu here. Keep {backend} for the phone; what runs here is set "
                f"under {ON_THIS_COMPUTER}.",
                WARNING,
            )
        )
    threads = data.get("thread_num")
    if (
        physical_cores
        and isinstance(threads, int)
        and not isinstance(threads, bool)
        and threads > physical_cores
        and data.get("backend_type", "cpu") == "cpu"
    ):
        # As Tune's thread note says it (tune_plan.ThreadCount): what really runs here.
        happens = (
            f"DraftDeck runs it with {physical_cores} here (config.json's thread count is "
            "held to the physical cores; a phone uses all of them)"
            if capped
            else "threads will compete and run slower"
        )
        problems.append(
            Problem(
                "thread_num",
                f"{threads} threads on {physical_cores} physical cores: {happens}. Set this "
                f"computer's thread count under {ON_THIS_COMPUTER}; the phone's recipe keeps "
                "its own.",
                WARNING,
            )
        )
    draft_path = data.get("draft_config_path")
    if isinstance(draft_path, str) and draft_path:
        path = Path(draft_path)
        if not path.is_absolute():
            path = base_dir / path
        if not path.is_file():
            problems.append(
                Problem(
                    "draft_config_path",
                    f"{draft_path} does not exist on this computer "
                    "(fine if it is the phone's path).",
                    WARNING,
                )
            )
    return problems


def inherited_threads_warning(
    data: Mapping[str, Any], base_dir: Path, cores: int | None
) -> list[Problem]:
    """A draft recipe without thread_num runs with the thread count of its pack's
    config.json (llmexport writes 4), which the Draft recipe form does not show."""
    if "thread_num" in data or not cores:
        return []
    inherited = draft_run_recipe(base_dir, recipe=data).get("thread_num")
    backend = data.get("backend_type", "cpu")
    if not isinstance(inherited, int) or inherited <= cores or backend != "cpu":
        return []
    return [
        Problem(
            "thread_num",
            f"not set here, so the draft takes the {inherited} threads of its "
            f"config.json, which DraftDeck holds to this computer's {cores} physical "
            f"cores: it runs with {cores} here. Set thread_num to choose.",
            WARNING,
        )
    ]


def physical_cores() -> int:
    """This computer's physical cores (1 if the system does not say)."""
    return psutil.cpu_count(logical=False) or 1


def desktop_value_warnings(data: Mapping[str, Any]) -> list[Problem]:
    """Values in a recipe (the phone's) that only ever mean a desktop."""
    if data.get("memory") != "normal":
        return []
    return [
        Problem(
            "memory",
            "normal is a desktop value: it keeps fp32 weights (an 8B target needs some 32 GB, "
            f"more than a phone has). Set it under {ON_THIS_COMPUTER} instead; Move to This "
            "Computer takes it out of the recipe.",
            WARNING,
        )
    ]


def recipe_problems(
    data: Mapping[str, Any],
    scope: str,
    base_dir: Path,
    here: Mapping[str, Any] | None = None,
) -> list[Problem]:
    """Everything to say about a recipe on this computer: its own problems, then what
    differs here (backends, threads, paths relative to `base_dir`), with this computer's
    settings over it (`here`: what runs here is theirs, so a key they set is not warned
    about as the recipe's)."""
    cores = psutil.cpu_count(logical=False)
    here = here or {}
    inherited = (
        inherited_threads_warning(data, base_dir, cores)
        if scope == DRAFT and "thread_num" not in here
        else []
    )
    # The target's recipe is its config.json (capped); a draft's is its own file.
    host = [
        p
        for p in host_warnings({**data, **here}, base_dir, cores, capped=scope == TARGET)
        if p.key not in here
    ]
    return validate(data, scope) + desktop_value_warnings(data) + host + inherited
