"""The recipe's sampler, read the way MNN 3.6.1's C++ reads it.

Source: MNN 3.6.1 `transformers/llm/engine/src/llmconfig.hpp` (key names and the
defaults of an absent key) and `sampler.cpp` (`configSampler`, `buildPipeline`); the
sampler code is unchanged in later commits apart from a device-side top-k prefilter.

Keys and their defaults when absent from the recipe:
    sampler_type "mixed"; mixed_samplers ["topK", "tfs", "typical", "topP", "min_p",
    "temperature"]; temperature 1.0; top_k, else topK 40 (top_k counts only if >= 0);
    top_p, else topP 0.9; min_p, else minP 0.1; tfs_z, else tfsZ 1.0; typical 1.0;
    repetition_penalty, else penalty 1.0; presence_penalty 0.0; frequency_penalty 0.0;
    penalty_window 0; n_gram 8; ngram_factor 1.0; penalty_sampler "greedy"; logit_bias
    {} (token id as a string → bias); banned_tokens [].

How MNN turns them into a sampler (replicated here, surprises included):
- Each sampler type reads only its own keys; an unread value keeps the C++
  `SamplerConfig` default, which differs from the key's default above: temperature 0.8,
  minP 0.05, typical 0.95, ngram_factor 1.02. So `sampler_type: topK` samples at
  temperature 0.8 whatever `temperature` says, and so does `penalty` with
  `penalty_sampler: temperature`.
- `mixed` configures every name in `mixed_samplers` and runs them in that order, but
  moves `penalty` to the front; logit_bias then banned_tokens come before all of them
  (mixed only). The last name decides the final pick: `greedy` takes the argmax of what
  is left, anything else draws from it. `temperature` is not a step: every
  probability-based step (topP, min_p, tfs, typical) and the final draw use
  softmax(logits / temperature) over the tokens still kept.
- `penalty` as the sampler type runs the penalty, then picks by `penalty_sampler`
  ("greedy", default, or a draw at temperature 0.8).
- min_p is an absolute threshold on the probability (not relative to the top token as in
  llama.cpp); tfs with its default z = 1.0 still drops the two least likely candidates.

Deliberate differences (MNN would misbehave): top_k 0 (or below) means no top-k limit
(MNN keeps no token at all); temperature 0 (or below) means greedy on the penalised
logits (MNN divides by zero); an unknown sampler name is refused with ValueError (MNN
silently samples at temperature 0.8).

Seeds are DraftDeck's own: MNN 3.6.1 has no seed key (it seeds from random_device).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

SAMPLER_TYPES = (
    "greedy",
    "temperature",
    "topK",
    "topP",
    "minP",
    "min_p",
    "tfs",
    "typical",
    "penalty",
    "mixed",
)
DEFAULT_MIXED = ("topK", "tfs", "typical", "topP", "min_p", "temperature")
# Pipeline step names (MNN's, with min_p spelled minP). The sampler runs them in order.
STEPS = ("logit_bias", "banned_tokens", "penalty", "topK", "tfs", "typical", "topP", "minP")


@dataclass(frozen=True)
class SamplerSettings:
    """An effective sampler: the steps MNN would run and the values they use.

    Field defaults are MNN's C++ `SamplerConfig` defaults (the values a sampler type
    that does not read a key keeps); `sampler_settings({})` gives MNN's default recipe.
    """

    steps: tuple[str, ...] = ()  # filters in order, names from STEPS
    greedy: bool = False  # final pick: argmax of what is left, else a draw
    temperature: float = 0.8
    top_k: int = 40
    top_p: float = 0.9
    min_p: float = 0.05
    tfs_z: float = 1.0
    typical: float = 0.95
    repetition_penalty: float = 1.0
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    penalty_window: int = 0
    n_gram: int = 8
    ngram_factor: float = 1.02
    max_penalty: float = 10.0
    logit_bias: tuple[tuple[int, float], ...] = ()
    banned_tokens: tuple[int, ...] = ()

    @property
    def is_greedy(self) -> bool:
        """The pick is deterministic (no random draw)."""
        return self.greedy or self.temperature <= 0.0

    def describe(self) -> str:
        """A short label for a UI or a report, e.g. "temperature 0.6, topK 20, topP 0.95"."""
        if self.greedy and not self.steps:
            return "greedy"
        values = {
            "penalty": f"penalty {self.repetition_penalty:g}",
            "topK": f"topK {self.top_k}",
            "topP": f"topP {self.top_p:g}",
            "minP": f"minP {self.min_p:g}",
            "tfs": f"tfs {self.tfs_z:g}",
            "typical": f"typical {self.typical:g}",
        }
        parts = [values[s] for s in self.steps if s in values]
        pick = "greedy" if self.is_greedy else f"temperature {self.temperature:g}"
        return ", ".join([pick, *parts])


GREEDY = SamplerSettings(greedy=True)


def sampler_settings(recipe: Mapping[str, object]) -> SamplerSettings:
    """The sampler MNN 3.6.1 builds from a recipe (config.json / config_cpu.json)."""
    kind = _str(recipe, "sampler_type", "mixed")
    settings = _configure(SamplerSettings(), kind, recipe)
    if kind == "mixed":
        names = _names(recipe)
        for name in names:
            if name == "mixed":
                raise ValueError("mixed_samplers cannot contain 'mixed'")
            settings = _configure(settings, name, recipe)
        # MNN moves the penalty to the front; greedy and temperature are no steps.
        ordered = ["penalty"] if "penalty" in names else []
        ordered += [_step(n) for n in names if n not in ("penalty", "greedy", "temperature")]
        bias = _bias(recipe)
        banned = tuple(_int_list(recipe, "banned_tokens"))
        prefix = (("logit_bias",) if bias else ()) + (("banned_tokens",) if banned else ())
        settings = replace(
            settings,
            steps=prefix + tuple(ordered),
            # MNN reads the last name after moving the penalty to the front.
            greedy=[n for n in names if n != "penalty"][-1:] == ["greedy"],
            logit_bias=bias,
            banned_tokens=banned,
            # mixed reads these whatever the list holds (they matter only with penalty).
            repetition_penalty=_repetition(recipe),
            presence_penalty=_float(recipe, "presence_penalty", 0.0),
            frequency_penalty=_float(recipe, "frequency_penalty", 0.0),
            penalty_window=_int(recipe, "penalty_window", 0),
        )
    elif kind not in ("greedy", "temperature"):
        settings = replace(settings, steps=(_step(kind),))
    return settings


def with_overrides(
    settings: SamplerSettings,
    *,
    temperature: float | None = None,
    top_k: int | None = None,
    top_p: float | None = None,
    greedy: bool = False,
) -> SamplerSettings:
    """The settings with command-line choices applied (`--temperature`, `--top-k`, ...).

    `greedy` wins over everything (plain argmax, no steps). A temperature above 0 turns
    a greedy pick into a draw. A top-k or top-p the sampler did not have is added as a
    step at its place in MNN's default mixed order.
    """
    if greedy:
        return GREEDY
    if temperature is not None:
        settings = replace(settings, temperature=temperature, greedy=temperature <= 0.0)
    if top_k is not None:
        settings = replace(settings, top_k=top_k, steps=_with_step(settings.steps, "topK"))
    if top_p is not None:
        settings = replace(settings, top_p=top_p, steps=_with_step(settings.steps, "topP"))
    return settings


# -- MNN's configSampler, one type at a time ---------------------------------------------


def _configure(s: SamplerSettings, kind: str, recipe: Mapping[str, object]) -> SamplerSettings:
    if kind not in SAMPLER_TYPES:
        raise ValueError(f"unknown sampler {kind!r} (MNN knows {', '.join(SAMPLER_TYPES)})")
    if kind == "greedy":
        return replace(s, greedy=True)
    if kind == "mixed":
        return s
    if kind == "topK":
        return replace(s, top_k=_top_k(recipe), greedy=False)
    if kind == "penalty":
        return replace(
            s,
            repetition_penalty=_repetition(recipe),
            presence_penalty=_float(recipe, "presence_penalty", 0.0),
            frequency_penalty=_float(recipe, "frequency_penalty", 0.0),
            penalty_window=_int(recipe, "penalty_window", 0),
            n_gram=_int(recipe, "n_gram", 8),
            ngram_factor=_float(recipe, "ngram_factor", 1.0),
            greedy=_str(recipe, "penalty_sampler", "greedy") == "greedy",
        )
    # temperature, topP, minP, tfs, typical: each reads the temperature too.
    s = replace(s, temperature=_float(recipe, "temperature", 1.0), greedy=False)
    if kind == "topP":
        return replace(s, top_p=_either(recipe, "top_p", "topP", 0.9))
    if kind in ("minP", "min_p"):
        return replace(s, min_p=_either(recipe, "min_p", "minP", 0.1))
    if kind == "tfs":
        return replace(s, tfs_z=_either(recipe, "tfs_z", "tfsZ", 1.0))
    if kind == "typical":
        return replace(s, typical=_float(recipe, "typical", 1.0))
    return s


def _step(name: str) -> str:
    if name not in SAMPLER_TYPES or name in ("mixed", "greedy", "temperature"):
        raise ValueError(f"unknown sampler {name!r}")
    return "minP" if name == "min_p" else name


def _with_step(steps: tuple[str, ...], name: str) -> tuple[str, ...]:
    if name in steps:
        return steps
    rank = STEPS.index(name)
    at = next((i for i, s in enumerate(steps) if STEPS.index(s) > rank), len(steps))
    return (*steps[:at], name, *steps[at:])


# -- reading values as nlohmann::json's value(key, default) does --------------------------


def _names(recipe: Mapping[str, object]) -> list[str]:
    raw = recipe.get("mixed_samplers", list(DEFAULT_MIXED))
    if not isinstance(raw, list | tuple) or not all(isinstance(n, str) for n in raw):
        raise ValueError("mixed_samplers must be a list of sampler names")
    return [str(n) for n in raw]


def _str(recipe: Mapping[str, object], key: str, default: str) -> str:
    value = recipe.get(key, default)
    if not isinstance(value, str):
        raise ValueError(f"{key} must be a string")
    return value


def _float(recipe: Mapping[str, object], key: str, default: float) -> float:
    value = recipe.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{key} must be a number")
    return float(value)


def _int(recipe: Mapping[str, object], key: str, default: int) -> int:
    value = recipe.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{key} must be a number")
    return int(value)


def _either(recipe: Mapping[str, object], new: str, old: str, default: float) -> float:
    """MNN's "backward compatible" pairs: the new key counts only when it is >= 0."""
    value = _float(recipe, new, -1.0)
    return value if value >= 0.0 else _float(recipe, old, default)


def _top_k(recipe: Mapping[str, object]) -> int:
    value = _int(recipe, "top_k", -1)
    return value if value >= 0 else _int(recipe, "topK", 40)


def _repetition(recipe: Mapping[str, object]) -> float:
    return _either(recipe, "repetition_penalty", "penalty", 1.0)


def _int_list(recipe: Mapping[str, object], key: str) -> list[int]:
    raw = recipe.get(key, [])
    if not isinstance(raw, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in raw
    ):
        raise ValueError(f"{key} must be a list of token ids")
    return [int(v) for v in raw]


def _bias(recipe: Mapping[str, object]) -> tuple[tuple[int, float], ...]:
    raw = recipe.get("logit_bias", {})
    if not isinstance(raw, Mapping):
        raise ValueError("logit_bias must map token ids to numbers")
    out: dict[int, float] = {}  # one bias per id, as MNN's map keeps (keys "5", "05")
    for key, value in raw.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError("logit_bias must map token ids to numbers")
        out[_atoi(str(key))] = float(value)
    return tuple(sorted(out.items()))


def _atoi(text: str) -> int:
    """C's atoi, as MNN reads logit_bias keys: leading digits, else 0."""
    text = text.strip()
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-")
    n = len(digits) - len(digits.lstrip("0123456789"))
    return sign * int(digits[:n]) if n else 0
