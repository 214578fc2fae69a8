"""The names of the files in a pack folder: MNN's, llmexport's, TokForge's and the
ones DraftDeck adds. Every other module takes them from here."""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict

from app.core.infra.errors import FileError
from app.core.infra.jsonfile import read_json_object

# MNN's runtime settings; a target's run recipe. MNN is given this name to open a pack.
CONFIG = "config.json"
# The draft's recipe, and the name some packs give it.
DRAFT_RECIPE = "config_cpu.json"
DRAFT_RECIPE_ALT = "draft_config_cpu.json"
# TokForge's per-target advice and recommended settings.
RUNTIME_CONFIG = "runtime_config.json"
GENERATION_CONFIG = "generation_config.json"  # Hugging Face's, when a pack ships one
LLM_CONFIG = "llm_config.json"  # model facts written by llmexport
LLM_MODEL = "llm.mnn"
LLM_WEIGHT = "llm.mnn.weight"
TOKENIZER_TXT = "tokenizer.txt"  # stock MNN's default
TOKENIZER_MTOK = "tokenizer.mtok"  # what llmexport 0.0.5 writes
EMBEDDINGS = "embeddings_bf16.bin"
VISUAL_MODEL = "visual.mnn"
AUDIO_MODEL = "audio.mnn"
CONTEXT = "context.json"
# DraftDeck's check of the export against its source model (verify-export, Make Pack).
EXPORT_CHECK = "export_check.json"

RECIPE_FILES = (CONFIG, DRAFT_RECIPE, DRAFT_RECIPE_ALT, RUNTIME_CONFIG)
DRAFT_RECIPE_FILES = (DRAFT_RECIPE, DRAFT_RECIPE_ALT, RUNTIME_CONFIG)
# Stock MNN looks for tokenizer.txt; llmexport 0.0.5 writes tokenizer.mtok.
TOKENIZER_CANDIDATES = (TOKENIZER_TXT, TOKENIZER_MTOK)


def quantized_embeddings(bits: int) -> str:
    """The embeddings llmexport writes apart when they are not tied to the lm_head."""
    return f"embeddings_int{bits}.bin"


# Any one of these makes a folder look like an MNN bundle.
BUNDLE_MARKERS = (CONFIG, LLM_CONFIG, LLM_MODEL)

# What DraftDeck adds to a pack folder; its own files' names all start with this.
OWN_NAME_PREFIX = ".draftdeck"
SOURCE_FILE = ".draftdeck-source.json"  # where a downloaded pack came from
ORIGINALS = ".draftdeck-original"  # the pack's own recipes, before the user's edits
BACKUP_SUFFIX = ".bak"  # the recipe before the last save
BEFORE_UPDATE_SUFFIX = ".before-update"  # a user's edited recipe kept across an update
# In a pack folder on a phone: DraftDeck made this folder, and the files it put there.
PHONE_MARKER = ".draftdeck-pack.json"
# Files a pack folder may hold that are ours, not the pack's (hidden files and folders,
# such as the Hub client's .cache, are never part of a pack to begin with).
NOT_PACK_SUFFIXES = (BACKUP_SUFFIX, BEFORE_UPDATE_SUFFIX)


class PackSource(TypedDict, total=False):
    """The record DraftDeck writes as SOURCE_FILE when it installs a download.
    `installed_source` always sets repo; all keys are optional so that
    `installed_source(pack) or {}` reads as a record that names nothing."""

    repo: str  # the Hub repository the pack was downloaded from
    revision: str  # the commit downloaded
    endpoint: str  # the Hub server


def installed_source(pack: Path) -> PackSource | None:
    """Where an installed pack came from (repo, revision), if DraftDeck downloaded it."""
    try:
        # Only a regular file of bounded size: a FIFO or device in its place must not hang.
        record = read_json_object(pack / SOURCE_FILE)
    except FileError:
        return None
    # Hand-edited or foreign: a record without a repo names no source.
    if not isinstance(record.get("repo"), str):
        return None
    source = PackSource(repo=record["repo"])
    for key in ("revision", "endpoint"):
        if isinstance(record.get(key), str):
            source[key] = record[key]
    return source
