"""Reference interpreter of KLR kernels, straight from the NKI instruction semantics.

Contract: `interpret_kernel(kernel, inputs)` runs `kernel.body` in order on numpy arrays
and returns every kernel output (by name, in its shape and dtype). It is written
independently of the codegen and the BIR simulator (it imports neither) so that the two
can be held against each other; its op tables are keyed by KLR's own enums.

Model (the semantics listed in klr/ast.py and reference/klr-bir.md):
- Every tensor name owns a zero-filled byte buffer of its Address (par_size x free_size
  bytes), whatever its memory; accesses gather / scatter elements with index arrays
  (`klr.ast.to_pattern`): partition par_offset + p, free element free_offset +
  sum(x_i * step_i). An index outside the buffer raises InterpError naming the statement.
- Arithmetic AluOps take float32 operands and give float32 (comparisons and logical ops
  1.0 / 0.0, NaN unequal to all); bitwise ops act on the integer bits of the data's dtype
  (float immediates converted by value); shifts by >= the bit width give 0 (arithmetic
  right: the sign fill); max / min propagate NaN and order -0 < +0 (IEEE 754-2019
  maximum / minimum); mod is C fmod. Reverse flags swap the
  operands of their stage; bypass returns its left operand, unary ops read the left one.
- Writing converts float32 to the destination dtype by round-to-nearest-even (ml_dtypes
  for bf16 / fp8), to integers rounded half-to-even, saturated, NaN -> 0; integer results
  go to integer destinations by their bits.
- Activation functions are evaluated in float64 and rounded to float32.
- Accumulator registers: one float32 per partition for the activation engine and one for
  the vector engine (Exponential, TensorScalarReduce, TensorScalarCumulative,
  TensorTensorScan), indexed by the partition of the destination access. AccumCmd: Idle
  leaves them, Zero sets the identity, ZeroAccumulate folds the new rows from the
  identity, Accumulate folds them into the registers, LoadAccumulate from the load value.
  Reductions fold the float32 results before the destination conversion.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import ml_dtypes
import numpy as np

from tilecc.errors import InterpError
from tilecc.klr import ast as k

F32 = np.float32
A = k.AluOp
R = k.TensorScalarReverseOps
Cmd = k.AccumCmd

NP_DTYPE: dict[k.Dtype, np.dtype] = {
    k.Dtype.bfloat16: np.dtype(ml_dtypes.bfloat16), k.Dtype.float8e3: np.dtype(ml_dtypes.float8_e3m4),
    k.Dtype.float8e4: np.dtype(ml_dtypes.float8_e4m3), k.Dtype.float8e5: np.dtype(ml_dtypes.float8_e5m2),
    k.Dtype.float16: np.dtype("float16"), k.Dtype.float32: np.dtype("float32"),
    k.Dtype.float32r: np.dtype("float32"), k.Dtype.int8: np.dtype("int8"),
    k.Dtype.int16: np.dtype("int16"), k.Dtype.int64: np.dtype("int64"),
    k.Dtype.int32: np.dtype("int32"), k.Dtype.uint8: np.dtype("uint8"),
    k.Dtype.uint16: np.dtype("uint16"), k.Dtype.uint32: np.dtype("uint32"),
    k.Dtype.uint64: np.dtype("uint64"), k.Dtype.float8_e4m3: np.dtype(ml_dtypes.float8_e4m3),
    k.Dtype.float8_e4m3fn: np.dtype(ml_dtypes.float8_e4m3fn),
}


def np_dtype(dtype: k.Dtype) -> np.dtype:
    if dtype not in NP_DTYPE:
        raise InterpError(f"dtype {dtype.name} has no element representation")
    return NP_DTYPE[dtype]


# ---------------------------------------------------------------- the ALU, in KLR's enum space

def _flag(b: np.ndarray) -> np.ndarray:
    return np.where(b, F32(1), F32(0))


def _shl(x: np.ndarray, c: np.ndarray) -> np.ndarray:
    bits = x.dtype.itemsize * 8
    wide = x.astype(np.uint64) if x.dtype.kind == "u" else x.view(f"u{x.dtype.itemsize}").astype(np.uint64)
    c64 = np.asarray(c).astype(f"u{x.dtype.itemsize}").astype(np.uint64)
    mask = np.uint64((1 << bits) - 1)
    shifted = np.where(c64 < bits, (wide << np.minimum(c64, np.uint64(63))) & mask, np.uint64(0))
    return shifted.astype(f"u{x.dtype.itemsize}").view(x.dtype)


def _lshr(x: np.ndarray, c: np.ndarray) -> np.ndarray:
    bits = x.dtype.itemsize * 8
    wide = x.view(f"u{x.dtype.itemsize}").astype(np.uint64)
    c64 = np.asarray(c).astype(f"u{x.dtype.itemsize}").astype(np.uint64)
    shifted = np.where(c64 < bits, wide >> np.minimum(c64, np.uint64(63)), np.uint64(0))
    return shifted.astype(f"u{x.dtype.itemsize}").view(x.dtype)


def _ashr(x: np.ndarray, c: np.ndarray) -> np.ndarray:
    bits = x.dtype.itemsize * 8
    wide = x.view(f"i{x.dtype.itemsize}").astype(np.int64)
    c64 = np.minimum(np.asarray(c).astype(f"u{x.dtype.itemsize}").astype(np.uint64),
                     np.uint64(bits - 1)).astype(np.int64)
    return (wide >> c64).astype(f"i{x.dtype.itemsize}").view(x.dtype)


def _ieee_max(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """IEEE 754-2019 maximum: NaN if either is NaN, and -0 < +0."""
    x, y = np.broadcast_arrays(x, y)
    tie = np.where(np.signbit(x), y, x)  # equal values: prefer the one without a sign bit
    out = np.where(x > y, x, np.where(y > x, y, tie))
    return np.where(np.isnan(x) | np.isnan(y), F32(np.nan), out)


# op -> (is_bitwise, fn(x, y), reduction identity or None)
ALU: dict[k.AluOp, tuple[bool, Callable[[np.ndarray, np.ndarray], np.ndarray], float | None]] = {
    A.abs: (False, lambda x, y: np.fabs(x), None),
    A.add: (False, lambda x, y: x + y, 0.0),
    A.arith_shift_left: (True, _shl, None),
    A.arith_shift_right: (True, _ashr, None),
    A.average: (False, lambda x, y: (x + y) / F32(2), None),
    A.bitwise_and: (True, lambda x, y: x & y, -1),
    A.bitwise_not: (True, lambda x, y: ~x, None),
    A.bitwise_or: (True, lambda x, y: x | y, 0),
    A.bitwise_xor: (True, lambda x, y: x ^ y, 0),
    A.bypass: (False, lambda x, y: x, None),
    A.divide: (False, lambda x, y: x / y, None),
    A.is_equal: (False, lambda x, y: _flag(x == y), None),
    A.is_ge: (False, lambda x, y: _flag(x >= y), None),
    A.is_gt: (False, lambda x, y: _flag(x > y), None),
    A.is_le: (False, lambda x, y: _flag(x <= y), None),
    A.is_lt: (False, lambda x, y: _flag(x < y), None),
    A.logical_and: (False, lambda x, y: _flag((x != 0) & (y != 0)), 1.0),
    A.logical_or: (False, lambda x, y: _flag((x != 0) | (y != 0)), 0.0),
    A.logical_shift_left: (True, _shl, None),
    A.logical_shift_right: (True, _lshr, None),
    A.logical_xor: (False, lambda x, y: _flag((x != 0) != (y != 0)), 0.0),
    A.max: (False, lambda x, y: _ieee_max(x, y), -math.inf),
    A.min: (False, lambda x, y: _ieee_max(-x, -y) * F32(-1), math.inf),
    A.mod: (False, lambda x, y: np.fmod(x, y), None),
    A.mult: (False, lambda x, y: x * y, 1.0),
    A.not_equal: (False, lambda x, y: _flag(x != y), None),
    A.pow: (False, lambda x, y: np.power(x, y), None),
    A.rsqrt: (False, lambda x, y: F32(1) / np.sqrt(x), None),
    A.subtract: (False, lambda x, y: x - y, 0.0),
}


def alu(op: k.AluOp, x: np.ndarray | np.generic, y: np.ndarray | np.generic) -> np.ndarray:
    bitwise, fn, _ = ALU[op]
    x, y = np.asarray(x), np.asarray(y)
    if bitwise:
        ints = [v.dtype for v in (x, y) if v.dtype.kind in "iu" and v.ndim > 0]
        ints = ints or [v.dtype for v in (x, y) if v.dtype.kind in "iu"]
        if not ints:
            raise InterpError(f"bitwise op {op.name} on non-integer data")
        like = ints[0]
        x, y = (v.astype(np.int64).astype(like) if v.dtype.kind == "f" else v.astype(like)
                for v in (x, y))
        return np.asarray(fn(x, y))
    with np.errstate(all="ignore"):
        return np.asarray(fn(x.astype(F32), y.astype(F32)), dtype=F32)


def binary(op: k.AluOp, left: np.ndarray, right: np.ndarray | np.generic, swap: bool) -> np.ndarray:
    """`left op right` (swapped if asked), always of left's shape."""
    out = alu(op, right, left) if swap else alu(op, left, right)
    return np.broadcast_to(out, np.shape(left))


def identity_of(op: k.AluOp) -> float:
    ident = ALU[op][2]
    if ident is None:
        raise InterpError(f"{op.name} is not a reduction op")
    return float(ident)


def fold(op: k.AluOp, start: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """start op rows[:, 0] op rows[:, 1] ... (element by element, float32)."""
    acc = start.astype(F32)
    for i in range(rows.shape[1]):
        acc = alu(op, acc, rows[:, i])
    return acc


def row_fold(op: k.AluOp, start: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """fold(), with the row-sum shortcut for add (all accumulating reductions but a few)."""
    if op == A.add:
        with np.errstate(all="ignore"):
            return (start.astype(F32) + rows.astype(F32).sum(axis=1, dtype=F32)).astype(F32)
    return fold(op, start, rows)


# ---------------------------------------------------------------- activation functions

def _erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[np.float64])(x) if x.size else x


def _sig(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


ACT: dict[k.ActivationFunc, Callable[[np.ndarray], np.ndarray]] = {
    k.ActivationFunc.abs: np.abs,
    k.ActivationFunc.arctan: np.arctan,
    k.ActivationFunc.copy: lambda x: x,
    k.ActivationFunc.erf: _erf,
    k.ActivationFunc.erf_dx: lambda x: 2.0 / math.sqrt(math.pi) * np.exp(-x * x),
    k.ActivationFunc.exp: np.exp,
    k.ActivationFunc.gelu: lambda x: 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0))),
    k.ActivationFunc.gelu_apprx_tanh: lambda x: 0.5 * x * (
        1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3))),
    k.ActivationFunc.gelu_dx: lambda x: 0.5 * (1.0 + _erf(x / math.sqrt(2.0)))
    + x * np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi),
    k.ActivationFunc.log: np.log,
    k.ActivationFunc.mish: lambda x: x * np.tanh(np.logaddexp(0.0, x)),
    k.ActivationFunc.reciprocal: lambda x: 1.0 / x,
    k.ActivationFunc.relu: lambda x: np.where(np.isnan(x), x, np.where(x > 0, x, 0.0)),
    k.ActivationFunc.rsqrt: lambda x: 1.0 / np.sqrt(x),
    k.ActivationFunc.sigmoid: _sig,
    k.ActivationFunc.sign: np.sign,
    k.ActivationFunc.silu: lambda x: x * _sig(x),
    k.ActivationFunc.silu_dx: lambda x: _sig(x) * (1.0 + x * (1.0 - _sig(x))),
    k.ActivationFunc.sin: np.sin,
    k.ActivationFunc.softplus: lambda x: np.logaddexp(0.0, x),
    k.ActivationFunc.sqrt: np.sqrt,
    k.ActivationFunc.square: lambda x: x * x,
    k.ActivationFunc.tanh: np.tanh,
    k.ActivationFunc.gelu_apprx_sigmoid: lambda x: x * _sig(1.702 * x),
    k.ActivationFunc.gelu_apprx_sigmoid_dx: lambda x: _sig(1.702 * x) * (
        1.0 + 1.702 * x * (1.0 - _sig(1.702 * x))),
}


def activation(func: k.ActivationFunc, x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.asarray(ACT[func](x.astype(np.float64)), dtype=np.float64).astype(F32)


# ---------------------------------------------------------------- conversion on write

def to_dtype(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    values = np.asarray(values)
    if dtype.kind in "iu" and values.dtype.kind not in "iu":
        lo, hi = np.iinfo(dtype).min, np.iinfo(dtype).max
        v = np.nan_to_num(values.astype(np.float64), nan=0.0, posinf=hi, neginf=lo)
        return np.round(np.clip(v, lo, hi)).astype(dtype)
    with np.errstate(all="ignore"):
        return values.astype(dtype)


# ---------------------------------------------------------------- memory and accesses

class State:
    """Per-tensor buffers and the two engines' accumulator registers."""

    def __init__(self) -> None:
        self.buffers: dict[str, np.ndarray] = {}
        self.act = np.zeros(128, F32)
        self.dve = np.zeros(128, F32)

    def elements(self, tensor: k.TensorName) -> np.ndarray:
        """The tensor's buffer as [partitions, elements] of its dtype."""
        buf = self.buffers.get(tensor.name)
        if buf is None:
            addr = tensor.address
            buf = np.zeros((addr.par_size, addr.free_size), np.uint8)
            self.buffers[tensor.name] = buf
        dtype = np_dtype(tensor.dtype)
        count = buf.shape[1] // dtype.itemsize
        return buf[:, : count * dtype.itemsize].view(dtype)

    def index(self, access: k.Access) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray], tuple[int, ...]]:
        ap = k.to_pattern(access)
        elements = self.elements(ap.tensor)
        shape = (ap.par_num,) + tuple(p.num for p in ap.pattern)
        free = np.full(shape[1:], ap.free_offset, np.int64)
        for axis, pair in enumerate(ap.pattern):
            line = np.arange(pair.num, dtype=np.int64) * pair.step
            free = free + line.reshape([-1 if a == axis else 1 for a in range(len(shape) - 1)])
        parts = np.arange(ap.par_offset, ap.par_offset + ap.par_num, dtype=np.int64)
        if ap.par_num and (parts[0] < 0 or parts[-1] >= elements.shape[0]):
            raise InterpError(f"access to {ap.tensor.name!r} reaches partitions "
                              f"{parts[0]}..{parts[-1]}; it has {elements.shape[0]}")
        if free.size and (free.min() < 0 or free.max() >= elements.shape[1]):
            raise InterpError(f"access to {ap.tensor.name!r} reaches free elements "
                              f"{free.min()}..{free.max()}; it has {elements.shape[1]}")
        rows = parts.reshape((-1,) + (1,) * (len(shape) - 1))
        return elements, (rows, free[None, ...]), shape

    def read(self, access: k.Access) -> np.ndarray:
        elements, idx, shape = self.index(access)
        return np.broadcast_to(elements[idx], shape)

    def write(self, access: k.Access, values: np.ndarray) -> None:
        elements, idx, shape = self.index(access)
        values = np.asarray(values)
        if values.size != int(np.prod(shape)):
            raise InterpError(f"writes {values.shape} values to a {list(shape)} access of "
                              f"{k.access_tensor(access).name!r}")
        elements[idx] = to_dtype(values.reshape(shape), elements.dtype)

    def operand(self, operand: k.Operand, data: np.ndarray) -> np.ndarray | np.generic:
        """An immediate, or a [P,1] tile broadcast along data's free axes."""
        if isinstance(operand, k.Immediate):
            return F32(operand.value) if isinstance(operand.value, float) else np.int32(operand.value)
        tile = self.read(operand)
        if tile.size != data.shape[0]:
            raise InterpError(f"scalar operand {k.access_tensor(operand).name!r} is "
                              f"{list(tile.shape)}; expected [{data.shape[0]}, 1]")
        return tile.reshape((data.shape[0],) + (1,) * (data.ndim - 1))


def lanes(access: k.Access) -> slice:
    ap = k.to_pattern(access)
    return slice(ap.par_offset, ap.par_offset + ap.par_num)


def rows(values: np.ndarray) -> np.ndarray:
    return values.reshape(values.shape[0], -1)


def accumulate(regs: np.ndarray, lane: slice, cmd: k.AccumCmd, op: k.AluOp, new_rows: np.ndarray,
               load: np.ndarray | np.generic | None = None) -> None:
    count = new_rows.shape[0]
    if cmd == Cmd.Idle:
        return
    if ALU[op][0]:
        raise InterpError(f"accumulator registers are float32: {op.name} cannot accumulate")
    if cmd == Cmd.Zero:
        regs[lane] = identity_of(op)
    elif cmd == Cmd.ZeroAccumulate:
        regs[lane] = row_fold(op, np.full(count, identity_of(op), F32), new_rows)
    elif cmd == Cmd.LoadAccumulate:
        if load is None:
            raise InterpError("LoadAccumulate needs a load value")
        start = np.broadcast_to(np.asarray(load, F32).reshape(-1), (count,))
        regs[lane] = row_fold(op, start, new_rows)
    else:
        regs[lane] = row_fold(op, regs[lane], new_rows)


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
    if op.accumulator_cmd == Cmd.LoadAccumulate:
        raise InterpError("activation cannot LoadAccumulate")
    if op.reduce_op is not None and op.reduce_op != A.add:
        raise InterpError(f"activation reduces with add only, not {op.reduce_op.name}")
    lane = lanes(op.dst)
    accumulate(s.act, lane, op.accumulator_cmd, A.add, rows(out))
    if op.reduce_res is not None:
        s.write(op.reduce_res, s.act[lane].reshape(-1, 1))


def run_activate2(s: State, op: k.Activate2) -> None:
    src = s.read(op.src)
    val = binary(op.op0, src, s.operand(op.imm0, src), op.reverse0)
    val = binary(op.op1, val, s.operand(op.imm1, src), op.reverse1)
    out = activation(op.activation_func, val.astype(F32))
    s.write(op.dst, out)
    lane = lanes(op.dst)
    accumulate(s.act, lane, op.reduce_cmd, op.reduce_op, rows(out))
    if op.reduce_res is not None:
        s.write(op.reduce_res, s.act[lane].reshape(-1, 1))


def run_exponential(s: State, op: k.Exponential) -> None:
    src = s.read(op.src)
    with np.errstate(all="ignore"):
        out = np.exp(src.astype(F32) - np.asarray(s.operand(op.max_value, src), F32))
    s.write(op.dst, out)
    lane = lanes(op.dst)
    accumulate(s.dve, lane, op.reducecmd, A.add, rows(out), s.operand(op.reduce_init, src))
    if op.reduce_res is not None:
        s.write(op.reduce_res, s.dve[lane].reshape(-1, 1))


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
    accumulate(s.dve, lane, Cmd.ZeroAccumulate, op.reduce_op, rows(out))
    s.write(op.reduce_res, s.dve[lane].reshape(-1, 1))


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
    if op.reduce_cmd in (Cmd.Zero, Cmd.ZeroAccumulate):
        reg = np.full(t.shape[0], identity_of(op.op1), F32)
    elif op.reduce_cmd == Cmd.LoadAccumulate:
        if op.imm1 is None:
            raise InterpError("LoadAccumulate needs imm1")
        reg = np.broadcast_to(np.asarray(s.operand(op.imm1, src), F32).reshape(-1), (t.shape[0],)).copy()
    else:
        identity_of(op.op1)
        reg = s.dve[lane].copy()
    out = np.empty(t.shape, F32)
    for i in range(t.shape[1]):
        reg = binary(op.op1, t[:, i], reg, r1)
        out[:, i] = reg
    s.dve[lane] = reg
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
        prev = s.dve[lane].copy()
    else:
        prev = np.broadcast_to(np.asarray(s.operand(op.imm0, a), F32).reshape(-1), (a.shape[0],)).copy()
    ra, rb = rows(a), rows(b)
    out = np.empty(ra.shape, F32)
    for i in range(ra.shape[1]):
        prev = binary(op.op1, binary(op.op0, ra[:, i], prev, r0), rb[:, i], r1).astype(F32)
        out[:, i] = prev
    s.dve[lane] = prev
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


RUNNERS: dict[type, Callable[[State, object], None]] = {
    k.NcActivate: run_activate, k.ActivationReduce: run_activate, k.Activate2: run_activate2,
    k.Exponential: run_exponential, k.Reciprocal: run_reciprocal,
    k.TensorScalar: run_tensor_scalar, k.TensorScalarReduce: run_tensor_scalar_reduce,
    k.TensorScalarCumulative: run_cumulative, k.NcScalarTensorTensor: run_scalar_tensor_tensor,
    k.TensorTensor: run_tensor_tensor, k.TensorTensorScan: run_scan,
    k.TensorReduce: run_tensor_reduce, k.TensorPartitionReduce: run_partition_reduce,
    k.NcDmaCopy: run_dma_copy, k.NcCopy: run_copy, k.MemSet: run_memset, k.Iota: run_iota,
}  # type: ignore[dict-item]


def interpret_kernel(kernel: k.Kernel, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Run `kernel` on `inputs` (by input name); its outputs by name."""
    s = State()
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
            raise InterpError(f"body[{number}]: operator {type(stmt).__name__} is not interpreted")
        try:
            runner(s, stmt)
        except InterpError as err:
            raise InterpError(f"body[{number}] ({type(stmt).__name__}): {err}") from None
        except (KeyError, IndexError, TypeError) as err:
            raise InterpError(f"body[{number}] ({type(stmt).__name__}): malformed operator: {err}") from None
    result: dict[str, np.ndarray] = {}
    for tensor in kernel.outputs:
        shape = (tensor.shape.par_dim,) + tuple(tensor.shape.free_dims)
        result[tensor.name] = s.read(tensor).reshape(shape).copy()
    return result
