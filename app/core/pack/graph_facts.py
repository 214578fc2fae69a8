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

from app.core.infra.errors import NeedsNewerMnnError, NotAGraphError
from app.core.infra.jsonfile import open_regular
from app.core.pack.mnn_graph import GraphFormatError, Linear, read_graph
from app.core.pack.mnn_op_types import PINNED_MNN, known_to_pinned_mnn, op_type_name

LINEAR_ATTENTION_OP = b"LinearAttention"
# Qwen3 (unlike Qwen2) normalises queries and keys per head.
QK_NORM_MARKERS = (b"/q_norm/", b"/k_norm/")
_LAYER_INDEX = re.compile(r"(?:^|/)layers\.(\d+)/")


@dataclass(frozen=True)
class GraphFacts:
    linears: tuple[Linear, ...]  # empty when the graph names none (fused, renamed)
    linear_attention: bool  # LinearAttention ops (Qwen3.5, Qwen3-Next)
    qk_norm: bool

    @property
    def layers(self) -> int:
        """Decoder layers the linear layers are numbered in (0 when none are)."""
        found = {int(m.group(1)) for lin in self.linears if (m := _LAYER_INDEX.search(lin.name))}
        return len(found)


def read_graph_facts(model_path: Path) -> GraphFacts:
    """The graph is read before it is believed: a file that is not an MNN graph raises
    NotAGraphError, one with operators the pinned MNN lacks NeedsNewerMnnError, one that
    is not a regular readable file another FileError, each naming the file."""
    name = model_path.name
    with open_regular(model_path, "model graph") as handle:
        try:
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError:  # an empty file cannot be mapped (emptied since it was checked)
            raise NotAGraphError(model_path, f"{name} is empty") from None
        with mapped:
            try:
                graph = read_graph(mapped)
            except GraphFormatError as exc:
                raise NotAGraphError(model_path, f"{name} is not an MNN graph: {exc}") from None
            linear_attention = mapped.find(LINEAR_ATTENTION_OP) != -1
            qk_norm = all(mapped.find(marker) != -1 for marker in QK_NORM_MARKERS)
    unknown = sorted(t for t in graph.op_types if not known_to_pinned_mnn(t))
    if unknown:
        raise NeedsNewerMnnError(
            model_path,
            f"{name} needs a newer MNN than {PINNED_MNN}: "
            f"{', '.join(op_type_name(t) for t in unknown)} (operators MNN {PINNED_MNN} does "
            "not have; MNN's exporter writes graphs for it with --disable_transformer_c4)",
        )
    return GraphFacts(graph.linears, linear_attention, qk_norm)
