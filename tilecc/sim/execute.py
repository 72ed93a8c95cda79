"""Execute a BIR Program on the simulated machine: the opcode -> executor table and the driver.

Contract: `simulate(program, inputs)` places every MemoryLocation (side by side, or by
lifetime when they do not all fit: sim/placement.py), gives each kernel input (by
IOTensor name; shape and dtype must match) to its HBM tensor (a C-contiguous array that
fills it is read in place, and copied only if an instruction writes it: sim/memory.py;
anything else is copied in), runs the instructions in order and returns every kernel
output as a new numpy array of its IOTensor shape and dtype (bf16 / fp8 as ml_dtypes
arrays). A tensor that is both input and output keeps the values the kernel does not
write; the caller's arrays are never written. Any fault is a SimError whose message
starts with the kernel line and NKI call the instruction comes from (when it carries a
`pos`), then the instruction's name (`describe_inst`).

Semantics (operand order and fields: bir/inst.py; meaning: reference/klr-bir.md "NKI
instruction semantics"): `EXECUTORS` maps each instruction class to one executor, which
reads its operands through access-pattern views, computes in float32 by the ALU table
(sim/alu.py) and the activation table (sim/activation.py), and converts the result to the
destination AP's dtype (sim/dtypes.py); operand conventions and accumulate commands are
in sim/operands.py. The executors live by family: sim/exec_activation.py,
exec_tensor_alu.py, exec_movement.py, exec_tensor_engine.py, exec_vector.py and
exec_random.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import numpy as np

from tilecc.blas_threads import one_blas_thread
from tilecc.bir.enums import MemoryKind
from tilecc.bir.inst import (Inst, InstActivation, InstDMACopy, InstDveReadAccumulator,
                             InstExponential, InstIota, InstMemset,
                             InstReadActivationAccumulator, InstReciprocal, InstTensorCopy,
                             InstTensorReduce, InstTensorScalarCache, InstTensorScalarPtr,
                             InstTensorTensor, MemoryLocation, Program)
from tilecc.errors import SimError, SimIndexError
from tilecc.sim.inst_label import describe_inst
from tilecc.sim.dtypes import numpy_dtype
from tilecc.sim.exec_activation import (exec_activation, exec_dve_read_accumulator,
                                        exec_exponential, exec_read_act_accumulator,
                                        exec_reciprocal)
from tilecc.sim.exec_movement import exec_dma_copy, exec_iota, exec_memset, exec_tensor_copy
from tilecc.sim.exec_tensor_alu import (exec_tensor_reduce, exec_tensor_scalar_cache,
                                        exec_tensor_scalar_ptr, exec_tensor_tensor)
from tilecc.bir.inst_tensor_engine import InstMatMult
from tilecc.sim.exec_tensor_engine import TENSOR_ENGINE_EXECUTORS
from tilecc.sim.exec_random import EXECUTORS as RANDOM_EXECUTORS
from tilecc.sim.exec_vector import EXECUTORS as VECTOR_EXECUTORS
from tilecc.sim.machine import Machine
from tilecc.sim.placement import plan_columns


# each executor takes an instance of its key class: a relation the value type cannot state
EXECUTORS: dict[type[Inst], Callable[[Machine, Any], None]] = {
    InstActivation: exec_activation,
    InstReadActivationAccumulator: exec_read_act_accumulator,
    InstDveReadAccumulator: exec_dve_read_accumulator,
    InstReciprocal: exec_reciprocal,
    InstExponential: exec_exponential,
    InstTensorReduce: exec_tensor_reduce,
    InstTensorScalarPtr: exec_tensor_scalar_ptr,
    InstTensorScalarCache: exec_tensor_scalar_cache,
    InstTensorTensor: exec_tensor_tensor,
    InstMemset: exec_memset,
    InstDMACopy: exec_dma_copy,
    InstTensorCopy: exec_tensor_copy,
    InstIota: exec_iota,
    **TENSOR_ENGINE_EXECUTORS,
}
EXECUTORS.update(VECTOR_EXECUTORS)
EXECUTORS.update(RANDOM_EXECUTORS)


# ---------------------------------------------------------------- whole programs

def run_instructions(m: Machine, program: Program, fresh: Mapping[int, list[str]]) -> None:
    """Run the instructions in order (`fresh`: locations to mark undefined before an index,
    sim/placement.py). One loop, no call of its own per instruction; a fault is one
    SimError starting with the kernel line and the instruction (describe_inst), or
    without a kernel line with the instruction's index and name in the program."""
    index = 0
    executors, begin, finish = EXECUTORS, m.begin, m.finish   # looked up once, not per instruction
    try:
        for index, inst in enumerate(program.instructions):
            if fresh and (names := fresh.get(index)):
                for name in names:
                    m.forget(name)
            if (fn := executors.get(type(inst))) is None:
                raise SimError(f"opcode {type(inst).__name__} is not implemented")
            begin(inst)
            fn(m, inst)
            finish()
    except (SimError, OverflowError, IndexError, TypeError, AttributeError) as fault:
        inst = program.instructions[index]
        err = described(inst, fault) if not isinstance(fault, OverflowError) else fault
        if isinstance(err, SimError) and inst.pos is not None:
            raise err from None   # located at the kernel line already (describe_inst)
        # no kernel line: name the instruction as the BIR file holds it
        raise SimError(f"instructions[{index}] ({inst.name}): {err}") from None
    except ValueError as err:   # numpy refusing operand shapes that do not fit one another
        inst = program.instructions[index]
        raise SimError(f"instructions[{index}] ({inst.name}): its operands' shapes do not fit "
                       f"one another: {str(err).splitlines()[0].strip()}") from None


def described(inst: Inst, err: SimError | IndexError | TypeError | AttributeError) -> SimError:
    """A fault of `inst` as the SimError naming it (describe_inst)."""
    if isinstance(err, SimIndexError):
        return SimIndexError(f"{describe_inst(inst)}: {err}", err.element, err.size)
    if isinstance(err, SimError):
        return SimError(f"{describe_inst(inst)}: {err}")
    return SimError(f"{describe_inst(inst)}: malformed operands: {err}")


_DEFAULT: list[Machine] = []


def default_machine() -> Machine:
    """One Machine per process, reused (its 52 MB of SBUF / PSUM state is allocated once)."""
    if not _DEFAULT:
        _DEFAULT.append(Machine())
    return _DEFAULT[0]


def simulate(program: Program, inputs: Mapping[str, np.ndarray],
             machine: Machine | None = None, uninit: str = "error") -> dict[str, np.ndarray]:
    """Run `program` on `inputs` (by kernel input name); outputs by kernel output name.
    `uninit` ("error" | "warn" | "ignore") is what undefined data reaching HBM does
    (tilecc/definedness.py)."""
    m = machine if machine is not None else default_machine()
    m.uninit = uninit
    m.reset()
    plan = plan_columns(program)
    shapes = {t.name: t.shape for t in program.inputs}
    for loc in program.memory_locations:
        # an input that fills its HBM tensor overwrites every byte and its shadow below, or
        # is read where it is (`lendable`)
        fill = loc.name in shapes and fills(loc, shapes[loc.name])
        m.place(loc, None if plan is None else plan.base.get(loc.name), clear=not fill,
                borrow=lendable(inputs.get(loc.name), loc, shapes[loc.name]) if fill else None)
    m.keep_views()
    known = {t.name for t in program.inputs}
    if unknown := sorted(set(inputs) - known):
        raise SimError(f"unknown input {unknown[0]!r}; the kernel's inputs are "
                       f"{sorted(known)}")
    for tensor in program.inputs:
        if tensor.name not in inputs:
            raise SimError(f"missing input {tensor.name!r}")
        value = np.asarray(inputs[tensor.name])
        dtype = numpy_dtype(tensor.dtype)
        if value.shape != tuple(tensor.shape) or value.dtype != dtype:
            raise SimError(f"input {tensor.name!r} is {value.dtype}{list(value.shape)}; "
                           f"the kernel expects {dtype}{list(tensor.shape)}")
        if m.placement(tensor.name).borrowed is not None:
            continue
        hbm = hbm_elements(m, tensor.name, value.size)
        hbm[...] = value.reshape(hbm.shape)
        hbm_shadow(m, tensor.name, hbm.shape[1])[...] = 0xFF   # inputs are defined
    # inf / NaN results are the machine's semantics; one BLAS thread: tilecc/blas_threads.py
    with np.errstate(all="ignore"), blas_limit(program):
        run_instructions(m, program, plan.fresh if plan is not None else {})
    outputs: dict[str, np.ndarray] = {}
    for tensor in program.outputs:
        size = int(np.prod(tensor.shape))
        values = hbm_elements(m, tensor.name, size)
        outputs[tensor.name] = values.copy().reshape(tensor.shape)
    return outputs


def lendable(value: object, loc: MemoryLocation, shape: Sequence[int]) -> np.ndarray | None:
    """`value` when HBM tensor `loc` can read it in place (Machine.place `borrow`): a
    C-contiguous numpy array of the kernel argument's `shape` and dtype; anything else is
    copied in (and checked there)."""
    if (type(value) is np.ndarray and value.flags.c_contiguous
            and value.shape == tuple(shape) and value.dtype == numpy_dtype(loc.dtype)):
        return value
    return None


def blas_limit(program: Program) -> AbstractContextManager[object]:
    """One BLAS thread for a program that multiplies matrices (only MatMult calls BLAS);
    none otherwise: finding the loaded BLAS libraries costs ~0.3 ms, more than a hundred
    small instructions."""
    if InstMatMult in set(map(type, program.instructions)):
        return one_blas_thread()
    return nullcontext()


def fills(loc: MemoryLocation, shape: Sequence[int]) -> bool:
    """A kernel argument of `shape` covers every byte of HBM tensor `loc` (`hbm_elements`)."""
    itemsize = numpy_dtype(loc.dtype).itemsize
    return (loc.kind == MemoryKind.HBM and loc.bytes_per_partition % itemsize == 0
            and math.prod(shape) == loc.partitions * (loc.bytes_per_partition // itemsize))


def hbm_shadow(m: Machine, name: str, per: int) -> np.ndarray:
    """The shadow bytes of the first `per` elements of each partition of HBM tensor `name`."""
    pl = m.placement(name)
    return pl.written[:, : per * pl.itemsize]


def hbm_elements(m: Machine, name: str, size: int) -> np.ndarray:
    """The first size/partitions elements of each partition of HBM tensor `name` (its stale
    bytes cleared: Machine.settle)."""
    pl = m.placement(name)
    if pl.loc.kind != MemoryKind.HBM:
        raise SimError(f"kernel argument {name!r} is not an HBM tensor")
    parts = pl.loc.partitions
    per = size // parts if parts else 0
    if per * parts != size or per > pl.row:
        raise SimError(f"kernel argument {name!r} of {size} elements does not fit its HBM "
                       f"tensor ({parts} x {pl.row})")
    m.settle(name)
    dtype = numpy_dtype(pl.loc.dtype)
    return np.ndarray((parts, per), dtype, buffer=pl.data, strides=(pl.data.shape[1], pl.itemsize))
