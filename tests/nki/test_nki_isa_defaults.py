"""nki.isa signatures and defaults are those of the public NKI docs, and a call that leaves
every optional argument at its default traces to the documented KLR fields."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl
from tilecc.klr import ast

E, R = nisa.engine, nisa.reduce_cmd

# parameter order and defaults, from aws-neuron-sdk nki/api/nki/isa/__init__.py
DOCUMENTED = {
    "dma_copy": ("dst src priority oob_mode dge_mode engine name",
                 {"priority": None, "oob_mode": nisa.oob_mode.error, "dge_mode": nisa.dge_mode.unknown,
                  "engine": E.unknown}),
    "tensor_copy": ("dst src engine name", {"engine": E.unknown}),
    "memset": ("dst value engine name", {"engine": E.unknown}),
    "iota": ("dst pattern offset channel_multiplier name", {"offset": 0, "channel_multiplier": 0}),
    "tensor_tensor": ("dst data1 data2 op engine name", {"engine": E.unknown}),
    "tensor_scalar": ("dst data op0 operand0 reverse0 op1 operand1 reverse1 engine name",
                      {"reverse0": False, "op1": None, "operand1": None, "reverse1": False,
                       "engine": E.unknown}),
    "tensor_reduce": ("dst op data axis negate keepdims name", {"negate": False, "keepdims": False}),
    "tensor_partition_reduce": ("dst op data name", {}),
    "tensor_scalar_cumulative": ("dst src op0 op1 imm0 imm1 reduce_cmd name",
                                 {"imm1": None, "reduce_cmd": R.reset_reduce}),
    "activation": ("dst op data bias scale reduce_op reduce_res reduce_cmd name",
                   {"bias": None, "scale": 1.0, "reduce_op": None, "reduce_res": None,
                    "reduce_cmd": R.idle}),
    "activation_reduce": ("dst op data reduce_op reduce_res bias scale name",
                          {"bias": None, "scale": 1.0}),
    "activate2": ("dst op data imm0 imm1 op0 op1 relu_param reverse0 reverse1 reduce_op reduce_res "
                  "reduce_cmd name",
                  {"relu_param": 0.0, "reverse0": False, "reverse1": False, "reduce_op": None,
                   "reduce_res": None, "reduce_cmd": R.idle}),
    "tensor_tensor_scan": ("dst data0 data1 initial op0 op1 reverse0 reverse1 name",
                           {"reverse0": False, "reverse1": False}),
    "exponential": ("dst src max_value reduce_res reduce_cmd reduce_init name",
                    {"max_value": 0.0, "reduce_res": None, "reduce_cmd": R.idle, "reduce_init": 0.0}),
    "reciprocal": ("dst data name", {}),
    "scalar_tensor_tensor": ("dst data op0 operand0 op1 operand1 reverse0 reverse1 name",
                             {"reverse0": False, "reverse1": False}),
    "tensor_scalar_reduce": ("dst data op0 operand0 reduce_op reduce_res reverse0 reduce_cmd "
                             "reduce_init name",
                             {"reverse0": False, "reduce_cmd": R.reset_reduce, "reduce_init": None}),
}


@pytest.mark.parametrize("fn", sorted(DOCUMENTED))
def test_signature_and_defaults(fn):
    order, defaults = DOCUMENTED[fn]
    # keyword-only parameters after the documented ones are NKI 1.x forms (dma_copy's mask=)
    params = {n: p for n, p in inspect.signature(getattr(nisa, fn)).parameters.items()
              if p.kind != p.KEYWORD_ONLY}
    assert list(params) == order.split()
    actual = {n: p.default for n, p in params.items() if p.default is not inspect.Parameter.empty}
    assert actual == {**defaults, "name": None}


def test_enums_and_engine_aliases():
    assert [m.name for m in nisa.engine] == ["tensor", "vector", "scalar", "gpsimd", "dma", "sync", "unknown"]
    assert [m.name for m in nisa.reduce_cmd] == ["idle", "reset", "reduce", "reset_reduce", "load_reduce"]
    assert (nisa.vector_engine, nisa.scalar_engine, nisa.gpsimd_engine) == (E.vector, E.scalar, E.gpsimd)


def body_of(kernel_fn, *specs):
    return nki.trace_kernel(kernel_fn, *[nki.ArgSpec(s, np.float32) for s in specs]).kernel.body


def sbuf(shape, dtype=nl.float32):
    return nl.ndarray(shape, dtype=dtype, buffer=nl.sbuf)


def test_defaults_in_klr():
    def kernel(a):
        x, y, col, z1 = sbuf((128, 32)), sbuf((128, 32)), sbuf((128, 1)), sbuf((1, 32))
        nisa.activation(dst=y, op=nl.exp, data=x)
        nisa.exponential(dst=y, src=x)
        nisa.tensor_scalar(dst=y, data=x, op0=nl.add, operand0=2)
        nisa.tensor_scalar_cumulative(dst=y, src=x, op0=nl.multiply, op1=nl.add, imm0=1.0)
        nisa.tensor_scalar_reduce(dst=y, data=x, op0=nl.add, operand0=1.0, reduce_op=nl.add, reduce_res=col)
        nisa.tensor_tensor_scan(dst=y, data0=x, data1=x, initial=0.0, op0=nl.multiply, op1=nl.add)
        nisa.tensor_reduce(dst=col, op=nl.add, data=x, axis=1)
        nisa.activate2(dst=y, op=nl.relu, data=x, imm0=1.0, imm1=0.0, op0=nl.multiply, op1=nl.add)
        nisa.iota(dst=y, pattern=[[1, 32]])
        nisa.tensor_partition_reduce(dst=z1, op=nl.add, data=x)
        out = nl.ndarray((128, 32), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=y)
        return out

    act, exp, ts, cum, tsr, scan, red, act2, iota, pred, dma = body_of(kernel, (128, 32))
    assert (act.accumulator_cmd, act.scale, act.bias, act.reduce_op, act.reduce_res) == (
        ast.AccumCmd.Idle, ast.Immediate(1.0), None, None, None)
    assert act.activation_func is ast.ActivationFunc.exp and act.dtype is ast.Dtype.float32
    assert (exp.max_value, exp.reduce_res, exp.reducecmd, exp.reduce_init) == (
        ast.Immediate(0.0), None, ast.AccumCmd.Idle, ast.Immediate(0.0))
    # an arithmetic operand is float32 even when written as an int
    assert (ts.imm0, ts.op0, ts.imm1, ts.op1, ts.reverse, ts.engine) == (
        ast.Immediate(2.0), ast.AluOp.add, None, None, ast.TensorScalarReverseOps.none,
        ast.Engine.unassigned)
    assert (cum.reduce_cmd, cum.imm1, cum.op0, cum.op1) == (
        ast.AccumCmd.ZeroAccumulate, None, ast.AluOp.mult, ast.AluOp.add)
    assert (tsr.reduce_cmd, tsr.reduce_init, tsr.reverse0, tsr.reduce_op) == (
        ast.AccumCmd.ZeroAccumulate, None, False, ast.AluOp.add)
    assert (scan.reverse_operands, scan.accumulator_cmd, scan.imm0) == (
        ast.TensorScalarReverseOps.none, ast.AccumCmd.Idle, ast.Immediate(0.0))
    assert (red.op_dim, red.negated, red.keepdims) == (ast.TensorSubDim.X, False, False)
    assert (act2.relu_param, act2.reverse0, act2.reverse1, act2.reduce_op, act2.reduce_cmd) == (
        ast.Immediate(0.0), False, False, ast.AluOp.bypass, ast.AccumCmd.Idle)
    assert iota.pattern == ast.DataPattern(0, (ast.APPair(1, 32),), 0)
    assert pred.op is ast.AluOp.add
    assert isinstance(dma, ast.NcDmaCopy) and dma.compute_op is ast.DgeComputeOp.none


def test_reduce_cmd_crosswalk_and_reverse_flags():
    def kernel(a):
        x, y, col = sbuf((128, 8)), sbuf((128, 8)), sbuf((128, 1))
        for cmd in (R.idle, R.reset, R.reduce, R.reset_reduce):
            nisa.activation(dst=y, op=nl.copy, data=x, reduce_op=nl.add, reduce_res=col, reduce_cmd=cmd)
        for r0, r1 in ((True, False), (False, True), (True, True)):
            nisa.tensor_scalar(dst=y, data=x, op0=nl.subtract, operand0=1.0, reverse0=r0,
                               op1=nl.divide, operand1=2.0, reverse1=r1)
        nisa.tensor_scalar_cumulative(dst=y, src=x, op0=nl.add, op1=nl.maximum, imm0=0.0, imm1=-3.0,
                                      reduce_cmd=R.load_reduce)
        out = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=y)
        return out

    body = body_of(kernel, (128, 8))
    assert [s.accumulator_cmd for s in body[:4]] == [
        ast.AccumCmd.Idle, ast.AccumCmd.Zero, ast.AccumCmd.Accumulate, ast.AccumCmd.ZeroAccumulate]
    assert [s.reverse for s in body[4:7]] == [ast.TensorScalarReverseOps.first,
                                              ast.TensorScalarReverseOps.second,
                                              ast.TensorScalarReverseOps.both]
    assert (body[7].reduce_cmd, body[7].imm1) == (ast.AccumCmd.LoadAccumulate, ast.Immediate(-3.0))


def test_engines_map_to_klr_and_tensor_tensor_engine_choice():
    def kernel(a):
        x, y = sbuf((128, 8)), sbuf((128, 8))
        i, j = sbuf((128, 8), nl.int32), sbuf((128, 8), nl.int32)
        p = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.psum)
        nisa.tensor_scalar(dst=y, data=x, op0=nl.multiply, operand0=2.0, engine=nisa.scalar_engine)
        nisa.tensor_copy(dst=y, src=x, engine=nisa.gpsimd_engine)
        nisa.tensor_tensor(dst=y, data1=x, data2=x, op=nl.add)                 # float: Vector
        nisa.tensor_tensor(dst=j, data1=i, data2=i, op=nl.add)                 # all int32: GpSimd
        nisa.tensor_tensor(dst=p, data1=i, data2=i, op=nl.add)                 # PSUM: Vector
        nisa.tensor_tensor(dst=y, data1=x, data2=x, op=nl.power)               # power: GpSimd
        nisa.tensor_tensor(dst=j, data1=i, data2=i, op=nl.add, engine=nisa.vector_engine)
        out = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=y)
        return out

    ts, copy, *tts, _ = body_of(kernel, (128, 8))
    assert ts.engine is ast.Engine.act and copy.engine is ast.Engine.pool
    assert [t.engine for t in tts] == [ast.Engine.dve, ast.Engine.pool, ast.Engine.dve,
                                       ast.Engine.pool, ast.Engine.dve]


def test_bitvec_operands_are_int32_and_shifts_are_logical():
    def kernel(a):
        i, u = sbuf((128, 8), nl.int32), sbuf((128, 8), nl.uint32)
        nisa.tensor_scalar(dst=i, data=i, op0=nl.bitwise_and, operand0=255.0, op1=nl.right_shift, operand1=2)
        nisa.tensor_scalar(dst=u, data=u, op0=nl.right_shift, operand0=3, op1=nl.invert, operand1=0)
        nisa.tensor_scalar(dst=u, data=u, op0=np.left_shift, operand0=1, op1=np.right_shift, operand1=1)
        out = nl.ndarray((128, 8), dtype=nl.int32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=i)
        return out

    signed, unsigned, numpy_op, _ = body_of(kernel, (128, 8))
    # as KLR's own frontend (klr 0.0.12 traces np.right_shift to logical_shift_right)
    assert (signed.imm0, signed.op1, signed.imm1) == (ast.Immediate(255), ast.AluOp.logical_shift_right,
                                                      ast.Immediate(2))
    assert (unsigned.op0, unsigned.op1, unsigned.imm1) == (ast.AluOp.logical_shift_right,
                                                           ast.AluOp.bitwise_not, ast.Immediate(0))
    assert (numpy_op.op0, numpy_op.op1) == (ast.AluOp.logical_shift_left, ast.AluOp.logical_shift_right)


def test_activation_scalar_bias_becomes_a_memset_column_and_activation_reduce_ctor():
    def kernel(a):
        x, y, col = sbuf((64, 8)), sbuf((64, 8)), sbuf((64, 1))
        nisa.activation(dst=y, op=nl.tanh, data=x, bias=0.5, scale=col)
        nisa.activation_reduce(dst=y, op=nl.exp, data=x, reduce_op=nl.add, reduce_res=col)
        out = nl.ndarray((64, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=y)
        return out

    fill, act, act_reduce, _ = body_of(kernel, (64, 8))
    assert isinstance(fill, ast.MemSet) and fill.value == ast.Immediate(0.5)
    assert act.bias == fill.dst and ast.access_shape(fill.dst) == (64, (1,))
    assert isinstance(act.scale, (ast.TensorName, ast.AccessPattern))
    assert type(act_reduce) is ast.ActivationReduce
    assert act_reduce.accumulator_cmd is ast.AccumCmd.ZeroAccumulate
