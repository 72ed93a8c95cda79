"""Whether XLA CPU multiplies the zeros of a convolution's base-dilation holes and padding.

A convolution's value is a sum over the window positions that land on input elements; the
positions in holes (lhs_dilate) and padding contribute nothing. XLA CPU computes that sum two
ways, which differ once a kernel value is inf or NaN (0 * inf = NaN):
- MULTIPLY: the Eigen runtime's patch extraction fills holes and padding with zeros and
  contracts them with the kernel, so every kernel value meets those zeros;
- SKIP: the loop emitter (xla/service/elemental_ir_emitter.cc, EmitConvolution: an in-bounds
  and not-in-hole test around each product) and Eigen's transposed convolution
  (xla/backends/cpu/runtime/convolution_lib.h, EigenTransposedConv2D: a contraction of the
  undilated input, then a col2im pack that writes only inside the output) never form them.

`multiplies_zeros(geometry)` is XLA's choice, read from these sources:
- xla/service/cpu/cpu_compiler.cc: FloatNormalization turns bf16 / fp8 / fp4 convolutions
  into f32 / f16 ones; ConvolutionGroupConverter expands every batch-grouped convolution
  (`batch_group_expansion`); ConvCanonicalization, run on the entry computation only,
  transposes a convolution to NHWC / HWIO / NHWC; then f16 ones compute in f32.
- xla/service/cpu/ir_emission_utils.cc, PotentiallyImplementedAsEigenConvolution (checked
  again when the thunk is emitted, xla/service/cpu/thunk_emitter.cc): f16 / f32, no window
  reversal, 1-3 spatial dims, canonical dim order, no empty operand, and each of input,
  kernel and output aligned to 16 bytes (GetMinimumAlignmentForArray: a buffer of 8 bytes
  or fewer is less aligned).
- xla/backends/cpu/runtime/convolution_lib.h, EigenConv2D / CanUseCustomTransposedConv: a
  1-d (run as 2-d) or 2-d convolution with base dilation, no window dilation, no feature
  groups, stride 1 and an intermediate buffer of at most 8 GiB is transposed (SKIP); every
  other Eigen convolution, and every 3-d one, extracts patches (MULTIPLY).

Two of XLA's rewrites make zeros of their own that the kernel or the input then meets:
batch groups become a base-dilated spatial dim (`batch_group_expansion`: with MULTIPLY
each output group's window holes meet the other groups' kernels), and feature groups of
one input feature become a kernel zero outside each group (`expands_feature_groups`:
every output meets every input feature, on the loop emitter too).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from tilecc.hlo.types import PrimitiveType, is_floating

_EIGEN_ALIGNMENT = 16  # TargetMachineFeatures::kEigenExpectedTensorAlignment
_EIGEN_ITEM_BYTES = 4  # f16 convolutions compute in f32 by the time the thunk is emitted
_TRANSPOSED_BUFFER_LIMIT = 8 << 30  # CanUseCustomTransposedConv's kMaxConvMatrixSize, bytes


@dataclass(frozen=True, slots=True)
class ConvGeometry:
    """What XLA's choice reads of one convolution (lists: one entry per spatial dim)."""

    element_type: PrimitiveType  # of the lhs
    result_type: PrimitiveType
    canonical: bool  # b01f input, 01io kernel, b01f output (spatial dims in order)
    in_entry: bool  # in the entry computation, where ConvCanonicalization runs
    batch: int
    in_spatial: list[int]
    kernel_spatial: list[int]
    out_features: int
    strides: list[int]
    lhs_dilate: list[int]
    rhs_dilate: list[int]
    reversal: list[int]
    feature_groups: int
    group_features: int  # input features per feature group
    batch_groups: int
    element_counts: tuple[int, int, int]  # input, kernel, output


def batch_group_expansion(g: ConvGeometry) -> ConvGeometry:
    """The convolution ConvolutionGroupConverter (xla/hlo/transforms/simplifiers/
    convolution_group_converter.cc, HandleBatchGroupCount) puts in place of a batch-grouped
    one. When input batch and output features both equal the group count it computes all
    pairs of groups and masks the cross pairs (same window). Otherwise the groups become one
    more spatial dim, base-dilated by the group count, window = group count, stride one less:
    each output group's window meets its own input group and holes for the others. Either
    way the new convolution is no longer canonical."""
    count = g.batch_groups
    if g.batch == count and g.out_features == count:
        inp, ker, out = g.element_counts
        return replace(g, canonical=False, batch_groups=1, element_counts=(inp, ker, out * count))
    return replace(g, canonical=False, batch_groups=1, batch=g.batch // count,
                   in_spatial=g.in_spatial + [count], kernel_spatial=g.kernel_spatial + [count],
                   out_features=g.out_features // count, strides=g.strides + [count - 1],
                   lhs_dilate=g.lhs_dilate + [count], rhs_dilate=g.rhs_dilate + [1],
                   reversal=g.reversal + [0])


def runs_on_eigen(g: ConvGeometry) -> bool:
    """PotentiallyImplementedAsEigenConvolution after the passes above (module docstring)."""
    if g.batch_groups > 1:
        g = batch_group_expansion(g)
    eigen_type = is_floating(g.element_type) and g.element_type != PrimitiveType.F64
    # min(PowerOf2Ceil(bytes), MinAlign()) >= 16 exactly when bytes > 8
    aligned = all(n * _EIGEN_ITEM_BYTES > _EIGEN_ALIGNMENT // 2 for n in g.element_counts)
    return (eigen_type and not any(g.reversal) and 1 <= len(g.in_spatial) <= 3
            and (g.canonical or g.in_entry) and 0 not in g.element_counts and aligned)


def eigen_transposes(g: ConvGeometry) -> bool:
    """CanUseCustomTransposedConv, on a convolution that runs on Eigen."""
    if g.batch_groups > 1:
        g = batch_group_expansion(g)
    buffer = g.batch * math.prod(g.in_spatial) * math.prod(g.kernel_spatial) * g.out_features
    return (len(g.in_spatial) <= 2 and any(d > 1 for d in g.lhs_dilate)
            and all(d == 1 for d in g.rhs_dilate) and g.feature_groups == 1
            and all(s == 1 for s in g.strides)
            and buffer * _EIGEN_ITEM_BYTES <= _TRANSPOSED_BUFFER_LIMIT)


def expands_feature_groups(g: ConvGeometry) -> bool:
    """Whether ConvolutionGroupConverter (HandleConvolution) computes a feature-grouped
    convolution of one input feature per group with a kernel broadcast over all input
    features, zero outside each output feature's group: every input feature then meets
    every output's kernel, 0 * inf = NaN across groups. It expands the feature groups of
    every convolution whose (normalized) result type is not f16 / f32; with more input
    features per group the groups become a base-dilated spatial dim, which the loop
    emitter skips."""
    return (g.feature_groups > 1 and g.group_features == 1
            and not (is_floating(g.result_type) and g.result_type != PrimitiveType.F64))


def multiplies_zeros(g: ConvGeometry) -> bool:
    """True: XLA CPU multiplies the kernel by the zeros of holes and padding (MULTIPLY in the
    module docstring); False: those positions contribute nothing (SKIP)."""
    return runs_on_eigen(g) and not eigen_transposes(g)
