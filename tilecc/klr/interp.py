"""Reference interpreter of KLR kernels, straight from the NKI instruction semantics.

Contract: `interpret_kernel(kernel, inputs)` runs `kernel.body` in order on numpy arrays
and returns every kernel output (by name, in its shape and dtype). It is written
independently of the codegen and the BIR simulator (it imports neither) so that the two
can be held against each other; its op tables are keyed by KLR's own enums.

Model (the semantics listed in klr/ast.py and reference/klr-bir.md):
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

import sys
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from tilecc.definedness import UNINIT_POLICIES, Origin, UndefinedRead, derive, first_index
from tilecc import counter_rng
from tilecc.errors import InterpError
from tilecc.klr import ast as k
from tilecc.klr.interp_tensor_engine import TENSOR_ENGINE_RUNNERS
from tilecc.klr.interp_alu import (ALU, activation, alu, binary, fold, identity_of, np_dtype,
                                   row_fold, to_dtype)
from tilecc.source_pos import describe

F32 = np.float32
A = k.AluOp
R = k.TensorScalarReverseOps
Cmd = k.AccumCmd

# ---------------------------------------------------------------- memory and accesses

class State:
    """Per-tensor buffers and the two engines' accumulator registers."""

    def __init__(self, uninit: str = "error") -> None:
        self.buffers: dict[str, np.ndarray] = {}
        self.written: dict[str, np.ndarray] = {}  # tensor -> element defined
        self.act = np.zeros(128, F32)
        self.dve = np.zeros(128, F32)
        self.uninit = uninit
        self.where = "an input"      # the statement running (describe_stmt)
        self.reads: list[UndefinedRead] = []   # its reads that met undefined elements
        self.origins: dict[str, Origin] = {}   # tensor -> origin of the undefined data in it
        self.registers = {id(self.act): np.zeros(128, bool), id(self.dve): np.zeros(128, bool)}
        self.register_origins: dict[int, Origin] = {}
        self.reported: set[str] = set()
        self.rng_state = counter_rng.power_on()  # by engine name (tilecc/counter_rng.py)

    def begin(self, where: str) -> None:
        """A new statement: its reads are recorded afresh."""
        self.where, self.reads = where, []

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

    def written_mask(self, tensor: k.TensorName, elements: np.ndarray) -> np.ndarray:
        """Which elements of a tensor are defined."""
        mask = self.written.get(tensor.name)
        if mask is None:
            mask = self.written[tensor.name] = np.zeros(elements.shape, bool)
        return mask

    def read(self, access: k.Access) -> np.ndarray:
        elements, idx, shape = self.index(access)
        tensor = k.access_tensor(access)
        defined = np.broadcast_to(self.written_mask(tensor, elements)[idx], shape)
        if not defined.all():
            undefined = ~defined
            origin = self.origins.get(tensor.name) or Origin(
                self.where, tensor.name, self.element(access, first_index(undefined)))
            self.reads.append(UndefinedRead(undefined, origin))
        return np.broadcast_to(elements[idx], shape)

    def element(self, access: k.Access, index: tuple[int, ...]) -> tuple[int, int]:
        """[partition, free element] of element `index` of `access` in its tensor."""
        _, (rows, free), shape = self.index(access)
        return (int(np.broadcast_to(rows, shape)[index]), int(np.broadcast_to(free, shape)[index]))

    def write(self, access: k.Access, values: np.ndarray) -> None:
        elements, idx, shape = self.index(access)
        values = np.asarray(values)
        if values.size != int(np.prod(shape)):
            raise InterpError(f"writes {values.shape} values to a {list(shape)} access of "
                              f"{k.access_tensor(access).name!r}")
        elements[idx] = to_dtype(values.reshape(shape), elements.dtype)
        tensor = k.access_tensor(access)
        found = derive(self.reads, shape)
        self.written_mask(tensor, elements)[idx] = True if found is None else ~found[0]
        if found is None:
            return
        self.origins[tensor.name] = found[1]
        if tensor.address.memory in k.HBM_MEMORIES:
            element = self.element(access, first_index(found[0]))
            self.report(f"undefined data reaches HBM tensor {tensor.name!r} element "
                        f"{list(element)}; {found[1].text()}")

    def read_registers(self, regs: np.ndarray, lane: slice) -> np.ndarray:
        """Accumulator registers `regs[lane]` (act / dve), as a recorded read."""
        flags = self.registers[id(regs)][lane]
        if flags.any():
            origin = self.register_origins.get(id(regs)) or Origin("an accumulator register",
                                                                   "accumulator", (0,))
            self.reads.append(UndefinedRead(flags.reshape(-1, 1), origin))
        return regs[lane]

    def write_registers(self, regs: np.ndarray, lane: slice, values: np.ndarray | np.generic) -> None:
        """Set `regs[lane]`; their shadow follows the statement's reads so far."""
        regs[lane] = values
        count = len(range(*lane.indices(128)))
        found = derive(self.reads, (count, 1))
        self.registers[id(regs)][lane] = False if found is None else found[0].reshape(-1)
        if found is not None:
            self.register_origins[id(regs)] = found[1]

    def report(self, message: str) -> None:
        """Undefined data reached a sink: raise, warn once, or ignore (the `uninit` policy)."""
        if self.uninit not in UNINIT_POLICIES:
            raise InterpError(f"uninit policy {self.uninit!r}: expected one of "
                              f"{', '.join(UNINIT_POLICIES)}")
        if self.uninit == "error":
            raise InterpError(message)
        if self.uninit == "warn" and message not in self.reported:
            self.reported.add(message)
            print(f"warning: {self.where}: {message}", file=sys.stderr)

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


def accumulate(s: State, regs: np.ndarray, lane: slice, cmd: k.AccumCmd, op: k.AluOp,
               new_rows: np.ndarray, load: np.ndarray | np.generic | None = None) -> None:
    count = new_rows.shape[0]
    if cmd == Cmd.Idle:
        return
    if ALU[op][0]:
        raise InterpError(f"accumulator registers are float32: {op.name} cannot accumulate")
    if cmd == Cmd.Zero:
        s.write_registers(regs, lane, F32(identity_of(op)))
    elif cmd == Cmd.ZeroAccumulate:
        s.write_registers(regs, lane, row_fold(op, np.full(count, identity_of(op), F32), new_rows))
    elif cmd == Cmd.LoadAccumulate:
        if load is None:
            raise InterpError("LoadAccumulate needs a load value")
        start = np.broadcast_to(np.asarray(load, F32).reshape(-1), (count,))
        s.write_registers(regs, lane, row_fold(op, start, new_rows))
    else:
        s.write_registers(regs, lane, row_fold(op, s.read_registers(regs, lane), new_rows))


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
