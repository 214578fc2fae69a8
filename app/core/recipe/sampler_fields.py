"""The sampler's recipe keys: every key sampler_settings reads, under MNN 3.6.1's
spellings, with the defaults MNN uses when the key is absent (see sampler_settings'
notes for where they come from).

MNN reads five settings under two spellings ("backward compatible" pairs in
llmconfig.hpp): the newer one counts when it is set and at least 0, else the older one.
`spelling_in_use` says which of the two a recipe's value is read from, so that a form
shows and edits the key that counts, in the file's own spelling.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import suppress
from typing import Any

from app.core.recipe.field import Field
from app.core.recipe.sampler_settings import DEFAULT_MIXED, SAMPLER_TYPES, sampler_settings

# The newer spelling, and the older one MNN reads when the newer is absent or below 0.
OLDER_SPELLINGS = {
    "top_k": "topK",
    "top_p": "topP",
    "min_p": "minP",
    "tfs_z": "tfsZ",
    "repetition_penalty": "penalty",
}
# The names mixed_samplers may list ("mixed" in it is refused, as MNN would loop).
STEP_NAMES = tuple(name for name in SAMPLER_TYPES if name != "mixed")
# The sampler's rows on a form, one per setting (the newer spelling names a pair);
# logit_bias and banned_tokens are token-id lists, edited in the JSON.
SAMPLER_FORM_KEYS = (
    "sampler_type",
    "mixed_samplers",
    "temperature",
    "top_k",
    "top_p",
    "min_p",
    "tfs_z",
    "typical",
    "repetition_penalty",
    "presence_penalty",
    "frequency_penalty",
    "penalty_window",
    "n_gram",
    "ngram_factor",
    "penalty_sampler",
)


def _older(new: Field) -> Field:
    """The older spelling of `new`: the same setting, read only when `new` does not count."""
    return Field(
        OLDER_SPELLINGS[new.key],
        new.kind,
        new.default,
        f"MNN's older spelling of {new.key}, read when {new.key} is not set (or below 0). "
        + new.help,
        minimum=new.minimum,
        maximum=new.maximum,
    )


_TOP_K = Field(
    "top_k",
    "int",
    40,
    "Keep the K most likely tokens (0: no limit; ignored by greedy).",
    minimum=0,
    maximum=1_000_000,
    docs_note="The code reads top_k first (unset: -1), then topK (default 40).",
)
_TOP_P = Field(
    "top_p",
    "float",
    0.9,
    "Keep the smallest set of tokens reaching this probability (ignored by greedy).",
    minimum=0.0,
    maximum=1.0,
    docs_note="The code reads top_p first (unset: -1), then topP (default 0.9).",
)
_MIN_P = Field(
    "min_p",
    "float",
    0.1,
    "Drop tokens less likely than this probability; MNN compares the probability "
    "itself, not a share of the top token's as llama.cpp does (ignored by greedy).",
    minimum=0.0,
    maximum=1.0,
    docs_note="The code reads min_p first (unset: -1), then minP (default 0.1); a "
    "sampler type that does not read it uses 0.05.",
)
_TFS_Z = Field(
    "tfs_z",
    "float",
    1.0,
    "Tail-free sampling: drop the flat tail of the sorted probabilities (1.0 still drops "
    "the two least likely candidates; ignored by greedy).",
    minimum=0.0,
    maximum=1.0,
    docs_note="The code reads tfs_z first (unset: -1), then tfsZ (default 1.0).",
)
_REPETITION = Field(
    "repetition_penalty",
    "float",
    1.0,
    "Penalty for repeating tokens (1.0: none).",
    minimum=0.0,
    maximum=10.0,
    docs_note="The code reads repetition_penalty first (unset: -1), then penalty (default 1.0).",
)

SAMPLER_FIELDS: tuple[Field, ...] = (
    Field(
        "sampler_type",
        "choice",
        "mixed",
        "How the next token is picked. Chat samples with it (speculative sampling keeps "
        "the target's distribution exactly) unless you choose Greedy there; bench and "
        "tune use greedy, to compare speeds exactly, unless given --sample. mixed runs "
        "the steps listed in mixed_samplers; any other type runs that one step.",
        choices=SAMPLER_TYPES,
    ),
    Field(
        "mixed_samplers",
        "names",
        list(DEFAULT_MIXED),
        "The steps mixed runs, in order (MNN moves penalty to the front); the last name "
        "decides the pick: greedy takes the most likely token left, any other draws one.",
        choices=STEP_NAMES,
    ),
    Field(
        "temperature",
        "float",
        1.0,
        "Randomness of sampling: below 1 favours likely tokens, above 1 flattens the "
        "choice (ignored by greedy).",
        minimum=0.0,
        maximum=100.0,
        docs_note="A sampler type that does not read it (topK, penalty) uses 0.8.",
    ),
    _TOP_K,
    _older(_TOP_K),
    _TOP_P,
    _older(_TOP_P),
    _MIN_P,
    _older(_MIN_P),
    _TFS_Z,
    _older(_TFS_Z),
    Field(
        "typical",
        "float",
        1.0,
        "Typical sampling: keep the tokens whose surprise is closest to the average, up "
        "to this probability mass (1.0: keep all; ignored by greedy).",
        minimum=0.0,
        maximum=1.0,
        docs_note="A sampler type that does not read it uses 0.95.",
    ),
    _REPETITION,
    _older(_REPETITION),
    Field(
        "presence_penalty",
        "float",
        0.0,
        "Subtracted from the logit of every token already in the conversation, however "
        "often it came (0.0: none; only where the penalty step runs).",
        minimum=-10.0,
        maximum=10.0,
    ),
    Field(
        "frequency_penalty",
        "float",
        0.0,
        "Subtracted from a token's logit once for every time it already came (0.0: none; "
        "only where the penalty step runs).",
        minimum=0.0,
        maximum=10.0,
    ),
    Field(
        "penalty_window",
        "int",
        0,
        "How many of the latest tokens the penalties look at (0: the whole conversation).",
        minimum=0,
        maximum=1_000_000,
    ),
    Field(
        "n_gram",
        "int",
        8,
        "Longest repeated run of tokens the n-gram penalty looks for (only with "
        "ngram_factor above 1).",
        minimum=1,
        maximum=1024,
    ),
    Field(
        "ngram_factor",
        "float",
        1.0,
        "Extra penalty per token of a repeated run, multiplied in (1.0: none).",
        minimum=0.0,
        maximum=10.0,
        docs_note="A sampler type that does not read it (mixed) uses 1.02.",
    ),
    Field(
        "penalty_sampler",
        "choice",
        "greedy",
        "How sampler_type penalty picks after the penalty: greedy, or a draw at temperature 0.8.",
        choices=("greedy", "temperature"),
    ),
    Field(
        "logit_bias",
        "bias",
        {},
        "Added to the logits of the token ids given, as an object from id to a number "
        "(mixed only).",
    ),
    Field(
        "banned_tokens",
        "ids",
        [],
        "Token ids that are never picked (mixed only).",
    ),
)


def spelling_in_use(data: Mapping[str, Any], key: str) -> str:
    """The key a recipe's value for setting `key` is read from: the older spelling when
    the recipe has it and the newer one does not count (absent or below 0)."""
    older = OLDER_SPELLINGS.get(key)
    if older is None or older not in data:
        return key
    if key not in data:
        return older
    value = data[key]
    number = isinstance(value, int | float) and not isinstance(value, bool)
    # A value that is no number is the newer key's problem, shown under its name.
    return older if number and value < 0 else key


class _Noted(Mapping[str, Any]):
    """A recipe that notes every key asked for (sampler_settings asks with `get`)."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = data
        self.asked: set[str] = set()

    def __getitem__(self, key: str) -> Any:
        self.asked.add(key)
        return self.data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)


PENALTY_KEYS = frozenset(
    {"repetition_penalty", "penalty", "presence_penalty", "frequency_penalty", "penalty_window"}
)


def keys_read(recipe: Mapping[str, Any]) -> frozenset[str]:
    """Every key MNN's sampler reads from this recipe (each sampler type reads only its
    own; up to the refusal for a recipe the reader refuses)."""
    noted = _Noted(recipe)
    with suppress(ValueError):  # the keys read before the refusal still count
        sampler_settings(noted)
    return frozenset(noted.asked)


def keys_used(recipe: Mapping[str, Any]) -> frozenset[str]:
    """The keys MNN's sampler takes a value from in this recipe: those it reads, but
    for mixed the penalties only with penalty in its list (it reads them whatever the
    list holds)."""
    read = keys_read(recipe)
    try:
        steps = sampler_settings(recipe).steps
    except ValueError:
        return read
    return read if "penalty" in steps else read - PENALTY_KEYS
