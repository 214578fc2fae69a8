"""A graph is read before it is believed: an llm.mnn that is not an MNN graph makes the
pack broken, one with operators MNN 3.6.1 lacks makes it "needs a newer MNN", each
named in `info` and `check`, never "compatible" and never a traceback."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.infra import errors
from app.core.pack.bundle import read_bundle
from app.core.pack.compat import assess_paths
from app.core.pack.library import read_entry
from app.core.pack.mnn_graph import MAX_OPS
from tests.helpers.cli import run_cli
from tests.helpers.mnn_graphs import (
    FUSED_LINEAR,
    GATED_RMS_NORM,
    INPUT,
    graph_bytes,
    transformer_ops,
)

Copy = Callable[..., Path]
GRAPH = "llm.mnn"


def _random(original: bytes) -> bytes:
    return random.Random(7).randbytes(len(original))


NOT_GRAPHS: dict[str, Callable[[bytes], bytes]] = {
    "random": _random,
    "all-0xff": lambda original: b"\xff" * len(original),
    "all-zero": lambda original: bytes(64),
    "one-byte": lambda original: b"\x01",
    "truncated": lambda original: original[: len(original) // 2],
    "cut-short": lambda original: original[:1000],
}


def _with_graph(bundle_copy: Copy, make: Callable[[bytes], bytes]) -> Path:
    pack = bundle_copy("qwen3-target")
    graph = pack / GRAPH
    graph.write_bytes(make(graph.read_bytes()))
    return pack


@pytest.mark.parametrize("kind", sorted(NOT_GRAPHS))
def test_a_file_that_is_not_a_graph_breaks_the_pack(bundle_copy: Copy, kind: str) -> None:
    pack = _with_graph(bundle_copy, NOT_GRAPHS[kind])
    with pytest.raises(errors.NotAGraphError) as caught:
        read_bundle(pack)
    assert caught.value.path == pack / GRAPH
    assert caught.value.problem.startswith("llm.mnn is not an MNN graph: ")
    entry = read_entry(pack, by_reference=True)
    assert not entry.ok and entry.status.startswith("llm.mnn is not an MNN graph")


@pytest.mark.parametrize("kind", ["random", "truncated"])
def test_info_and_check_call_it_broken(bundle_copy: Copy, kind: str) -> None:
    pack = _with_graph(bundle_copy, NOT_GRAPHS[kind])
    info = run_cli("info", str(pack), timeout=120)
    assert info.returncode == 1
    assert "llm.mnn is not an MNN graph" in info.stderr
    assert "Traceback" not in info.stderr
    as_json = json.loads(run_cli("info", "--json", str(pack), timeout=120).stdout)
    assert as_json["error"]["code"] == "not_a_graph"
    assert as_json["error"]["file"] == str(pack / GRAPH)
    check = run_cli("check", str(pack), str(bundle_copy("qwen3-draft-identical")), timeout=120)
    assert check.returncode == 2
    assert "llm.mnn is not an MNN graph" in check.stderr and "Compatible" not in check.stdout
    assert "Traceback" not in check.stderr


def _newer_graph(bundle_copy: Copy, *newer: int) -> Path:
    ops = transformer_ops(2, [(op_type, f"/layers.0/op{op_type}") for op_type in newer])
    return _with_graph(bundle_copy, lambda original: graph_bytes(ops))


def test_a_graph_of_known_ops_reads(bundle_copy: Copy) -> None:
    """The control for the tests below: the same small graph without newer ops."""
    info = read_bundle(_newer_graph(bundle_copy))
    assert info.layers == 2 and info.shape.source != "graph"  # it has no linear layers


def test_fused_ops_need_a_newer_mnn(bundle_copy: Copy) -> None:
    pack = _newer_graph(bundle_copy, GATED_RMS_NORM, FUSED_LINEAR)
    with pytest.raises(errors.NeedsNewerMnnError) as caught:
        read_bundle(pack)
    assert caught.value.path == pack / GRAPH
    assert "needs a newer MNN than 3.6.1: FusedLinear, GatedRMSNorm" in caught.value.problem
    verdict = assess_paths(pack, bundle_copy("qwen3-draft-identical"))
    assert verdict.blocked and "needs a newer MNN than 3.6.1" in verdict.summary()


def test_info_and_check_say_a_newer_mnn_is_needed(bundle_copy: Copy) -> None:
    pack = _newer_graph(bundle_copy, FUSED_LINEAR)
    info = run_cli("info", str(pack), timeout=120)
    assert info.returncode == 1
    assert "needs a newer MNN than 3.6.1: FusedLinear" in info.stderr
    assert "Traceback" not in info.stderr
    as_json = json.loads(run_cli("info", "--json", str(pack), timeout=120).stdout)
    assert as_json["error"]["code"] == "needs_newer_mnn"
    check = run_cli("check", str(bundle_copy("qwen3-draft-identical")), str(pack), timeout=120)
    assert check.returncode == 2
    assert "needs a newer MNN than 3.6.1: FusedLinear" in check.stderr
    assert "Traceback" not in check.stderr


def test_an_op_type_in_a_gap_of_the_enum_is_unknown_too(bundle_copy: Copy) -> None:
    """400 lies below 3.6.1's highest type (604) but is none of its types."""
    with pytest.raises(errors.NeedsNewerMnnError, match=r"3\.6\.1: op type 400"):
        read_bundle(_newer_graph(bundle_copy, 400))


def test_a_graph_claiming_too_many_ops_is_refused(bundle_copy: Copy) -> None:
    ops = [(INPUT, "x")] * (MAX_OPS + 1)
    pack = _with_graph(bundle_copy, lambda original: graph_bytes(ops))
    with pytest.raises(errors.NotAGraphError, match="more than any LLM graph"):
        read_bundle(pack)


def test_layer_nums_the_weights_cannot_hold_is_refused(bundle_copy: Copy) -> None:
    """A graph that names no linear layers cannot check layer_nums; the weights can."""
    pack = _newer_graph(bundle_copy)
    config = json.loads((pack / "llm_config.json").read_text())
    config["layer_nums"] = 10**9
    (pack / "llm_config.json").write_text(json.dumps(config))
    with pytest.raises(errors.BadValueError) as caught:
        read_bundle(pack)
    assert caught.value.path == pack / "llm_config.json"
    assert "layer_nums 1,000,000,000 at hidden_size 128" in caught.value.problem
    assert "llm.mnn.weight holds" in caught.value.problem
