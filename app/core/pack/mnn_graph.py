"""An MNN graph (`llm.mnn`) read from its FlatBuffers bytes: every operator's type and
the linear layers, without MNN.

llmexport 0.0.5 writes no head counts or MLP width into llm_config.json, but the graph
holds every linear layer as a Convolution op whose `common` table names its input and
output widths. A FlatBuffers table starts with
the offset of its vtable, which lists where each field sits (0: absent, the default);
fields are numbered in schema order (MNN's schema/default/MNN.fbs and CaffeOp.fbs) and a
union takes two numbers, its type and its value.

The file is a stranger's: every offset is checked against its size before it is
followed, the operator count is capped and nothing recurses, so random bytes, a cut
file or a crafted one give a GraphFormatError saying why, never a wrong reading.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass

from app.core.infra.units import counted

# Net: bizCode, extraTensorDescribe, extraInfo, oplists, outputName, preferForwardType,
# sourceType, tensorName, tensorNumber, usage, subgraphs, ...
NET_OPLISTS, NET_SUBGRAPHS = 3, 10
# SubGraphProto: name, inputs, outputs, tensors, nodes, ...
SUBGRAPH_NODES = 4
# Op: inputIndexes, main_type, main, name, outputIndexes, type, ...
OP_MAIN_TYPE, OP_MAIN, OP_NAME, OP_TYPE = 1, 2, 3, 5
# OpParameter union: NONE, QuantizedAdd, ArgMax, AsString, Axis, BatchNorm, BinaryOp,
# Blob, CastParam, Convolution2D, ...
PARAM_CONVOLUTION2D = 9
# Convolution2D: common, weight, bias, quanParameter, symmetricQuan, sparseParameter, ...
CONV_COMMON, CONV_QUANT = 0, 3
# Convolution2DCommon: padX, padY, kernelX, kernelY, strideX, strideY, dilateX, dilateY,
# padMode, group, outputCount, inputCount, ...
COMMON_OUTPUT_COUNT, COMMON_INPUT_COUNT = 10, 11
# IDSTQuan: buffer, alpha, type, useInt32, quantScale, scaleIn, scaleOut, aMaxOrBits, aMin,
# readType, ...; type 1 is block-quantized integers (aMaxOrBits their bits), 3 is fp16.
QUANT_TYPE, QUANT_BITS, QUANT_MIN, QUANT_READ_TYPE = 2, 7, 8, 9
QUANT_INT, QUANT_FP16 = 1, 3
# Far above any LLM graph (Qwen3-8B's has a few thousand ops); bounds the walk's time.
MAX_OPS = 200_000


class GraphFormatError(ValueError):
    """The file is not an MNN graph this reader understands."""


@dataclass(frozen=True)
class Linear:
    name: str
    inputs: int
    outputs: int
    bits: int | None = None  # its weights' bits as stored (16: fp16); None: not said
    # Quantized with one scale per block (no zero point); None: not said. llmexport
    # writes aMin 0 and readType 0 for symmetric blocks, aMin 1 (its q_min) for
    # asymmetric ones (utils/mnn_converter.py rebuild_linear).
    symmetric: bool | None = None

    @property
    def params(self) -> int:
        return self.inputs * self.outputs


@dataclass(frozen=True)
class Graph:
    op_types: frozenset[int]  # every operator's OpType, subgraphs' included
    linears: tuple[Linear, ...]


class _Buffer:
    """Little-endian reads that refuse to leave the file."""

    def __init__(self, data: bytes | mmap.mmap) -> None:
        self.data = data
        self.size = len(data)

    def _need(self, at: int, length: int, what: str) -> None:
        if at < 0 or at + length > self.size:
            raise GraphFormatError(
                f"{what} at offset {at:,} lies outside the file ({self.size:,} bytes)"
            )

    def _unpack(self, form: str, at: int, what: str) -> int:
        self._need(at, struct.calcsize(form), what)
        value: int = struct.unpack_from(form, self.data, at)[0]
        return value

    def u8(self, at: int) -> int:
        return self._unpack("<B", at, "a field")

    def u32(self, at: int) -> int:
        return self._unpack("<I", at, "a reference")

    def i32(self, at: int) -> int:
        return self._unpack("<i", at, "a field")

    def field(self, table: int, index: int) -> int | None:
        """Where field `index` of the table at `table` sits, or None when absent."""
        vtable = table - self._unpack("<i", table, "a table")
        size = self._unpack("<H", vtable, "a table's field list")
        if size < 4 or size % 2:
            raise GraphFormatError(f"the field list at offset {vtable:,} is malformed")
        if 4 + 2 * index >= size:
            return None
        offset = self._unpack("<H", vtable + 4 + 2 * index, "a table's field list")
        if offset >= self._unpack("<H", vtable + 2, "a table's field list"):
            raise GraphFormatError(f"a field of the table at offset {table:,} lies outside it")
        return table + offset if offset else None

    def deref(self, at: int) -> int:
        return at + self.u32(at)

    def vector(self, at: int, item_size: int) -> tuple[int, int]:
        start = self.deref(at)
        count = self.u32(start)
        self._need(start + 4, count * item_size, "a list")
        return start + 4, count

    def string(self, at: int) -> str:
        start, count = self.vector(at, 1)
        return bytes(self.data[start : start + count]).decode("utf-8", "replace")

    def int_field(self, table: int, index: int) -> int:
        at = self.field(table, index)
        return self.i32(at) if at is not None else 0


def read_graph(data: bytes | mmap.mmap) -> Graph:
    """The graph in `data` (a mapped `llm.mnn`); raises GraphFormatError if it is not one."""
    if len(data) < 8:
        raise GraphFormatError(f"{counted(len(data), 'byte')} is too short for one")
    buf = _Buffer(data)
    net = buf.u32(0)
    oplists = buf.field(net, NET_OPLISTS)
    ops = _ops(buf, oplists, MAX_OPS) if oplists is not None else []
    if not ops:
        raise GraphFormatError("it lists no operators")
    subgraphs = buf.field(net, NET_SUBGRAPHS)
    if subgraphs is not None:
        ops += _subgraph_ops(buf, subgraphs, MAX_OPS - len(ops))
    op_types = frozenset(buf.int_field(op, OP_TYPE) for op in ops)
    linears = tuple(lin for op in ops if (lin := _linear(buf, op)) is not None)
    return Graph(op_types, linears)


def _ops(buf: _Buffer, at: int, room: int) -> list[int]:
    """The tables a vector at `at` points to (ops, subgraphs), at most `room` of them."""
    start, count = buf.vector(at, 4)
    if count > room:
        raise GraphFormatError(f"it claims over {MAX_OPS:,} operators, more than any LLM graph")
    return [buf.deref(start + 4 * i) for i in range(count)]


def _subgraph_ops(buf: _Buffer, at: int, room: int) -> list[int]:
    """The ops of each subgraph (control flow); subgraphs do not nest in the schema."""
    found: list[int] = []
    for subgraph in _ops(buf, at, room):
        nodes = buf.field(subgraph, SUBGRAPH_NODES)
        if nodes is not None:
            found += _ops(buf, nodes, room - len(found))
    return found


def _linear(buf: _Buffer, op: int) -> Linear | None:
    """The op as a linear layer, or None when it is not one (not a Convolution2D)."""
    kind = buf.field(op, OP_MAIN_TYPE)
    main = buf.field(op, OP_MAIN)
    if kind is None or main is None or buf.u8(kind) != PARAM_CONVOLUTION2D:
        return None
    conv = buf.deref(main)
    common_at = buf.field(conv, CONV_COMMON)
    if common_at is None:
        return None
    common = buf.deref(common_at)
    name_at = buf.field(op, OP_NAME)
    quant_at = buf.field(conv, CONV_QUANT)
    bits, symmetric = _quantization(buf, buf.deref(quant_at)) if quant_at else (None, None)
    return Linear(
        name=buf.string(name_at) if name_at is not None else "",
        inputs=buf.int_field(common, COMMON_INPUT_COUNT),
        outputs=buf.int_field(common, COMMON_OUTPUT_COUNT),
        bits=bits,
        symmetric=symmetric,
    )


def _quantization(buf: _Buffer, quant: int) -> tuple[int | None, bool | None]:
    """A layer's bits and whether its blocks are symmetric, from its IDSTQuan table."""
    kind = buf.int_field(quant, QUANT_TYPE)
    if kind == QUANT_FP16:
        return 16, None
    if kind != QUANT_INT:
        return None, None
    minimum, read_type = buf.int_field(quant, QUANT_MIN), buf.int_field(quant, QUANT_READ_TYPE)
    symmetric: bool | None = None  # aMin 0 with a readType: not llmexport's writing
    if minimum:
        symmetric = False
    elif read_type == 0:
        symmetric = True
    return buf.int_field(quant, QUANT_BITS) or None, symmetric
