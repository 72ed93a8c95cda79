"""Reference interpreter of KLR kernels, straight from the NKI instruction semantics.

Contract: `interpret_kernel(kernel, inputs)` runs `kernel.body` in order on numpy arrays
and returns every kernel output (by name, in its shape and dtype). It is written
independently of the codegen and the BIR simulator (it imports neither) so that the two
can be held against each other; its op tables are keyed by KLR's own enums.

Model (the semantics listed in klr/ast.py and reference/klr-bir.md; memory, registers and
the AccumCmd rule are klr/interp_state.py):
- Every tensor name owns a zero-filled byte buffer of its Address (par_size x free_size
  bytes), whatever its memory, and a definedness shadow of its elements (tilecc/definedness.py,
  the rule the BIR simulator applies too): inputs are defined, everything else starts
  undefined; computing on undefined elements is allowed and the results are undefined per the
  default rule; writing undefined elements into HBM is reported by the `uninit` policy,
  naming the HBM element and the statement that first read the undefined data. Elements of
  an output nothing writes keep their zeros. Accesses gather / scatter elements with index arrays
  (`klr.ast.to_pattern`): partition par_offset + p, free element free_offset +
  sum(x_i * step_i). An index outside the buffer raises InterpError naming the statement.
- The ALU, the activation functions and the conversion on write are in klr/interp_alu.py
  (arithmetic in float32, bitwise ops on raw integer bits, activation functions in
  float64, round-to-nearest-even / saturating conversion).
- Accumulator registers: one float32 per partition for the activation engine and one for
  the vector engine (Exponential, TensorScalarReduce, TensorScalarCumulative,
  TensorTensorScan), indexed by the partition of the destination access. AccumCmd: Idle
  leaves them, Zero sets the identity, ZeroAccumulate folds the new rows from the
  identity, Accumulate folds them into the registers, LoadAccumulate from the load value
  (the activation engine has none: there it adds like Accumulate). A cumulative scan
  starts from op1's identity on Idle / Zero / ZeroAccumulate, from imm1 on
  LoadAccumulate, from the registers on Accumulate; TensorTensorScan starts from imm0,
  or from the registers on Accumulate.
  Reductions fold the float32 results before the destination conversion.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from tilecc.errors import InterpError
from tilecc.klr import ast as k
from tilecc.klr.interp_state import State, accumulate, lanes, rows
from tilecc.klr.interp_tensor_engine import TENSOR_ENGINE_RUNNERS
from tilecc.klr.interp_alu import (ALU, activation, alu, binary, fold, identity_of, np_dtype,
                                   to_dtype)
from tilecc.source_pos import describe

F32 = np.float32
A = k.AluOp
R = k.TensorScalarReverseOps
Cmd = k.AccumCmd

def rev_flags(reverse: k.TensorScalarReverseOps) -> tuple[bool, bool]:
    return reverse in (R.first, R.both), reverse in (R.second, R.both)


# ---------------------------------------------------------------- operators

def run_activate(s: State, op: k.NcActivate) -> None:
    src = s.read(op.src)
    scale = s.operand(op.scale, src)
    bias = s.operand(op.bias, src) if op.bias is not None else F32(0)
    with np.errstate(all="ignore"):
        pre = src.astype(F32) * np.asarray(scale, F32) + np.asarray(bias, F32)
    out = activation(op.activation_func, pre)
    s.write(op.dst, out)
    if op.reduce_op is not None and op.reduce_op != A.add:
        raise InterpError(f"activation reduces with add only, not {op.reduce_op.name}")
    lane = lanes(op.dst)
    # the activation engine has no load value: LoadAccumulate adds like Accumulate
    cmd = Cmd.Accumulate if op.accumulator_cmd == Cmd.LoadAccumulate else op.accumulator_cmd
    accumulate(s, s.act, lane, cmd, A.add, rows(out))
    if op.reduce_res is not None:
        s.write(op.reduce_res, s.read_registers(s.act, lane).reshape(-1, 1))


def run_activate2(s: State, op: k.Activate2) -> None:
    src = s.read(op.src)
    val = binary(op.op0, src, s.operand(op.imm0, src), op.reverse0)
    val = binary(op.op1, val, s.operand(op.imm1, src), op.reverse1)
    out = activation(op.activation_func, val.astype(F32))
    s.write(op.dst, out)
    lane = lanes(op.dst)
    accumulate(s, s.act, lane, op.reduce_cmd, op.reduce_op, rows(out))
    if op.reduce_res is not None:
        s.write(op.reduce_res, s.read_registers(s.act, lane).reshape(-1, 1))


def run_exponential(s: State, op: k.Exponential) -> None:
    src = s.read(op.src)
    with np.errstate(all="ignore"):
        out = np.exp(src.astype(F32) - np.asarray(s.operand(op.max_value, src), F32))
    s.write(op.dst, out)
    lane = lanes(op.dst)
    accumulate(s, s.dve, lane, op.reducecmd, A.add, rows(out), s.operand(op.reduce_init, src))
    if op.reduce_res is not None:
        s.write(op.reduce_res, s.read_registers(s.dve, lane).reshape(-1, 1))


def run_reciprocal(s: State, op: k.Reciprocal) -> None:
    with np.errstate(all="ignore"):
        s.write(op.dst, F32(1) / s.read(op.src).astype(F32))


def run_tensor_scalar(s: State, op: k.TensorScalar) -> None:
    src = s.read(op.src)
    r0, r1 = rev_flags(op.reverse)
    out = binary(op.op0, src, s.operand(op.imm0, src), r0)
    if op.op1 is not None and op.imm1 is not None:
        out = binary(op.op1, out, s.operand(op.imm1, src), r1)
    elif op.op1 not in (None, A.bypass):
        raise InterpError(f"op1 {op.op1.name} without its operand")
    s.write(op.dst, out)


def run_tensor_scalar_reduce(s: State, op: k.TensorScalarReduce) -> None:
    if op.reduce_cmd != Cmd.ZeroAccumulate or op.reduce_init is not None or op.reduce_op is None:
        raise InterpError("tensor_scalar_reduce needs reduce_op, ZeroAccumulate and no reduce_init")
    src = s.read(op.src)
    out = binary(op.op0, src, s.operand(op.operand0, src), op.reverse0)
    s.write(op.dst, out)
    lane = lanes(op.dst)
    accumulate(s, s.dve, lane, Cmd.ZeroAccumulate, op.reduce_op, rows(out))
    s.write(op.reduce_res, s.read_registers(s.dve, lane).reshape(-1, 1))


def arithmetic_only(what: str, *ops: k.AluOp) -> None:
    """Scans and running folds live in the float32 registers: no bitwise ops."""
    for alu_op in ops:
        if ALU[alu_op][0]:
            raise InterpError(f"{what} runs in float32 registers: {alu_op.name} is bitwise")


def run_cumulative(s: State, op: k.TensorScalarCumulative) -> None:
    arithmetic_only("tensor_scalar_cumulative", op.op0, op.op1)
    src = s.read(op.src)
    r0, r1 = rev_flags(op.reverse)
    t = rows(binary(op.op0, src, s.operand(op.imm0, src), r0))
    lane = lanes(op.dst)
    if op.reduce_cmd in (Cmd.Idle, Cmd.Zero, Cmd.ZeroAccumulate):
        reg = np.full(t.shape[0], identity_of(op.op1), F32)
    elif op.reduce_cmd == Cmd.LoadAccumulate:
        if op.imm1 is None:
            raise InterpError("LoadAccumulate needs imm1")
        reg = np.broadcast_to(np.asarray(s.operand(op.imm1, src), F32).reshape(-1), (t.shape[0],)).copy()
    else:
        identity_of(op.op1)
        reg = s.read_registers(s.dve, lane).copy()
    out = np.empty(t.shape, F32)
    for i in range(t.shape[1]):
        reg = binary(op.op1, t[:, i], reg, r1)
        out[:, i] = reg
    s.write_registers(s.dve, lane, reg)
    s.write(op.dst, out)


def run_scalar_tensor_tensor(s: State, op: k.NcScalarTensorTensor) -> None:
    data = s.read(op.data)
    r0, r1 = rev_flags(op.reverse_operands)
    tmp = binary(op.op0, data, s.operand(op.src0, data), r0)
    if isinstance(op.src1, k.Immediate):
        raise InterpError("scalar_tensor_tensor's src1 must be a tile")
    other = s.read(op.src1)
    if other.shape != data.shape:
        raise InterpError(f"scalar_tensor_tensor shapes differ: {list(data.shape)} vs {list(other.shape)}")
    s.write(op.dst, binary(op.op1, tmp, other, r1))


def run_tensor_tensor(s: State, op: k.TensorTensor) -> None:
    a, b = s.read(op.src0), s.read(op.src1)
    if a.shape != b.shape:
        raise InterpError(f"tensor_tensor shapes differ: {list(a.shape)} vs {list(b.shape)}")
    s.write(op.dst, alu(op.op, a, b))


def run_scan(s: State, op: k.TensorTensorScan) -> None:
    arithmetic_only("tensor_tensor_scan", op.op0, op.op1)
    a, b = s.read(op.src0), s.read(op.src1)
    if a.shape != b.shape:
        raise InterpError(f"tensor_tensor_scan shapes differ: {list(a.shape)} vs {list(b.shape)}")
    r0, r1 = rev_flags(op.reverse_operands)
    lane = lanes(op.dst)
    if op.accumulator_cmd == Cmd.Accumulate:
        prev = s.read_registers(s.dve, lane).copy()
    else:
        prev = np.broadcast_to(np.asarray(s.operand(op.imm0, a), F32).reshape(-1), (a.shape[0],)).copy()
    ra, rb = rows(a), rows(b)
    out = np.empty(ra.shape, F32)
    for i in range(ra.shape[1]):
        prev = binary(op.op1, binary(op.op0, ra[:, i], prev, r0), rb[:, i], r1).astype(F32)
        out[:, i] = prev
    s.write_registers(s.dve, lane, prev)
    s.write(op.dst, out)


def run_tensor_reduce(s: State, op: k.TensorReduce) -> None:
    src = s.read(op.src)
    count = int(op.op_dim) + 1
    if count > src.ndim - 1:
        raise InterpError(f"op_dim {op.op_dim.name} needs {count} free dims; the source has {src.ndim - 1}")
    kept = src.shape[: src.ndim - count]
    flat = src.reshape(kept + (-1,)).reshape(-1, int(np.prod(src.shape[src.ndim - count:])))
    bitwise = ALU[op.op][0]
    if op.op == A.average:
        with np.errstate(all="ignore"):
            result = flat.astype(F32).sum(axis=1, dtype=F32) / F32(flat.shape[1])
    else:
        first = flat[:, 0] if bitwise else flat[:, 0].astype(F32)
        result = fold(op.op, first, flat[:, 1:]) if not bitwise else _int_fold(op.op, flat)
    if op.negated:
        if bitwise:
            raise InterpError(f"negated reduce needs an arithmetic op, not {op.op.name}")
        result = -result
    s.write(op.dst, result.reshape(kept))


def _int_fold(op: k.AluOp, flat: np.ndarray) -> np.ndarray:
    acc = flat[:, 0]
    for i in range(1, flat.shape[1]):
        acc = alu(op, acc, flat[:, i])
    return acc


PARTITION_REDUCE_OPS = frozenset({A.add, A.average, A.max, A.bitwise_or, A.bitwise_and})


def run_partition_reduce(s: State, op: k.TensorPartitionReduce) -> None:
    if op.op not in PARTITION_REDUCE_OPS:
        raise InterpError(f"partition reduce op must be one of add, average, max, bitwise_or, "
                          f"bitwise_and, not {op.op.name}")
    data = s.read(op.data)
    if op.op == A.average:
        with np.errstate(all="ignore"):
            result = data.astype(F32).sum(axis=0, dtype=F32) / F32(data.shape[0])
    else:
        acc = data[0] if ALU[op.op][0] else data[0].astype(F32)
        for p in range(1, data.shape[0]):
            acc = alu(op.op, acc, data[p])
        result = acc
    s.write(op.dst, np.asarray(result)[None, ...])


def run_dma_copy(s: State, op: k.NcDmaCopy) -> None:
    src = s.read(op.src)
    if op.compute_op == k.DgeComputeOp.add:
        current = s.read(op.dst)
        s.write(op.dst, alu(A.add, current, src.reshape(current.shape)))
    else:
        s.write(op.dst, src)


def run_copy(s: State, op: k.NcCopy) -> None:
    s.write(op.dst, s.read(op.src))


def run_memset(s: State, op: k.MemSet) -> None:
    shape = (k.access_shape(op.dst)[0],) + k.access_shape(op.dst)[1]
    raw = np.asarray(op.value.value, F32 if isinstance(op.value.value, float) else np.int64)
    s.write(op.dst, np.broadcast_to(to_dtype(raw, np_dtype(op.dtype)), shape))


def run_iota(s: State, op: k.Iota) -> None:
    parts = k.access_shape(op.dst)[0]
    pat = op.pattern
    grid = np.int64(pat.offset) + np.arange(parts, dtype=np.int64).reshape(
        (-1,) + (1,) * len(pat.pattern)) * pat.channel_multiplier
    for axis, pair in enumerate(pat.pattern):
        shape = [1] * (len(pat.pattern) + 1)
        shape[axis + 1] = pair.num
        grid = grid + np.arange(pair.num, dtype=np.int64).reshape(shape) * pair.step
    s.write(op.dst, grid)


# each runner takes an instance of its key class: a relation the value type cannot state
RUNNERS: dict[type[k.Operator], Callable[[State, Any], None]] = {
    k.NcActivate: run_activate, k.ActivationReduce: run_activate, k.Activate2: run_activate2,
    k.Exponential: run_exponential, k.Reciprocal: run_reciprocal,
    k.TensorScalar: run_tensor_scalar, k.TensorScalarReduce: run_tensor_scalar_reduce,
    k.TensorScalarCumulative: run_cumulative, k.NcScalarTensorTensor: run_scalar_tensor_tensor,
    k.TensorTensor: run_tensor_tensor, k.TensorTensorScan: run_scan,
    k.TensorReduce: run_tensor_reduce, k.TensorPartitionReduce: run_partition_reduce,
    k.NcDmaCopy: run_dma_copy, k.NcCopy: run_copy, k.MemSet: run_memset, k.Iota: run_iota,
    **TENSOR_ENGINE_RUNNERS,
}


def describe_stmt(number: int, stmt: k.Operator) -> str:
    """`kernel.py:12:9 nl.exp: body[3] (NcActivate)`: the statement's kernel line and NKI call
    (when it has a `pos`), then its place in the body."""
    label = f"body[{number}] ({type(stmt).__name__})"
    pos = stmt.pos
    where = describe(pos.filename, pos.line, pos.column) if pos is not None else ""
    return f"{where}: {label}" if where else label


def interpret_kernel(kernel: k.Kernel, inputs: Mapping[str, np.ndarray],
                     uninit: str = "error") -> dict[str, np.ndarray]:
    """Run `kernel` on `inputs` (by input name); its outputs by name. `uninit` is what
    undefined data reaching HBM does: "error" | "warn" | "ignore" (tilecc/definedness.py)."""
    s = State(uninit)
    declared = {t.name: t for t in kernel.inputs}
    if unknown := sorted(set(inputs) - set(declared)):
        raise InterpError(f"unknown input {unknown[0]!r}; the kernel's inputs are {sorted(declared)}")
    for name, tensor in declared.items():
        if name not in inputs:
            raise InterpError(f"missing input {name!r}")
        value = np.asarray(inputs[name])
        want = (tensor.shape.par_dim,) + tuple(tensor.shape.free_dims)
        if value.shape != want or value.dtype != np_dtype(tensor.dtype):
            raise InterpError(f"input {name!r} is {value.dtype}{list(value.shape)}; the kernel "
                              f"expects {np_dtype(tensor.dtype)}{list(want)}")
        s.write(tensor, value)
    for number, stmt in enumerate(kernel.body):
        runner = RUNNERS.get(type(stmt))
        if runner is None:
            raise InterpError(f"{describe_stmt(number, stmt)}: operator {type(stmt).__name__} is "
                              f"not interpreted")
        try:
            s.begin(describe_stmt(number, stmt))
            runner(s, stmt)
        except InterpError as err:
            raise InterpError(f"{describe_stmt(number, stmt)}: {err}") from None
        except (KeyError, IndexError, TypeError) as err:
            raise InterpError(f"{describe_stmt(number, stmt)}: malformed operator: {err}") from None
    result: dict[str, np.ndarray] = {}
    for tensor in kernel.outputs:
        shape = (tensor.shape.par_dim,) + tuple(tensor.shape.free_dims)
        elements, idx, _ = s.index(tensor)   # unwritten elements keep their zeros
        result[tensor.name] = elements[idx].reshape(shape).copy()
    return result


# Operator families beyond spec 003 (their own modules, written from the NKI ISA pages).
from tilecc.klr.interp_random import RUNNERS as _RANDOM_RUNNERS  # noqa: E402
from tilecc.klr.interp_vector import RUNNERS as _VECTOR_RUNNERS  # noqa: E402

RUNNERS.update(_VECTOR_RUNNERS)
RUNNERS.update(_RANDOM_RUNNERS)
