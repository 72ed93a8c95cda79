"""Estimated engine cycles of the Vector / GpSimd-family and random-number instructions.

Contract: `COSTS[cls](inst)` is the estimated number of cycles of `inst` on its engine,
from the "Estimated instruction cost" formulas of the NKI ISA reference pages
(https://awsdocs-neuron.readthedocs-hosted.com/en/v2.26.1/nki/api/generated/nki.isa.bn_stats.html
and the sibling pages of each instruction), with N the elements per partition of the
operand the page names, MIN_II = 64 (the Vector Engine's minimum initiation interval) and
GPSIMD_START = 150 (GpSimd's startup overhead, "roughly" both, as the pages say):
- bn_stats max(MIN_II, N); bn_aggr max(MIN_II, 13 * N / 3); range_select, dropout,
  nc_stream_shuffle max(MIN_II, N); max8 and nc_find_index8 N; nc_match_replace8
  min(MIN_II, N) (the page's formula as written); tensor_copy_predicated max(MIN_II, 2N),
  the page's row for SBUF operands (its max(MIN_II, N) row for a PSUM operand needs the
  memories, which an instruction does not carry);
  affine_select GPSIMD_START + N; local_gather GPSIMD_START + V * E / C with
  C = ((28 + 4E) / (4E)) / min(4 / dtype size, E).
Instructions whose page gives no formula (select_reduce, sequence_bounds, nc_n_gather,
nonzero_with_count, rng, rand2, the state instructions, device_print) are estimated as
streaming one element per cycle: max(MIN_II, N) on the Vector Engine, GPSIMD_START + N
on GpSimd; those are tilecc's estimates, not published ones. All values are estimates.
"""

from __future__ import annotations

from collections.abc import Callable

from tilecc.bir import inst_random as r
from tilecc.bir import inst_vector as v
from tilecc.bir.enums import BIR_DTYPE_SIZE, EngineType
from tilecc.bir.inst import AccessPattern, Inst

MIN_II = 64.0
GPSIMD_START = 150.0


def per_partition(arg: object) -> float:
    """Elements per partition of an access (0 for an immediate)."""
    if not isinstance(arg, AccessPattern):
        return 0.0
    count = 1
    for _, num in arg.ap[1:]:
        count *= num
    return float(count)


def _first_in(inst: Inst) -> float:
    return per_partition(inst.ins[0]) if inst.ins else per_partition(inst.outs[0])


def _streaming(inst: Inst) -> float:
    n = _first_in(inst)
    return GPSIMD_START + n if inst.engine == EngineType.Pool else max(MIN_II, n)


def _copy_predicated(inst: Inst) -> float:
    return max(MIN_II, 2 * _first_in(inst))


def _local_gather(inst: Inst) -> float:
    assert isinstance(inst, v.InstLocalGather)
    e = float(inst.num_elem_per_idx)
    src = inst.ins[0]
    size = BIR_DTYPE_SIZE[src.dtype] if isinstance(src, AccessPattern) else 4
    c = ((28 + 4 * e) / (4 * e)) / min(4 / size, e)
    valid = float(inst.num_valid_indices) or 16 * per_partition(inst.ins[1])
    return GPSIMD_START + valid * e / c


COSTS: dict[type[Inst], Callable[[Inst], float]] = {
    v.InstBatchNormStats: lambda i: max(MIN_II, _first_in(i)),
    v.InstBatchNormAggregate: lambda i: max(MIN_II, 13 * _first_in(i) / 3),
    v.InstRangeSelect: lambda i: max(MIN_II, _first_in(i)),
    v.InstShuffle: lambda i: max(MIN_II, _first_in(i)),
    v.InstMax8: _first_in,
    v.InstFindIndex8: _first_in,
    v.InstMatchReplace8: lambda i: min(MIN_II, _first_in(i)),
    v.InstCopyPredicated: _copy_predicated,
    v.InstAffineSelect: lambda i: GPSIMD_START + _first_in(i),
    v.InstLocalGather: _local_gather,
    v.InstSelectReduce: _streaming, v.InstSequenceBounds: _streaming, v.InstNGather: _streaming,
    v.InstNonzeroWithCount: _streaming,
    r.InstDropout: lambda i: max(MIN_II, _first_in(i)),
    r.InstRng: _streaming, r.InstRand2: lambda i: max(MIN_II, per_partition(i.outs[0])),
    r.InstRandGetState: _streaming, r.InstRandSetState: _streaming, r.InstSetRngSeed: _streaming,
    r.InstDevicePrint: _streaming,
}
