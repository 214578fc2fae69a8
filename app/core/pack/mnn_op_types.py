"""Which operator types the pinned MNN can run, so a graph exported by a newer MNN is
named as such before the engine meets an op it cannot create.

Data from MNN's schema/default/MNN.fbs, `enum OpType : int`, at tag 3.6.1 (commit
d407447ed56c4121a11ccbd266dc184ca1ead0c2, 2026-07-22) of github.com/alibaba/MNN; the
names of later types from master (commit 4d40bdbd7efb, 2026-08-20), where the exporter
fuses projections and norms by default unless run with `--disable_transformer_c4`.
"""

from __future__ import annotations

PINNED_MNN = "3.6.1"  # pyproject.toml pins mnn==3.6.1
# The enum's values, as inclusive ranges: it has gaps, and new types land in them
# (FusedLinear = 307 is newer than GridSample = 604, the highest 3.6.1 knows).
KNOWN_OP_TYPES = (
    (0, 122),  # AbsVal .. Interp3D
    (128, 156),  # Raster .. Stft
    (256, 269),  # Plugin, then the training ops Select .. ZeroGrad
    (299, 306),  # Attention .. RoPE
    (512, 515),  # Extra, ConvInt8, Int8ToFloat, DepthwiseConvInt8
    (517, 518),  # FloatToInt8, EltwiseInt8
    (600, 601),  # While, If
    (603, 604),  # LayerNorm, GridSample
)
NEWER_OP_TYPES = {307: "FusedLinear", 308: "GatedRMSNorm"}


def known_to_pinned_mnn(op_type: int) -> bool:
    return any(low <= op_type <= high for low, high in KNOWN_OP_TYPES)


def op_type_name(op_type: int) -> str:
    """A type the pinned MNN lacks, by the name MNN's master gives it where it has one."""
    return NEWER_OP_TYPES.get(op_type, f"op type {op_type}")
