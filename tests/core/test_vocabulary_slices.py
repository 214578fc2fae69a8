"""A vocabulary is digested in slices (app/core/pack/vocabulary.py, SLICE): the window
judges pairs on a worker thread, and one C call over all 151,936 tokens of a Qwen3
vocabulary held the GIL for 20-80 ms, so the GUI thread froze that long. Counted here:
no sort or unspelling step is handed more than SLICE tokens, and the digest is the same
as one pass over the whole table gave."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from app.core.pack import vocabulary
from app.core.pack.added_tokens import LINES_CHUNK, split_lines
from app.core.pack.bundle import read_bundle

Fixture = Callable[[str], Path]
# The digest of the real Qwen3 vocabulary, as the commit before slicing computed it in one
# pass; both files spell the same ids (tests/fixtures/README.md, the realtok chain).
QWEN3_DIGEST = "6766db53f6a410e9962c76a535620d873553c9bee29e802b047fdf339f5ca21d"


@pytest.mark.parametrize("name", ["qwen3-realtok", "era-3.1.4-realtok"])
def test_real_vocabulary_is_digested_a_slice_at_a_time(
    name: str, fixture_bundle: Fixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = read_bundle(fixture_bundle(name))
    tokenizer = bundle.tokenizer
    assert tokenizer is not None
    monkeypatch.setattr(vocabulary, "_DIGESTS", {})  # digested now, not remembered
    sorted_sizes: list[int] = []
    unspelled_sizes: list[int] = []

    def counted_sorted(items: Iterable[Any]) -> list[Any]:
        listed = list(items)
        sorted_sizes.append(len(listed))
        return sorted(listed)

    spell = vocabulary._unspell

    def counted_unspell(text: str) -> bytes:
        unspelled_sizes.append(len(text))
        return spell(text)

    monkeypatch.setattr(vocabulary, "sorted", counted_sorted, raising=False)
    monkeypatch.setattr(vocabulary, "_unspell", counted_unspell)
    digest = vocabulary.vocabulary_digest(bundle.path / tokenizer.file, tokenizer)

    assert digest == QWEN3_DIGEST
    assert max(sorted_sizes, default=0) <= vocabulary.SLICE
    if tokenizer.type == "pipeline":  # byte-level spellings, unspelled slice by slice
        assert len(unspelled_sizes) >= 151_643 // vocabulary.SLICE
        # A slice of SLICE tokens spells at most 16 characters each in this vocabulary.
        assert max(unspelled_sizes) <= 16 * vocabulary.SLICE


def test_lines_are_split_a_chunk_at_a_time() -> None:
    lines = [f"{i}".encode() * (i % 7) for i in range(3 * LINES_CHUNK // 4)]
    data = b"head\n" + b"\n".join(lines) + b"\n"
    assert split_lines(data, 5) == data[5:].split(b"\n")
    assert split_lines(b"a\nb", 0) == [b"a", b"b"]
    assert split_lines(b"", 0) == [b""]
