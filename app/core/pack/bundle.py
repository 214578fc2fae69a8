"""Read an MNN LLM bundle folder into an immutable description, without loading weights.

The layout follows MNN's LlmConfig: `config.json` (runtime settings, may name the other
files) merged over `llm_config.json` (model facts written by llmexport). Reading takes
milliseconds: it parses two small JSON files, the tokenizer's header and added tokens
(the first read of a Qwen3-sized tokenizer takes 20-30 ms, then it is cached; the stop
ids come from stop_tokens.py), and parses the graph file (weights live in the separate
`.weight` file) for its operators' types (a type MNN 3.6.1 lacks is refused), its
linear-attention ops and the widths of its linear layers (the parameter count,
model_shape.py).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from app.core.infra.errors import (
    BadValueError,
    MissingFileError,
    NotABundleError,
    UnreadableFileError,
)
from app.core.infra.jsonfile import read_json_object
from app.core.pack.chat_format import JINJA, MNN_DEFAULTS, ChatFormat, chat_format
from app.core.pack.context_window import ContextWindow, context_window
from app.core.pack.embedding_layout import BF16_FILE, embedding_layout
from app.core.pack.export_format import ExportFormat, copied_embedding, export_format
from app.core.pack.files import (
    BUNDLE_MARKERS,
    CONFIG,
    DRAFT_RECIPE_FILES,
    NOT_PACK_SUFFIXES,
    RECIPE_FILES,
    RUNTIME_CONFIG,
    TOKENIZER_CANDIDATES,
    VISUAL_MODEL,
)
from app.core.pack.folder_checks import (
    PATH_KEYS,
    check_paths_inside,
    require_folder,
    require_nonempty,
)
from app.core.pack.graph_facts import GraphFacts, read_graph_facts
from app.core.pack.known_models import identify_shape
from app.core.pack.model_family import UNKNOWN, infer_family
from app.core.pack.model_shape import Dimensions, ModelShape, linear_bits, model_shape
from app.core.pack.quant_facts import QuantFacts, quant_facts
from app.core.pack.stop_tokens import with_pack_stops
from app.core.pack.tokenizer_info import TokenizerInfo, read_tokenizer_info
from app.core.pack.turn_markers import MissingTurnMarkers, missing_turn_markers

log = logging.getLogger("draftdeck.pack")

INFO_SCHEMA_VERSION = 1
ATTENTION_KINDS = ("full", "sliding", "mix")
BF16_BITS = 16
# Above this many parameters a model is too slow to be anyone's draft.
TARGET_MIN_PARAMS = 1_000_000_000


@dataclass(frozen=True)
class BundleFile:
    name: str
    size: int


@dataclass(frozen=True)
class BundleInfo:
    path: Path
    name: str
    files: tuple[BundleFile, ...]
    model_type: str
    attention: str
    linear_attention: bool
    mrope: bool
    hidden_size: int
    layers: int
    vocab_size: int | None
    quant_bits: int | None  # the linear layers' (the graph's, else model_shape.linear_bits)
    quant_block: int | None
    embedding_bits: int | None  # the token embedding's (16: bf16), when known
    tokenizer: TokenizerInfo
    chat: ChatFormat  # how a conversation becomes the prompt (chat_format.py)
    visual: bool
    recipe_files: tuple[str, ...]
    size_bytes: int
    params_estimate: int
    role: str
    runtime_config: MappingProxyType[str, Any]
    shape: ModelShape  # exact widths from the graph when it can be read (model_shape.py)
    export_format: ExportFormat  # which exporter wrote the pack, and what was inferred
    context: ContextWindow  # what fits under config.json and the model's own limit
    quant_facts: QuantFacts  # the graph's own quantization facts (symmetric, lm_head bits)
    # How model_type was inferred, in words (model_family.py); None: the pack names it.
    family_inferred: str | None = None

    @property
    def family_words(self) -> str:
        """The family as every view shows it: an inferred one says so and from what."""
        return self.family_inferred or self.model_type

    @property
    def family_short(self) -> str:  # for a table column
        guessed = self.family_inferred and self.model_type != UNKNOWN
        return self.model_type + (" (inferred)" if guessed else "")

    @property
    def quantization(self) -> str:
        """In words, as the details and `info` show it."""
        words = f"{self.quant_bits}-bit" if self.quant_bits else "unknown"
        if self.quant_block:
            words += f", block {self.quant_block}"
        if self.embedding_bits and self.embedding_bits != self.quant_bits:
            words += f"; embedding {self.embedding_bits}-bit"
        return words

    @property
    def turn_markers(self) -> MissingTurnMarkers | None:
        """Set when the chat format marks no turns (bare `%s` templates)."""
        return missing_turn_markers(self.chat, self.tokenizer)

    @property
    def chat_template_sha256(self) -> str | None:
        """The template as the pack spells it; None when it names none."""
        return None if self.chat.source == MNN_DEFAULTS else self.chat.sha256

    @property
    def chat_template_chars(self) -> int | None:  # its length, to tell two apart in words
        return None if self.chat.source == MNN_DEFAULTS else len(self.chat.text)

    def to_json(self) -> dict[str, Any]:
        """The stable `draftdeck info --json` interface (documented in the README)."""
        return {
            "schema": INFO_SCHEMA_VERSION,
            "name": self.name,
            "path": str(self.path),
            "model_type": self.model_type,
            "model_type_inferred": self.family_inferred is not None,
            "attention": self.attention,
            "linear_attention": self.linear_attention,
            "mrope": self.mrope,
            "hidden_size": self.hidden_size,
            "layers": self.layers,
            "vocab_size": self.vocab_size,
            "quant_bits": self.quant_bits,
            "quant_block": self.quant_block,
            "embedding_bits": self.embedding_bits,
            "tokenizer": self.tokenizer.to_json(),
            "chat_template_sha256": self.chat_template_sha256,
            "chat_template_chars": self.chat_template_chars,
            "chat_template_source": self.chat.source,
            "chat_prompt_sha256": self.chat.prompt_sha256,
            "chat_template_problem": self.chat.problem,
            "chat_missing_turn_markers": None
            if (bare := self.turn_markers) is None
            else bare.to_json(),
            "visual": self.visual,
            "recipe_files": list(self.recipe_files),
            "size_bytes": self.size_bytes,
            "params_estimate": self.params_estimate,
            "shape": self.shape.to_json(),
            "role": self.role,
            "export_format": self.export_format.to_json(),
            "context": self.context.to_json(),
            "files": [{"name": f.name, "size": f.size} for f in self.files],
        }


def looks_like_bundle(folder: Path) -> bool:
    """Cheap test used when scanning a library: does this folder claim to be a bundle?"""
    return any((folder / name).is_file() for name in BUNDLE_MARKERS)


def read_bundle(folder: Path) -> BundleInfo:
    """Describe the bundle in `folder`; raises a FileError subclass naming the bad file."""
    folder = Path(folder)
    try:
        return _read_bundle(folder)
    except FileNotFoundError as exc:
        # Each reader names its own missing file; a file (or the whole folder) removed
        # between those checks and a later read ends up here.
        gone = Path(exc.filename) if exc.filename else folder
        raise MissingFileError(gone, "disappeared while the pack was read") from None
    except OSError as exc:
        raise UnreadableFileError(Path(exc.filename or folder), exc.strerror or str(exc)) from None


def _read_bundle(folder: Path) -> BundleInfo:
    config, llm_config, llm_config_path = _read_configs(folder)
    # MNN merges config.json over llm_config.json: runtime settings win.
    merged = {**llm_config, **config}

    model_path = _resolve(folder, merged, "llm_model")
    weight_path = _resolve(folder, merged, "llm_weight")
    require_nonempty(model_path, "model graph")
    weight_bytes = require_nonempty(weight_path, "weight file")

    hidden = _positive_int(llm_config, "hidden_size", llm_config_path)
    layout = embedding_layout(folder, merged, llm_config_path, weight_path, hidden)
    graph = read_graph_facts(model_path)
    attention = _attention_kind(llm_config, llm_config_path)
    tokenizer = read_tokenizer_info(_tokenizer_path(folder, config))
    inferred: dict[str, str] = {}
    model_type = _model_type(llm_config, llm_config_path, tokenizer, graph, inferred)
    layers = _layers(llm_config, llm_config_path, graph, model_path, inferred)
    _require_weights_for(layers, hidden, weight_bytes, llm_config_path, weight_path)
    tokenizer = with_pack_stops(
        tokenizer, folder, config, llm_config, llm_config_path.name, model_type
    )
    chat = _chat(merged, tokenizer, inferred)
    recipes, runtime_config = _read_recipes(folder)

    files = _list_files(folder)
    copied = copied_embedding(llm_config, layout.spelling, tokenizer.file)
    if copied:
        inferred["embedding"] = copied
    tied = layout.tied or copied is not None
    dims = Dimensions(
        model_type, hidden, layers, layout.vocab or 0, tied, layout.bits, layout.block
    )
    shape = model_shape(dims, llm_config, graph.linears, weight_path)
    params = shape.params
    visual = bool(llm_config.get("is_visual")) or (folder / VISUAL_MODEL).is_file()
    quant = quant_facts(graph.linears, layout.symmetric)
    return BundleInfo(
        path=folder,
        name=folder.name,
        files=files,
        model_type=model_type,
        attention=attention,
        linear_attention=graph.linear_attention,
        mrope=bool(llm_config.get("is_mrope")),
        hidden_size=hidden,
        layers=layers,
        vocab_size=layout.vocab,
        # The graph's own word first: the size assumes asymmetric blocks that divide.
        quant_bits=quant.layer_bits
        or linear_bits(
            shape.weight_bytes, graph.linears, layout.weight_share, layout.block, layout.alpha_fp16
        )
        or layout.bits,
        quant_block=layout.block,
        embedding_bits=BF16_BITS if layout.spelling == BF16_FILE else layout.bits,
        tokenizer=tokenizer,
        chat=chat,
        visual=visual,
        recipe_files=recipes,
        # DraftDeck's own backups are not the pack's (hidden ones are not listed at all).
        size_bytes=sum(f.size for f in files if not f.name.endswith(NOT_PACK_SUFFIXES)),
        params_estimate=params,
        role=_role(recipes, params),
        runtime_config=MappingProxyType(runtime_config),
        shape=shape,
        export_format=export_format(llm_config, layout.spelling, tokenizer.file, inferred),
        context=context_window(merged, *_trained_window(merged, model_type, hidden, layers)),
        quant_facts=quant,
        family_inferred=inferred.get("model_type"),
    )


def _read_configs(folder: Path) -> tuple[dict[str, Any], dict[str, Any], Path]:
    """config.json, llm_config.json and the latter's path, each checked to name only
    files inside the folder."""
    require_folder(folder)
    if not looks_like_bundle(folder):
        markers = f"{', '.join(BUNDLE_MARKERS[:-1])} or {BUNDLE_MARKERS[-1]}"
        raise NotABundleError(folder, f"no {markers} here")
    config_path = folder / CONFIG
    config = read_json_object(config_path)
    check_paths_inside(folder, config, config_path)
    llm_config_path = _resolve(folder, config, "llm_config")
    llm_config = read_json_object(llm_config_path)
    check_paths_inside(folder, llm_config, llm_config_path)  # it may name files too
    return config, llm_config, llm_config_path


def _model_type(
    llm_config: Mapping[str, Any],
    path: Path,
    tokenizer: TokenizerInfo,
    graph: GraphFacts,
    inferred: dict[str, str],
) -> str:
    """model_type, or (older exporters omit it) the family the tokenizer and graph show."""
    model_type = llm_config.get("model_type")
    if model_type is None:
        family = infer_family(tokenizer, graph)
        inferred["model_type"] = family.words
        return family.name
    if not isinstance(model_type, str) or not model_type:
        raise BadValueError(path, f"model_type must be a name, found {model_type!r}")
    return model_type


def _chat(
    merged: Mapping[str, Any], tokenizer: TokenizerInfo, inferred: dict[str, str]
) -> ChatFormat:
    chat = chat_format(merged, tokenizer.chat_template)
    if chat.source != JINJA:
        inferred["chat_template"] = (
            f"rendered from the {chat.source} (MNN 3.6.1 reads only jinja templates)"
        )
    return chat


def _read_recipes(folder: Path) -> tuple[tuple[str, ...], Mapping[str, Any]]:
    """The recipe files present, and runtime_config.json's settings ({} without one)."""
    recipes = tuple(name for name in RECIPE_FILES if (folder / name).is_file())
    runtime_config: Mapping[str, Any] = {}
    for name in recipes:
        if name == CONFIG:
            continue  # read with the configs
        parsed = read_json_object(folder / name)  # every recipe must at least be valid JSON
        if name == RUNTIME_CONFIG:
            runtime_config = parsed
    return recipes, runtime_config


def _trained_window(
    merged: Mapping[str, Any], model_type: str, hidden: int, layers: int
) -> tuple[int | None, str | None]:
    """The positions the model was trained for: as the exporter wrote them, else the
    well-known model's."""
    value = merged.get("max_position_embeddings")
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value, "max_position_embeddings"
    model = identify_shape(model_type, hidden, layers)
    if model is not None and model.max_positions:
        return model.max_positions, f"{model.name}'s published config"
    return None, None


def _layers(
    llm_config: Mapping[str, Any],
    path: Path,
    graph: GraphFacts,
    model_path: Path,
    inferred: dict[str, str],
) -> int:
    """layer_nums, or (MNN's exporter 3.4 omits it) the layers the graph's ops name.
    Both given, they must agree: sizes, roles and memory are figured from the count."""
    if "layer_nums" in llm_config:
        declared = _positive_int(llm_config, "layer_nums", path)
        if graph.layers and declared != graph.layers:
            raise BadValueError(
                path,
                f"layer_nums is {declared:,} but {model_path.name} holds {graph.layers:,} "
                "layers: the pack describes a different model than its graph",
            )
        return declared
    if not graph.layers:
        raise BadValueError(
            path,
            f"layer_nums is missing and {model_path.name} names no numbered layers: "
            "the layer count cannot be known",
        )
    inferred["layers"] = f"{graph.layers}: the layers {model_path.name}'s linear ops are named in"
    return graph.layers


def _require_weights_for(
    layers: int, hidden: int, weight_bytes: int, path: Path, weight_path: Path
) -> None:
    """Each decoder layer holds at least one hidden x hidden matrix of at least one bit
    per weight: a layer count (or width) the weight file cannot hold is not this model's
    (the graph may not name its layers, so this is the check that always applies)."""
    needed = layers * hidden * hidden // 8
    if needed > weight_bytes:
        raise BadValueError(
            path,
            f"layer_nums {layers:,} at hidden_size {hidden:,} needs at least {needed:,} bytes "
            f"of weights, but {weight_path.name} holds {weight_bytes:,}",
        )


def _resolve(folder: Path, config: Mapping[str, Any], key: str) -> Path:
    value = config.get(key, PATH_KEYS[key])
    return folder / str(value)


def _positive_int(config: Mapping[str, Any], key: str, path: Path) -> int:
    value = config.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise BadValueError(path, f"{key} must be a positive whole number, found {value!r}")
    return value


def _attention_kind(llm_config: Mapping[str, Any], path: Path) -> str:
    kind = llm_config.get("attention_type")
    if kind is None:
        return "sliding" if llm_config.get("sliding_window") else "full"
    if kind not in ATTENTION_KINDS:
        allowed = ", ".join(ATTENTION_KINDS)
        raise BadValueError(path, f"attention_type {kind!r} is not one of {allowed}")
    return str(kind)


def _tokenizer_path(folder: Path, config: Mapping[str, Any]) -> Path:
    named = config.get("tokenizer_file")
    if isinstance(named, str):
        return folder / named
    for candidate in TOKENIZER_CANDIDATES:
        if (folder / candidate).is_file():
            return folder / candidate
    raise MissingFileError(
        folder / TOKENIZER_CANDIDATES[0],
        f"tokenizer file not found (looked for {' and '.join(TOKENIZER_CANDIDATES)})",
    )


def _list_files(folder: Path) -> tuple[BundleFile, ...]:
    found: list[BundleFile] = []
    for root, dirs, names in os.walk(folder):
        # Hidden folders hold caches (e.g. the Hub client's .cache), not pack content.
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if name.startswith("."):
                continue
            path = Path(root) / name
            try:
                size = path.stat().st_size
            except OSError:
                continue
            found.append(BundleFile(path.relative_to(folder).as_posix(), size))
    return tuple(found)


def _role(recipes: tuple[str, ...], params: int) -> str:
    """Which side of a pair this bundle looks suited for.

    A pack that ships a draft recipe is a draft. Otherwise size decides: a model of a
    billion parameters or more is a target; a smaller one could serve either way.
    """
    if any(name in DRAFT_RECIPE_FILES for name in recipes):
        return "draft"
    return "target" if params >= TARGET_MIN_PARAMS else "either"
