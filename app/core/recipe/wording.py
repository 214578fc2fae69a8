"""Recipe settings in the words a user reads ("Draft length 3", "Target backend OpenCL")
rather than MNN's keys, including the settings a pack recommends in its
runtime_config.json (under the pack's own keys)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.core.pack.verdict import Reason, describe

# presets owns the map from the pack's keys to the recipe's (and which side).
from app.core.recipe.presets import PACK_KEYS, Preset
from app.core.recipe.schema import DRAFT, FIELDS, TARGET

# How a sentence names a key and a backend (the JSON keeps MNN's spelling).
LABELS = {
    "backend_type": "backend",
    "thread_num": "threads",
    "precision": "precision",
    "memory": "memory mode",
    "power": "power mode",
    "sampler_type": "sampler",
    "speculative_type": "speculation",
    "draft_predict_length": "draft length",
    "draft_config_path": "draft recipe",
    "max_new_tokens": "new tokens at most",
    "reuse_kv": "reuse the KV cache",
    "use_mmap": "map weights from disk",
    "mixed_samplers": "sampler steps",
    "temperature": "temperature",
    "top_k": "top-k",
    "topK": "top-k",
    "top_p": "top-p",
    "topP": "top-p",
    "min_p": "min-p",
    "minP": "min-p",
    "tfs_z": "tail-free z",
    "tfsZ": "tail-free z",
    "typical": "typical-p",
    "repetition_penalty": "repetition penalty",
    "penalty": "repetition penalty",
    "presence_penalty": "presence penalty",
    "frequency_penalty": "frequency penalty",
    "penalty_window": "penalty window",
    "n_gram": "n-gram length",
    "ngram_factor": "n-gram penalty factor",
    "penalty_sampler": "pick after the penalty",
    "logit_bias": "logit bias",
    "banned_tokens": "banned tokens",
}
BACKEND_NAMES = {
    "cpu": "CPU",
    "opencl": "OpenCL",
    "vulkan": "Vulkan",
    "metal": "Metal",
    "cuda": "CUDA",
    "npu": "NPU",
}


def setting_text(key: str, value: Any, scope: str = "") -> str:
    """A recipe setting as a person reads it: "Draft length 3", "Target backend OpenCL"
    (the side named only for keys both sides have); an unknown key keeps its spelling."""
    field = FIELDS.get(key)
    if field is None:
        return f"{key} {describe(value)}"
    label = LABELS[key]
    if scope and len(field.scopes) > 1:
        label = f"{scope} {label}"
    backend = key == "backend_type" and isinstance(value, str)
    shown = BACKEND_NAMES.get(value, value) if backend else describe(value)
    return f"{label[0].upper()}{label[1:]} {shown}"


def recommended_text(recommended: Mapping[str, Any]) -> str:
    """E.g. "Draft length 3, Draft threads 2, Target backend OpenCL", in the pack's
    order; a key DraftDeck does not map keeps the pack's spelling."""
    shown = []
    for key, value in recommended.items():
        scope, recipe_key = PACK_KEYS.get(key, ("", key))
        shown.append(setting_text(recipe_key, value, scope))
    return ", ".join(shown) or "nothing"


def reason_text(reason: Reason) -> str:
    """A verdict reason's sentence, with a pack's recommended settings under the names
    the Recipes page uses (core/pack, which writes the reason, cannot know them)."""
    if reason.code == "pack_recipe" and isinstance(reason.draft, Mapping):
        return f"The pack recommends: {recommended_text(reason.draft)}."
    return reason.message


def preset_text(preset: Preset) -> str:
    """What a preset does, for the Recipes page: first the settings it sets in the form's
    words (what Apply does, the line the page shows), then its description, the pack's
    settings it leaves out and why, and the pack's notes."""
    sets = [setting_text(k, v, TARGET) for k, v in preset.target.items()]
    sets += [setting_text(k, v, DRAFT) for k, v in preset.draft.items()]
    lines = [f"Sets: {', '.join(sets) or 'nothing'}.", preset.description]
    if preset.unapplied:
        left = ", ".join(
            f"{key} {describe(value)} ({why})" for key, (value, why) in preset.unapplied.items()
        )
        lines.append(f"Not applied: {left}.")
    lines += [f"The pack's authors note: {note}" for note in preset.notes]
    return "\n".join(lines)
