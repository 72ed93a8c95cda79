"""interp/conv_zeros.py: XLA CPU's choice between multiplying the zeros of holes and padding
and skipping them, one case per predicate of the rule (the oracle cases against XLA are in
test_interpreter_conv.py; these need no XLA, and reach the limits no oracle run affords)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tilecc.hlo.interp.conv_zeros import (ConvGeometry, batch_group_expansion,
                                          expands_feature_groups, multiplies_zeros)
from tilecc.hlo.types import PrimitiveType as T

# f32[2,8,8,3] x f32[3,3,3,4], stride 1, base dilation 2: Eigen's transposed convolution
TRANSPOSED = ConvGeometry(
    element_type=T.F32, result_type=T.F32, canonical=True, in_entry=True, batch=2,
    in_spatial=[8, 8], kernel_spatial=[3, 3], out_features=4, strides=[1, 1],
    lhs_dilate=[2, 2], rhs_dilate=[1, 1], reversal=[0, 0], feature_groups=1,
    group_features=3, batch_groups=1, element_counts=(384, 108, 1352))


@pytest.mark.parametrize("change, multiplies", [
    ({}, False),
    ({"strides": [1, 2]}, True),
    ({"rhs_dilate": [2, 1]}, True),
    ({"feature_groups": 3, "group_features": 1}, True),
    ({"lhs_dilate": [1, 1]}, True),  # no base dilation: patches
    ({"in_spatial": [8, 8, 2], "kernel_spatial": [3, 3, 1], "strides": [1, 1, 1],
      "lhs_dilate": [2, 2, 1], "rhs_dilate": [1, 1, 1], "reversal": [0, 0, 0]}, True),  # 3-d
    ({"batch": 4096, "in_spatial": [128, 128]}, True),  # a buffer of 9 GiB: patches
    ({"batch": 1024, "in_spatial": [128, 128]}, False),  # 2.25 GiB
    ({"element_type": T.F64, "strides": [1, 2]}, False),  # loop emitter
    ({"element_type": T.BF16, "strides": [1, 2]}, True),  # normalized to f32
    ({"element_type": T.F8E4M3FN, "strides": [1, 2]}, True),  # normalized to f16
    ({"element_type": T.S32, "strides": [1, 2]}, False),
    ({"reversal": [0, 1], "strides": [1, 2]}, False),
    ({"canonical": False, "strides": [1, 2]}, True),  # canonicalized in the entry
    ({"canonical": False, "in_entry": False, "strides": [1, 2]}, False),
    ({"element_counts": (384, 2, 1352), "strides": [1, 2]}, False),  # 8 bytes: under-aligned
    ({"element_counts": (384, 3, 1352), "strides": [1, 2]}, True),
    ({"in_spatial": [8, 8, 8, 8], "kernel_spatial": [3, 3, 1, 1], "strides": [1, 2, 1, 1],
      "lhs_dilate": [2, 2, 1, 1], "rhs_dilate": [1, 1, 1, 1], "reversal": [0, 0, 0, 0]},
     False),  # 4-d: the loop emitter
])
def test_multiplies_zeros(change: dict, multiplies: bool) -> None:
    assert multiplies_zeros(replace(TRANSPOSED, **change)) is multiplies


def test_batch_groups_become_a_spatial_dim() -> None:
    """Batch groups of 2 on a 1-d convolution: a 2-d one, stride 1, base dilation 2, so
    transposed (skip); groups of 3: stride 2 (multiply); 2-d: a 3-d one (multiply)."""
    one_d = replace(TRANSPOSED, batch=4, in_spatial=[6], kernel_spatial=[3], strides=[1],
                    lhs_dilate=[1], rhs_dilate=[1], reversal=[0], batch_groups=2)
    expanded = batch_group_expansion(one_d)
    assert (expanded.in_spatial, expanded.strides, expanded.lhs_dilate, expanded.batch,
            expanded.out_features, expanded.canonical) == ([6, 2], [1, 1], [1, 2], 2, 2, False)
    assert not multiplies_zeros(one_d)
    assert multiplies_zeros(replace(one_d, batch=6, out_features=6, batch_groups=3))
    assert multiplies_zeros(replace(TRANSPOSED, lhs_dilate=[1, 1], batch=4, batch_groups=2))
    # input batch = output features = group count: same window, the cross pairs masked
    same = batch_group_expansion(replace(one_d, batch=2, out_features=2))
    assert (same.in_spatial, same.strides, same.batch_groups) == ([6], [1], 1)


@pytest.mark.parametrize("result_type, group_features, expands", [
    (T.F64, 1, True), (T.C64, 1, True), (T.S32, 1, True), (T.F64, 2, False),
    (T.F32, 1, False), (T.F16, 1, False), (T.BF16, 1, False),
])
def test_feature_groups_of_one_feature_expand_off_f16_f32(result_type: T, group_features: int,
                                                         expands: bool) -> None:
    g = replace(TRANSPOSED, result_type=result_type, feature_groups=4,
                group_features=group_features)
    assert expands_feature_groups(g) is expands
    assert not expands_feature_groups(replace(g, feature_groups=1))
