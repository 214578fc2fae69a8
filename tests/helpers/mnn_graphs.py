"""Small MNN graphs written byte by byte, for tests that need a graph no exporter makes.

A graph is a FlatBuffers `Net` (MNN's schema/default/MNN.fbs) whose `oplists` holds ops
with a `type` (OpType) and a `name` and nothing else: the least MNN's schema reads as a
graph. Laid out front to back, each table after its vtable and before what it points to
(FlatBuffers offsets to other objects point forward; a vtable may sit anywhere).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

# OpType values of MNN 3.6.1's enum, and two from after it.
INPUT, RESHAPE, ATTENTION = 34, 80, 299
FUSED_LINEAR, GATED_RMS_NORM = 307, 308

# Net fields: bizCode, extraTensorDescribe, extraInfo, oplists.
_NET_FIELDS = 4
# Op fields up to type: inputIndexes, main_type, main, name, outputIndexes, type.
_OP_FIELDS = 6


def _align(buf: bytearray) -> None:
    buf.extend(bytes(-len(buf) % 4))


def _point(buf: bytearray, at: int, target: int) -> None:
    """The forward offset at `at` set to lead to `target`."""
    struct.pack_into("<I", buf, at, target - at)


def graph_bytes(ops: Sequence[tuple[int, str]]) -> bytes:
    """A graph whose ops have these (type, name) pairs, in order."""
    buf = bytearray(4)  # the root offset, set below
    net_vtable = len(buf)
    buf += struct.pack("<HH", 4 + 2 * _NET_FIELDS, 8) + struct.pack("<3HH", 0, 0, 0, 4)
    net = len(buf)
    buf += struct.pack("<iI", net - net_vtable, 0)  # the oplists offset, set below
    _point(buf, 0, net)
    vector = len(buf)
    _point(buf, net + 4, vector)
    buf += struct.pack("<I", len(ops)) + bytes(4 * len(ops))
    for i, (op_type, name) in enumerate(ops):
        vtable = len(buf)
        # The table: its vtable's offset, type at 4, the name's offset at 8.
        buf += struct.pack("<HH", 4 + 2 * _OP_FIELDS, 12) + struct.pack("<6H", 0, 0, 0, 8, 0, 4)
        table = len(buf)
        _point(buf, vector + 4 + 4 * i, table)
        buf += struct.pack("<iiI", table - vtable, op_type, 0)
        text = name.encode()
        string = len(buf)
        _point(buf, table + 8, string)
        buf += struct.pack("<I", len(text)) + text + b"\0"
        _align(buf)
    return bytes(buf)


def transformer_ops(layers: int, extra: Sequence[tuple[int, str]] = ()) -> list[tuple[int, str]]:
    """Ops named like an exported decoder's (no linear layers: no Convolution params)."""
    ops = [(INPUT, "input_ids")]
    for layer in range(layers):
        where = f"/layers.{layer}"
        ops += [(ATTENTION, f"{where}/self_attn/Attention"), (RESHAPE, f"{where}/Reshape")]
    return [*ops, *extra]
