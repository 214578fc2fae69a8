"""What a pack's files say of its quantization (quant_facts.py, read from the graph and
the embedding's scales) and what the export check takes from them (verify_source.py
quant_spec), on the committed bundles of four MNN exporter releases: nothing about
symmetric blocks or the lm_head's bits is guessed when the files tell, and what is
guessed is named.

A symmetric export (llmexport --sym --lm_quant_bit 8) is made and verified end to end in
tests/cli/test_verify_export.py."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.pack.bundle import read_bundle
from app.core.packmaking.verify_source import quant_spec
from tests.helpers.mnn_graphs import graph_bytes, transformer_ops
from tests.helpers.paths import FIXTURES

Copy = Callable[..., Path]


TIED = "asymmetric 4-bit, block 128; lm_head and embedding tied at {}-bit"


@pytest.mark.parametrize(
    ("name", "block", "lm_bits", "embedding", "described"),
    [
        # 3.1: a bf16 embedding file and no block recorded anywhere: the caller gives it.
        ("era-3.1.4", 128, 4, "bf16", "asymmetric 4-bit, block 128; lm_head 4-bit; embedding bf16"),
        # 3.3 writes the lm_head (and so the tied embedding) at 8 bits, the layers at 4.
        ("era-3.3.0", None, 8, "tied", TIED.format(8)),
        ("era-3.4.1", None, 4, "tied", TIED.format(4)),
        # 3.6 stores the scales as fp16: half the bytes, still two values a block.
        ("era-3.6.1", None, 4, "tied", TIED.format(4)),
    ],
)
def test_each_exporter_releases_pack_says_its_quantization(
    name: str, block: int | None, lm_bits: int, embedding: str, described: str
) -> None:
    info = read_bundle(FIXTURES / name)
    facts = info.quant_facts
    assert (facts.layer_bits, facts.lm_bits, facts.symmetric) == (4, lm_bits, False)
    spec = quant_spec(info, block=block)
    assert (spec.bits, spec.lm_bits, spec.embedding, spec.symmetric) == (
        4,
        lm_bits,
        embedding,
        False,
    )
    assert spec.assumed == () and spec.describe() == described


def _tie_embeddings(pack: Path, alpha_size: int) -> None:
    path = pack / "llm_config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    config["tie_embeddings"][2] = alpha_size
    path.write_text(json.dumps(config), encoding="utf-8")


def test_the_embeddings_scales_tell_symmetric_from_asymmetric(bundle_copy: Copy) -> None:
    # era-3.4.1: 1,280 rows of one 128-wide block, fp32 scales: 10,240 bytes is a zero
    # point and a scale a block (asymmetric), 5,120 one scale (symmetric), as MNN reads it.
    pack = bundle_copy("era-3.4.1")
    assert read_bundle(pack).quant_facts.symmetric is False
    _tie_embeddings(pack, 5120)
    info = read_bundle(pack)
    # The graph's layers say asymmetric, the embedding symmetric: the files disagree, so
    # the check assumes llmexport's default and says so.
    assert info.quant_facts.symmetric is None
    spec = quant_spec(info)
    assert spec.assumed == ("asymmetric",)
    assert spec.describe().endswith("; assumed, the pack does not say: asymmetric")
    assert quant_spec(info, symmetric=True).assumed == ()  # --sym settles it


def test_without_linear_layers_in_the_graph_what_is_assumed_is_named(bundle_copy: Copy) -> None:
    pack = bundle_copy("era-3.1.4")
    (pack / "llm.mnn").write_bytes(graph_bytes(transformer_ops(2)))  # fused or renamed
    info = read_bundle(pack)
    assert info.quant_facts.symmetric is None and info.quant_facts.lm_bits is None
    spec = quant_spec(info, bits=4, block=128)
    assert spec.assumed == ("asymmetric", "lm_head 4-bit")
    assert "assumed, the pack does not say: asymmetric, lm_head 4-bit" in spec.describe()
    spec = quant_spec(info, bits=4, block=128, symmetric=True, lm_bits=8)
    assert spec.assumed == () and (spec.symmetric, spec.lm_bits) == (True, 8)
