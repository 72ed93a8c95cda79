"""The KLR reference interpreter's memory: per-tensor byte buffers with a definedness
shadow, the two engines' accumulator registers, and the AccumCmd rule that folds into them.

Contract (the model of tilecc/klr/interp.py, which documents it whole): every tensor name
owns a zero-filled buffer of its Address (par_size x free_size bytes) and a shadow of its
elements (tilecc/definedness.py); `State.read` / `State.write` gather and scatter an access's
elements by index arrays (`klr.ast.to_pattern`), `read_registers` / `write_registers` carry
definedness through the float32 registers, and `accumulate` applies an AccumCmd (Idle, Zero,
ZeroAccumulate, LoadAccumulate, Accumulate) to one engine's registers. The operator runners
(interp.py, interp_vector.py, interp_random.py, interp_tensor_engine.py) touch memory only
through these, so the shadow applies to every one of them.
"""

from __future__ import annotations

import sys

import numpy as np

from tilecc import counter_rng
from tilecc.definedness import UNINIT_POLICIES, Origin, UndefinedRead, derive, first_index
from tilecc.errors import InterpError
from tilecc.klr import ast as k
from tilecc.klr.interp_alu import ALU, identity_of, np_dtype, row_fold, to_dtype

F32 = np.float32
Cmd = k.AccumCmd


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
