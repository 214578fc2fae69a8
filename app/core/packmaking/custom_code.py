"""Model folders are code until the user says otherwise.

A Hugging Face folder can carry Python of its own: `auto_map` in config.json or
tokenizer_config.json names classes in `*.py` files beside them, and transformers runs
those files when asked to trust remote code (MNN's exporter always asks). So exporting or
verifying a folder that carries code runs a stranger's program with the user's rights;
DraftDeck refuses such a folder unless the user trusts it (`--trust-remote-code`, or
Yes to Make Pack's question), and otherwise runs the exporter with transformers' trust
turned off (resources/torch_side/no_remote_code.py), so code sneaked in after the check
cannot run either.
"""

from __future__ import annotations

from pathlib import Path

from app.core.infra.errors import CodedError, FileError
from app.core.infra.jsonfile import read_json_object

CONFIG_FILES = ("config.json", "tokenizer_config.json")
# The folders the Hub client and git keep beside a model: not the model's own files.
_NOT_MODEL = frozenset({".cache", ".git"})


def custom_code(folder: Path) -> tuple[str, ...]:
    """What in `folder` is code, in words: each config's auto_map and each `*.py` file
    (at any depth); () for a folder of data only."""
    found: list[str] = []
    for name in CONFIG_FILES:
        try:
            auto_map = read_json_object(folder / name).get("auto_map")
        except FileError:
            continue  # a missing or broken config is the other checks' to say
        if isinstance(auto_map, dict) and auto_map:
            classes = sorted({_class_words(v) for v in auto_map.values()})
            found.append(f"{name} names code to run (auto_map: {', '.join(classes)})")
    found += sorted(
        str(path.relative_to(folder))
        for path in folder.rglob("*.py")
        if not _NOT_MODEL & set(path.relative_to(folder).parts)
    )
    return tuple(found)


def _class_words(value: object) -> str:
    # A tokenizer's auto_map names a pair (slow, fast), either of which may be null.
    if isinstance(value, list):
        return ", ".join(str(v) for v in value if v)
    return str(value)


class CustomCodeRefused(CodedError):
    """The folder carries code and the user has not said to trust it (each front end
    says how to: a flag, a question)."""

    code = "custom_code"

    def __init__(self, folder: Path, found: tuple[str, ...]) -> None:
        super().__init__(
            f"{folder}: the model folder carries code of its own ({'; '.join(found)}); "
            "exporting or verifying it would run that code with your rights"
        )
        self.folder = folder
        self.found = found


def refuse_untrusted_code(folder: Path, trusted: bool) -> None:
    """CustomCodeRefused when `folder` carries code and is not `trusted`."""
    found = custom_code(folder)
    if found and not trusted:
        raise CustomCodeRefused(folder, found)
