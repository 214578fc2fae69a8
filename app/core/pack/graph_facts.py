"""What a pack's graph (`llm.mnn`) says about the model, read once without MNN: its
linear layers (mnn_graph.py), how many decoder layers they belong to, and markers that
tell families and architectures apart.

Older exporters write fewer facts into llm_config.json (MNN's exporter 3.4 writes no
`layer_nums`, 3.1-3.3 no `model_type`), but every exporter names the graph's ops after
the source model's modules: `/layers.3/self_attn/k_proj/Linear`, `.../q_norm/...`.
"""

from __future__ import annotations

import mmap
import re
from dataclasses import dataclass
from pathlib import Path

from app.core.infra.jsonfile import open_regular
from app.core.pack.mnn_graph import GraphFormatError, Linear, read_linear_layers

LINEAR_ATTENTION_OP = b"LinearAttention"
# Qwen3 (unlike Qwen2) normalises queries and keys per head.
QK_NORM_MARKERS = (b"/q_norm/", b"/k_norm/")
_LAYER_INDEX = re.compile(r"(?:^|/)layers\.(\d+)/")


@dataclass(frozen=True)
class GraphFacts:
    linears: tuple[Linear, ...]  # empty when the graph could not be walked
    linear_attention: bool  # LinearAttention ops (Qwen3.5, Qwen3-Next)
    qk_norm: bool

    @property
    def layers(self) -> int:
        """Decoder layers the linear layers are numbered in (0 when none are)."""
        found = {int(m.group(1)) for lin in self.linears if (m := _LAYER_INDEX.search(lin.name))}
        return len(found)


def read_graph_facts(model_path: Path) -> GraphFacts:
    """Raises a FileError when the graph is not a regular readable file; a graph this
    reader cannot walk gives no linear layers, not an error (MNN is the judge of that)."""
    with (
        open_regular(model_path, "model graph") as handle,
        mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as graph,
    ):
        linear_attention = graph.find(LINEAR_ATTENTION_OP) != -1
        qk_norm = all(graph.find(marker) != -1 for marker in QK_NORM_MARKERS)
    try:
        linears = read_linear_layers(model_path)
    except (GraphFormatError, OSError):
        linears = ()
    return GraphFacts(linears, linear_attention, qk_norm)
