"""The linear layers of an MNN graph (`llm.mnn`), read from its FlatBuffers bytes.

llmexport 0.0.5 writes no head counts or MLP width into llm_config.json, but the graph
holds every linear layer as a Convolution op whose `common` table names its input and
output widths. Reading that needs no MNN. A FlatBuffers table starts with
the offset of its vtable, which lists where each field sits (0: absent, the default);
fields are numbered in schema order (MNN's schema/default/MNN.fbs and CaffeOp.fbs) and a
union takes two numbers, its type and its value.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass
from pathlib import Path

from app.core.infra.jsonfile import open_regular

# Net: bizCode, extraTensorDescribe, extraInfo, oplists, ...
NET_OPLISTS = 3
# Op: inputIndexes, main_type, main, name, ...
OP_MAIN_TYPE, OP_MAIN, OP_NAME = 1, 2, 3
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


class _Buffer:
    def __init__(self, data: bytes | mmap.mmap) -> None:
        self.data = data

    def u32(self, at: int) -> int:
        value: int = struct.unpack_from("<I", self.data, at)[0]
        return value

    def i32(self, at: int) -> int:
        value: int = struct.unpack_from("<i", self.data, at)[0]
        return value

    def field(self, table: int, index: int) -> int | None:
        """Where field `index` of the table at `table` sits, or None when absent."""
        vtable = table - self.i32(table)
        size: int = struct.unpack_from("<H", self.data, vtable)[0]
        if 4 + 2 * index >= size:
            return None
        offset: int = struct.unpack_from("<H", self.data, vtable + 4 + 2 * index)[0]
        return table + offset if offset else None

    def deref(self, at: int) -> int:
        return at + self.u32(at)

    def vector(self, at: int, item_size: int) -> tuple[int, int]:
        start = self.deref(at)
        count = self.u32(start)
        if start + 4 + count * item_size > len(self.data):
            raise GraphFormatError("a vector runs past the end of the file")
        return start + 4, count

    def string(self, at: int) -> str:
        start, count = self.vector(at, 1)
        return bytes(self.data[start : start + count]).decode("utf-8", "replace")

    def int_field(self, table: int, index: int) -> int:
        at = self.field(table, index)
        return self.i32(at) if at is not None else 0


def read_linear_layers(path: Path) -> tuple[Linear, ...]:
    """Every linear layer of the graph in `path`; raises GraphFormatError if it is not a
    graph, a FileError if it is not a regular readable file."""
    with open_regular(path, "model graph") as handle:
        try:
            data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError:  # an empty file cannot be mapped
            raise GraphFormatError("the graph file is empty") from None
        with data:
            try:
                return _linear_layers(_Buffer(data))
            except (struct.error, IndexError, OverflowError) as exc:
                raise GraphFormatError(f"not an MNN graph: {exc}") from None


def _linear_layers(buf: _Buffer) -> tuple[Linear, ...]:
    net = buf.u32(0)
    oplists = buf.field(net, NET_OPLISTS)
    if oplists is None:
        raise GraphFormatError("the graph has no operators")
    start, count = buf.vector(oplists, 4)
    found = []
    for i in range(count):
        op = buf.deref(start + 4 * i)
        kind = buf.field(op, OP_MAIN_TYPE)
        main = buf.field(op, OP_MAIN)
        if kind is None or main is None or buf.data[kind] != PARAM_CONVOLUTION2D:
            continue
        conv = buf.deref(main)
        common_at = buf.field(conv, CONV_COMMON)
        if common_at is None:
            continue
        common = buf.deref(common_at)
        name_at = buf.field(op, OP_NAME)
        quant_at = buf.field(conv, CONV_QUANT)
        bits, symmetric = _quantization(buf, buf.deref(quant_at)) if quant_at else (None, None)
        found.append(
            Linear(
                name=buf.string(name_at) if name_at is not None else "",
                inputs=buf.int_field(common, COMMON_INPUT_COUNT),
                outputs=buf.int_field(common, COMMON_OUTPUT_COUNT),
                bits=bits,
                symmetric=symmetric,
            )
        )
    return tuple(found)


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
