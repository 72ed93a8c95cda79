"""Estimated cycles of the Vector / GpSimd family: the published formulas on sample shapes,
and a cost for every instruction of the family."""

from __future__ import annotations

import pytest

from tilecc.bir import inst as b
from tilecc.bir import inst_random as r
from tilecc.bir import inst_vector as v
from tilecc.bir.enums import BirDtype, EngineType
from tilecc.sim.costs_vector_gpsimd import COSTS


def ap(parts: int, per: int, dtype: BirDtype = BirDtype.float32) -> b.AccessPattern:
    return b.AccessPattern("t", dtype, 0, ((per, parts), (1, per)))


def test_every_instruction_of_the_family_has_a_cost():
    assert set(v.VECTOR_INSTS) | set(r.RANDOM_INSTS) == set(COSTS)


@pytest.mark.parametrize("inst, cycles", [
    (v.InstBatchNormStats("s", EngineType.DVE, [ap(128, 512)], [ap(128, 6)]), 512),
    (v.InstBatchNormStats("s", EngineType.DVE, [ap(128, 8)], [ap(128, 6)]), 64),
    (v.InstBatchNormAggregate("a", EngineType.DVE, [ap(128, 60)], [ap(128, 2)]), 260),
    (v.InstAffineSelect("f", EngineType.Pool, [ap(128, 128), b.Immediate(BirDtype.float32, 0.0)],
                        [ap(128, 128)]), 278),
    (v.InstMax8("m", EngineType.DVE, [ap(32, 128)], [ap(32, 8)]), 128),
    (v.InstMatchReplace8("r", EngineType.DVE, [ap(4, 16), ap(4, 8), b.Immediate(BirDtype.float32, 0.0)],
                         [ap(4, 16)]), 16),
    (v.InstCopyPredicated("c", EngineType.DVE, [ap(8, 100), ap(8, 100, BirDtype.uint8)], [ap(8, 100)]), 200),
    # 150 + 64 * 4 / C with C = ((28 + 16) / 16) / min(4 / 4, 4) = 2.75
    (v.InstLocalGather("g", EngineType.Pool, [ap(128, 2048), ap(128, 4, BirDtype.uint16)], [ap(128, 256)],
                       num_elem_per_idx=4, num_valid_indices=64), 150 + 256 / 2.75),
])
def test_published_formulas(inst, cycles):
    assert COSTS[type(inst)](inst) == pytest.approx(cycles)
