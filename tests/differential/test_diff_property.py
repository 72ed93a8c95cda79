"""Property: random chains of KLR operators give bit-identical results on the codegen +
simulator and on the KLR interpreter.

The chains use operators whose result does not depend on evaluation order (element-wise
ALU ops, exact activation functions, max / min folds, sequential running folds), so the
two executors must agree bit for bit, NaN for NaN; inputs include +-0, +-inf and NaN.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from diff_kernels import F32, KernelBuilder, assert_agree, values
from tilecc.klr import ast as k

A = k.AluOp
R = k.TensorScalarReverseOps
Fn = k.ActivationFunc
Cmd = k.AccumCmd

ARITH = sorted(set(A) - k.BITWISE_ALU_OPS)
EXACT_FUNCS = [Fn.copy, Fn.relu, Fn.abs, Fn.square, Fn.sign]
FOLD_OPS = [A.add, A.max, A.min, A.mult]
IMMEDIATES = st.sampled_from([0.0, -0.0, 1.0, -1.5, 0.25, 3.0, 1e-3, float("inf"), float("nan")])

step = st.one_of(
    st.tuples(st.just("tensor_scalar"), st.sampled_from(ARITH), IMMEDIATES,
              st.sampled_from(ARITH), IMMEDIATES, st.sampled_from(list(R)), st.booleans()),
    st.tuples(st.just("tensor_tensor"), st.sampled_from(ARITH)),
    st.tuples(st.just("stt"), st.sampled_from(ARITH), st.sampled_from(ARITH), st.sampled_from(list(R))),
    st.tuples(st.just("activation"), st.sampled_from(EXACT_FUNCS), IMMEDIATES, st.booleans()),
    st.tuples(st.just("reciprocal"),),
    st.tuples(st.just("cumulative"), st.sampled_from(ARITH), st.sampled_from(FOLD_OPS), IMMEDIATES),
    st.tuples(st.just("row_fold"), st.sampled_from([A.max, A.min]), st.sampled_from(ARITH)),
)


def build(chain, parts: int, free: int, seed: int) -> KernelBuilder:
    rng = np.random.default_rng(seed)
    kb = KernelBuilder()
    x = kb.load("x", values(F32, (parts, free), rng), F32)
    y = kb.load("y", values(F32, (parts, free), rng), F32)
    col = kb.load("c", values(F32, (parts, 1), rng), F32)
    cur = x
    for i, (kind, *args) in enumerate(chain):
        dst = kb.tile(f"t{i}", F32, (parts, free))
        if kind == "tensor_scalar":
            op0, imm0, op1, imm1, reverse, tile_operand = args
            s0 = col if tile_operand else k.Immediate(imm0)
            kb.add(k.TensorScalar(dst, cur, s0, op0, k.Immediate(imm1), op1, reverse))
        elif kind == "tensor_tensor":
            kb.add(k.TensorTensor(dst, cur, y, args[0], engine=k.Engine.dve))
        elif kind == "stt":
            kb.add(k.NcScalarTensorTensor(dst, cur, col, y, args[0], args[1], args[2]))
        elif kind == "activation":
            func, scale, with_bias = args
            kb.add(k.NcActivate(dst, cur, Cmd.Idle, func, k.Immediate(scale),
                                col if with_bias else None))
        elif kind == "reciprocal":
            kb.add(k.Reciprocal(dst, cur))
        elif kind == "cumulative":
            op0, op1, imm = args
            kb.add(k.TensorScalarCumulative(dst, cur, op0, op1, k.Immediate(imm), None,
                                            Cmd.ZeroAccumulate))
        else:  # fold each row to [P,1], then combine it back with the row
            fold_op, combine = args
            folded = kb.tile(f"f{i}", F32, (parts, 1))
            kb.add(k.TensorReduce(folded, cur, fold_op, k.TensorSubDim.X))
            kb.add(k.TensorScalar(dst, cur, folded, combine))
        cur = dst
    kb.store("out", cur)
    return kb


@settings(max_examples=60, deadline=None, derandomize=True)
@given(chain=st.lists(step, min_size=1, max_size=6),
       parts=st.sampled_from([1, 32, 128]), free=st.integers(1, 40), seed=st.integers(0, 2 ** 16))
def test_random_chains_agree_bit_for_bit(chain, parts, free, seed):
    sim, ref = build(chain, parts, free, seed).run()
    assert_agree(sim, ref, exact=True)


INT_STEP = st.one_of(
    st.tuples(st.just("tensor_scalar"), st.sampled_from(list(A)), st.integers(-3, 40),
              st.sampled_from(list(R)), st.booleans()),
    st.tuples(st.just("tensor_tensor"), st.sampled_from(list(A))),
    st.tuples(st.just("fold"), st.sampled_from([A.bitwise_or, A.bitwise_and, A.bitwise_xor, A.max,
                                                A.min]), st.sampled_from(sorted(k.BITWISE_ALU_OPS))),
)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(chain=st.lists(INT_STEP, min_size=1, max_size=6), dtype=st.sampled_from([k.Dtype.int32, k.Dtype.uint32]),
       parts=st.sampled_from([1, 64, 128]), free=st.integers(1, 24), seed=st.integers(0, 2 ** 16))
def test_random_integer_chains_agree_bit_for_bit(chain, dtype, parts, free, seed):
    """Bitwise ops on raw bits, arithmetic through float32 with saturation, integer extremes."""
    rng = np.random.default_rng(seed)
    kb = KernelBuilder()
    x = kb.load("x", values(dtype, (parts, free), rng), dtype)
    y = kb.load("y", values(dtype, (parts, free), rng), dtype)
    counts = kb.load("c", (np.arange(parts) % 37).astype(np.dtype(x.dtype.name)).reshape(parts, 1), dtype)
    cur = x
    for i, (kind, *args) in enumerate(chain):
        dst = kb.tile(f"t{i}", dtype, (parts, free))
        if kind == "tensor_scalar":
            op, imm, reverse, tile_operand = args
            second = A.bitwise_xor if op in k.BITWISE_ALU_OPS else A.add  # same kind, as NKI asks
            kb.add(k.TensorScalar(dst, cur, counts if tile_operand else k.Immediate(imm), op,
                                  k.Immediate(5), second, reverse))
        elif kind == "tensor_tensor":
            kb.add(k.TensorTensor(dst, cur, y, args[0], engine=k.Engine.pool))
        else:
            fold_op, combine = args
            folded = kb.tile(f"f{i}", dtype, (parts, 1))
            kb.add(k.TensorReduce(folded, cur, fold_op, k.TensorSubDim.X))
            kb.add(k.TensorScalar(dst, cur, folded, combine))
        cur = dst
    kb.store("out", cur)
    results = kb.run_or_reject()  # a bitwise op after float results is rejected by both
    if results is not None:
        assert_agree(*results)


WINDOWS = [(0, 128), (0, 64), (64, 64), (0, 32), (32, 32), (64, 32), (96, 32), (32, 1), (96, 7)]


@settings(max_examples=40, deadline=None, derandomize=True)
@given(window=st.sampled_from(WINDOWS), op=st.sampled_from(ARITH), free=st.integers(1, 30),
       step=st.sampled_from([1, 2, -1]), seed=st.integers(0, 2 ** 16))
def test_partition_windows_and_strides(window, op, free, step, seed):
    """An op on partitions start..start+count with a strided / reversed free pattern writes
    exactly those elements; the rest keeps the memset value."""
    start, count = window
    rng = np.random.default_rng(seed)
    kb = KernelBuilder()
    src = kb.load("x", values(F32, (128, 2 * free), rng), F32)
    dst = kb.tile("t", F32, (128, free))
    kb.add(k.MemSet(dst, k.Immediate(-3.0), F32))
    first = 0 if step > 0 else 2 * free - 1 if step == -1 else 0
    num = free
    source = k.AccessPattern(src, count, (k.APPair(step, num),), start, first)
    target = k.AccessPattern(dst, count, (k.APPair(1, num),), start, 0)
    kb.add(k.TensorScalar(target, source, k.Immediate(1.25), op))
    kb.store("out", dst)
    sim, ref = kb.run()
    assert_agree(sim, ref, exact=True)
    out = sim["out"]
    np.testing.assert_array_equal(np.delete(out, np.s_[start:start + count], axis=0), -3.0)
