"""The nki.isa enums (engine, reduce_cmd, dge_mode, oob_mode) and their KLR counterparts.

Contract: `klr_engine` / `klr_accum` map a kernel's enum argument to the KLR Engine /
AccumCmd member after checking it is one the instruction accepts (KernelError otherwise).
Crosswalk (NKI docs -> klr-bir.md): engine tensor/vector/scalar/gpsimd/dma/sync/unknown ->
pe/dve/act/pool/dma/sp/unassigned; reduce_cmd idle/reset/reduce/reset_reduce/load_reduce ->
Idle/Zero/Accumulate/ZeroAccumulate/LoadAccumulate.
"""

from __future__ import annotations

from enum import Enum

from tilecc.klr import ast
from tilecc.nki.errors import kernel_error


class engine(Enum):  # noqa: N801 (NKI's names)
    """The engine an instruction runs on (its value is the KLR Engine name)."""

    tensor = "pe"
    vector = "dve"
    scalar = "act"
    gpsimd = "pool"
    dma = "dma"
    sync = "sp"
    unknown = "unassigned"


class reduce_cmd(Enum):  # noqa: N801
    """The accumulator command of a reducing instruction (KLR AccumCmd)."""

    idle = "Idle"
    reset = "Zero"
    reduce = "Accumulate"
    reset_reduce = "ZeroAccumulate"
    load_reduce = "LoadAccumulate"


class dge_mode(Enum):  # noqa: N801
    """How a DMA's descriptors are generated (software / hardware DGE); no effect on values."""

    unknown = 0
    swdge = 1
    hwdge = 2
    none = 3


class oob_mode(Enum):  # noqa: N801
    """What an out-of-bounds indirect DMA index does (error or skip)."""

    error = 0
    skip = 1


class nc_version(Enum):  # noqa: N801
    """NeuronCore generation (nki.isa.nc_version: gen2 Trn1 / Inf2, gen3 Trn2, gen4 Trn3)."""

    gen2 = 2
    gen3 = 3
    gen4 = 4


def klr_engine(fn: str, value: object, allowed: tuple[engine, ...]) -> ast.Engine:
    if not isinstance(value, engine) or value not in allowed:
        names = ", ".join(f"nisa.engine.{e.name}" for e in allowed)
        raise kernel_error(f"nisa.{fn}: engine must be one of {names}, got {value!r}")
    return ast.Engine[value.value]


def klr_accum(fn: str, value: object, allowed: tuple[reduce_cmd, ...]) -> ast.AccumCmd:
    if not isinstance(value, reduce_cmd) or value not in allowed:
        names = ", ".join(f"nisa.reduce_cmd.{c.name}" for c in allowed)
        raise kernel_error(f"nisa.{fn}: reduce_cmd must be one of {names}, got {value!r}")
    return ast.AccumCmd[value.value]
