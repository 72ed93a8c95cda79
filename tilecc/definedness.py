"""Definedness: which simulated bits hold values something wrote (valgrind memcheck's rule).

This module is the rule both executable levels share (pure numpy): the BIR simulator
(sim/machine.py, sim/operands.py) and the KLR interpreter (klr/interp.py `State`) apply it
to their own memories, so they agree on what is defined and report the same sinks.

Contract: the simulator keeps a shadow of every byte of SBUF, PSUM and HBM (0xff = defined)
and of the accumulator registers (one flag per lane). Kernel inputs are defined; every other
byte starts undefined. Computing on undefined data is allowed, as memcheck allows it; the
result's elements carry the undefinedness of what they were computed from. Undefined data
reaching a sink is reported by the `uninit` policy (`error`, the default: a SimError;
`warn`: one line on stderr per sink and origin; `ignore`): a write into HBM (a DMA to HBM,
so a kernel output too) and values an executor uses as an index or a branch condition
(`operands.read_index`). Elements of an HBM output that nothing writes are not data that
reached it: they keep the zeros HBM tensors start with, as before. The report names the sink's
element and the origin: the first instruction (kernel line and NKI call) that read the
undefined elements from memory nothing had written, and that element.

The default rule (`spread`), applied by the operand layer (sim/machine.py, sim/operands.py;
the KLR interpreter's State.read / State.write) to every instruction, so an executor that reads and writes through those helpers gets
definedness without code of its own: an element of an output is undefined iff an element
the instruction reads for it is undefined, where "for it" is read from the shapes:
- a read with the output's element count maps element to element (in access order: an
  elementwise op, a copy, a DMA between layouts of one size);
- a read of the output's partitions with one element per partition (a [P, 1] scalar
  operand, an accumulator register) reaches the whole of its partition's row;
- a read of the output's partitions with more elements per partition is a reduction of each
  row: its trailing n / k elements fold into each of the output's k (k divides n), else the
  whole row folds into each output element;
- a one-partition output of a read with as many elements per partition is a partition
  reduction (each column folds);
- anything else: the whole output is undefined if any element read is.
Register writes take the reads made so far by the instruction. An executor whose outputs
depend on its reads differently (a transpose, a gather) declares its own rule by passing
`undefined=` (a mask of the output's shape, from `operands.read_undefined`) to
`operands.write`. The rule over-approximates: it never calls undefined data defined.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

UNINIT_POLICIES = ("error", "warn", "ignore")


@dataclass(frozen=True, slots=True)
class Origin:
    """Where undefined data was first read: the reading instruction, the location and the
    element ([partition, free element] of that location) nothing had written."""
    where: str
    memref: str
    element: tuple[int, ...]

    def text(self) -> str:
        return (f"first read uninitialised at {self.where}: {self.memref!r} element "
                f"{list(self.element)} was never written")


@dataclass(frozen=True, slots=True)
class UndefinedRead:
    """One read of an instruction that met undefined elements: their mask, in the access's
    shape, and where the undefined data came from."""
    undefined: np.ndarray
    origin: Origin


def spread(undefined: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The default rule: the output elements of `shape` that one read's undefined mask
    reaches (module docstring)."""
    size = int(np.prod(shape))
    if undefined.size == size:
        return undefined.reshape(shape)
    if undefined.ndim and shape and undefined.shape[0] == shape[0]:
        rows = undefined.reshape(shape[0], -1)
        n, k = rows.shape[1], size // shape[0] if shape[0] else 0
        if n == 1:
            return np.broadcast_to(rows, (shape[0], k)).reshape(shape)
        if k and n % k == 0:
            return rows.reshape(shape[0], k, n // k).any(axis=2).reshape(shape)
        return np.broadcast_to(rows.any(axis=1, keepdims=True), (shape[0], k)).reshape(shape)
    if shape and shape[0] == 1 and undefined.ndim and undefined.size // max(undefined.shape[0], 1) == size:
        return undefined.reshape(undefined.shape[0], -1).any(axis=0).reshape(shape)
    return np.full(shape, bool(undefined.any()))


def derive(reads: list[UndefinedRead], shape: tuple[int, ...]) -> tuple[np.ndarray, Origin] | None:
    """The undefined mask of an output of `shape` under the default rule, with the origin of
    the first read it comes from; None when every element is defined."""
    mask: np.ndarray | None = None
    origin: Origin | None = None
    for read in reads:
        reached = spread(read.undefined, shape)
        if not reached.any():
            continue
        mask = reached.copy() if mask is None else mask | reached
        origin = origin or read.origin
    if mask is None or origin is None:
        return None
    return mask, origin


def first_index(mask: np.ndarray) -> tuple[int, ...]:
    """The first True element of `mask`, in C order."""
    return tuple(int(i) for i in np.unravel_index(int(np.argmax(mask.reshape(-1))), mask.shape))
