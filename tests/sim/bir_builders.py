"""Small builders for hand-written BIR programs in the simulator tests."""

from __future__ import annotations

import numpy as np

from tilecc.bir.enums import BirDtype, EngineType, MemoryKind
from tilecc.bir.inst import (AccessPattern, Immediate, Inst, InstDMACopy, IOTensor,
                             MemoryLocation, Program)
from tilecc.sim.dtypes import numpy_dtype
from tilecc.sim.execute import simulate

F32 = BirDtype.float32


class ProgramBuilder:
    """Collects locations, kernel arguments and instructions of one test program."""

    def __init__(self) -> None:
        self.locs: dict[str, MemoryLocation] = {}
        self.inputs: list[IOTensor] = []
        self.outputs: list[IOTensor] = []
        self.insts: list[Inst] = []

    def loc(self, name: str, kind: MemoryKind, shape: tuple[int, ...],
            dtype: BirDtype = F32) -> str:
        size = numpy_dtype(dtype).itemsize
        free = int(np.prod(shape[1:])) if len(shape) > 1 else 1
        self.locs[name] = MemoryLocation(name, kind, dtype, shape[0], free * size)
        return name

    def tile(self, name: str, shape: tuple[int, ...], dtype: BirDtype = F32) -> str:
        return self.loc(name, MemoryKind.SB, shape, dtype)

    def arg_in(self, name: str, shape: tuple[int, ...], dtype: BirDtype = F32) -> str:
        self.loc(name, MemoryKind.HBM, shape, dtype)
        self.inputs.append(IOTensor(name, dtype, shape))
        return name

    def arg_out(self, name: str, shape: tuple[int, ...], dtype: BirDtype = F32) -> str:
        if name not in self.locs:
            self.loc(name, MemoryKind.HBM, shape, dtype)
        self.outputs.append(IOTensor(name, dtype, shape))
        return name

    def ap(self, name: str, pairs: list[tuple[int, int]] | None = None, offset: int = 0,
           partitions: int | None = None) -> AccessPattern:
        """Whole-location access by default: [row, P] then [1, row]."""
        loc = self.locs[name]
        row = loc.bytes_per_partition // numpy_dtype(loc.dtype).itemsize
        parts = loc.partitions if partitions is None else partitions
        free = [(1, row)] if pairs is None else pairs
        return AccessPattern(name, loc.dtype, offset, ((row, parts), *free))

    def add(self, inst: Inst) -> Inst:
        self.insts.append(inst)
        return inst

    def load(self, dst: str, src: str) -> None:
        self.add(InstDMACopy(f"load-{dst}", EngineType.DMA, [self.ap(src)], [self.ap(dst)]))

    def store(self, dst: str, src: str) -> None:
        self.add(InstDMACopy(f"store-{dst}", EngineType.DMA, [self.ap(src)], [self.ap(dst)]))

    def program(self) -> Program:
        return Program("test", list(self.locs.values()), self.inputs, self.outputs, self.insts)

    def run(self, **inputs: np.ndarray) -> dict[str, np.ndarray]:
        return simulate(self.program(), inputs)


def imm(value: float | int) -> Immediate:
    return Immediate(BirDtype.float32 if isinstance(value, float) else BirDtype.int32, value)
