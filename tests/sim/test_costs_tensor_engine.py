"""The Tensor Engine family's estimated cycles equal the NKI ISA reference's formulas."""

from __future__ import annotations

from tilecc.bir.enums import BirDtype, EngineType
from tilecc.bir.inst import AccessPattern
from tilecc.bir.inst_tensor_engine import InstMatMult, InstTranspose
from tilecc.sim.costs_tensor_engine import COSTS


def ap(dtype, parts, free):
    return AccessPattern("x", dtype, 0, ((free, parts), (1, free)))


def test_matmul_cycles_by_dtype_and_shape():
    bf16, f32 = BirDtype.bfloat16, BirDtype.float32
    mm = lambda st, mv, **kw: COSTS[InstMatMult](InstMatMult("m", EngineType.PE, [st, mv], [st], **kw))  # noqa: E731
    assert mm(ap(bf16, 128, 128), ap(bf16, 128, 512)) == 512        # max(min(64, 128), 512)
    assert mm(ap(bf16, 128, 128), ap(bf16, 128, 16)) == 64          # the stationary load bound
    assert mm(ap(bf16, 128, 8), ap(bf16, 128, 4)) == 8
    assert mm(ap(f32, 128, 128), ap(f32, 128, 512)) == 4 * 512      # float32: four passes
    assert mm(ap(bf16, 96, 128), ap(bf16, 96, 96), is_transpose=True) == 96   # max(P, min(64, F))


def test_vector_transpose_cycles():
    t = lambda free: COSTS[InstTranspose](InstTranspose("t", EngineType.DVE, [ap(BirDtype.float32, 32, free)], []))  # noqa: E731
    assert (t(8), t(32)) == (64, 64)                                # MIN_II
