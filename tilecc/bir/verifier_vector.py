"""Verifier checks of the Vector / GpSimd-engine family (bir.inst_vector).

Contract: `CHECKS[cls](checker)` checks `checker.inst` (an `InstChecker` of bir.verifier,
which has already checked every access: memref, dtype, partition start, row bounds) and
raises `checker.fail(...)`. The rules are the NKI ISA reference pages' (cited per
instruction in klr.ast_vector): operand counts; equal partition counts; element counts per
partition (bn_stats <= 512 in, 6 out; bn_aggr 3k in, 2 out; max8 8..16384 in, 8 out; the
8 vals / indices of find_index8 / match_replace8; sequence_bounds 1 partition, 2N out);
memories (GpSimd instructions -- affine_select, sequence_bounds, nc_n_gather, local_gather
-- SBUF only; local_gather on 16-partition groups, 1..32 elements per index, uint16 indices;
select_reduce / copy_predicated not both data and predicate in PSUM); dtypes (predicates
integer, copy src / dst one dtype, range_select bounds float32, nc_n_gather indices uint32,
find_index8 output uint16 / uint32); comparison ops of range_select; shuffle mask entries
0..31 or 255.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from tilecc.bir import inst as b
from tilecc.bir import inst_vector as v
from tilecc.bir.enums import AluOpType, BirDtype, MemoryKind

if TYPE_CHECKING:
    from tilecc.bir.verifier import InstChecker

INT_DTYPES = frozenset({BirDtype.int8, BirDtype.int16, BirDtype.int32, BirDtype.uint8,
                        BirDtype.uint16, BirDtype.uint32})
FLOAT_DTYPES = frozenset({BirDtype.float32, BirDtype.bfloat16, BirDtype.float16, BirDtype.float8e3,
                          BirDtype.float8e4, BirDtype.float8e5, BirDtype.float32r})
COMPARE_OPS = frozenset({AluOpType.is_equal, AluOpType.is_lt, AluOpType.is_le, AluOpType.is_gt,
                         AluOpType.is_ge})


def _parts(ap: b.AccessPattern) -> int:
    return ap.ap[0][1]


def _per_partition(ap: b.AccessPattern) -> int:
    n = 1
    for _, num in ap.ap[1:]:
        n *= num
    return n


def _tiles(c: InstChecker, ins: tuple[int, ...], outs: tuple[int, ...]) -> list[b.AccessPattern]:
    """The tile arguments at positions `ins` then the outputs `outs`, all of one partition count."""
    inst = c.inst
    tiles = [c.tile(inst.ins[i], f"input {i}") for i in ins] + [inst.outs[i] for i in outs]
    counts = {_parts(t) for t in tiles}
    if len(counts) > 1:
        raise c.fail(f"operands differ in partition count {sorted(counts)}")
    return tiles


def _memory(c: InstChecker, ap: b.AccessPattern) -> MemoryKind:
    return c.locs[ap.memref].kind


def _sbuf_only(c: InstChecker, *aps: b.AccessPattern) -> None:
    for ap in aps:
        if _memory(c, ap) != MemoryKind.SB:
            raise c.fail(f"'{ap.memref}' must be in SB: GpSimd Engine cannot access "
                         f"{_memory(c, ap).name}")


def _dtype(c: InstChecker, ap: b.AccessPattern, allowed: frozenset[BirDtype], what: str) -> None:
    if ap.dtype not in allowed:
        raise c.fail(f"{what} '{ap.memref}' is {ap.dtype.name}; expected one of "
                     f"{sorted(d.name for d in allowed)}")


def _size(c: InstChecker, ap: b.AccessPattern, expected: int, what: str) -> None:
    if _per_partition(ap) != expected:
        raise c.fail(f"{what} has {_per_partition(ap)} elements per partition, expected {expected}")


def check_bn_stats(c: InstChecker) -> None:
    c.count((1,), 1)
    src, dst = _tiles(c, (0,), (0,))
    if not 1 <= _per_partition(src) <= 512:
        raise c.fail(f"bn_stats reads 1..512 elements per partition (bn_stats_fmax), found "
                     f"{_per_partition(src)}")
    _size(c, dst, 6, "the output")


def check_bn_aggr(c: InstChecker) -> None:
    c.count((1,), 1)
    src, dst = _tiles(c, (0,), (0,))
    if _per_partition(src) % 3 or not _per_partition(src):
        raise c.fail(f"bn_aggr reads (count, mean, variance*count) triples: {_per_partition(src)} "
                     f"elements per partition is not a multiple of 3")
    _size(c, dst, 2, "the output")


def _reduce_output(c: InstChecker, size: int) -> None:
    if len(c.inst.outs) == 2:
        red = c.inst.outs[1]
        _size(c, red, 1, "reduce_res")
        _dtype(c, red, FLOAT_DTYPES, "reduce_res")
    elif len(c.inst.outs) != 1:
        raise c.fail(f"expected 1 or 2 outputs, found {len(c.inst.outs)}")
    c.same_size(c.inst.ins[size], c.inst.outs[0])


def check_select_reduce(c: InstChecker) -> None:
    inst = c.inst
    if len(inst.ins) != 3:
        raise c.fail(f"expected 3 inputs, found {len(inst.ins)}")
    pred, on_true, dst = _tiles(c, (0, 1), (0,))
    c.scalar(inst.ins[2], "on_false")
    _dtype(c, pred, INT_DTYPES, "the predicate")
    if on_true.dtype in (BirDtype.int32, BirDtype.uint32):
        raise c.fail(f"on_true '{on_true.memref}' cannot be {on_true.dtype.name}")
    if _memory(c, pred) == _memory(c, on_true) == MemoryKind.PSUM:
        raise c.fail("predicate and on_true cannot both be in PSUM")
    c.same_size(pred, dst)
    _reduce_output(c, 1)


def check_copy_predicated(c: InstChecker) -> None:
    c.count((2,), 1)
    src, pred, dst = _tiles(c, (0, 1), (0,))
    _dtype(c, pred, INT_DTYPES, "the predicate")
    if src.dtype != dst.dtype:
        raise c.fail(f"src and dst differ in dtype ({src.dtype.name}, {dst.dtype.name})")
    if _memory(c, pred) == _memory(c, src) == MemoryKind.PSUM:
        raise c.fail("src and predicate cannot both be in PSUM")
    c.same_size(src, dst)
    c.same_size(pred, dst)


def check_affine_select(c: InstChecker) -> None:
    inst = c.inst
    assert isinstance(inst, v.InstAffineSelect)
    c.count((2,), 1)
    on_true, dst = _tiles(c, (0,), (0,))
    _sbuf_only(c, on_true, dst)
    if not isinstance(inst.ins[1], b.Immediate) or inst.ins[1].dtype != BirDtype.float32:
        raise c.fail("on_false_value must be a float32 immediate")
    count = 1
    for _, num in inst.pattern:
        count *= num
    if count != _per_partition(dst):
        raise c.fail(f"pattern covers {count} elements, the output has {_per_partition(dst)} "
                     f"per partition")
    c.same_size(on_true, dst)


def check_range_select(c: InstChecker) -> None:
    inst = c.inst
    assert isinstance(inst, v.InstRangeSelect)
    if len(inst.ins) != 5:
        raise c.fail(f"expected 5 inputs, found {len(inst.ins)}")
    on_true, bound0, bound1, dst = _tiles(c, (0, 1, 2), (0,))
    for bound in (bound0, bound1):
        _size(c, bound, 1, "a bound")
        _dtype(c, bound, frozenset({BirDtype.float32}), "a bound")
    _dtype(c, on_true, FLOAT_DTYPES, "on_true_tile")
    for op in (inst.comp_op0, inst.comp_op1):
        if op not in COMPARE_OPS:
            raise c.fail(f"comparison {op.name} is not one of equal, less, less_equal, greater, "
                         f"greater_equal")
    if not all(isinstance(a, b.Immediate) for a in inst.ins[3:]):
        raise c.fail("range_start and on_false_value must be immediates")
    _reduce_output(c, 0)


def check_max8(c: InstChecker) -> None:
    c.count((1,), 1)
    src, dst = _tiles(c, (0,), (0,))
    if not 8 <= _per_partition(src) <= 16384:
        raise c.fail(f"reads 8..16384 elements per partition, found {_per_partition(src)}")
    _size(c, dst, 8, "the output")


def check_find_index8(c: InstChecker) -> None:
    c.count((2,), 1)
    src, vals, dst = _tiles(c, (0, 1), (0,))
    if not 8 <= _per_partition(src) <= 16384:
        raise c.fail(f"reads 8..16384 elements per partition, found {_per_partition(src)}")
    _size(c, vals, 8, "vals")
    _size(c, dst, 8, "the output")
    _dtype(c, dst, frozenset({BirDtype.uint16, BirDtype.uint32}), "the output")


def check_match_replace8(c: InstChecker) -> None:
    inst = c.inst
    if len(inst.ins) != 3 or len(inst.outs) not in (1, 2):
        raise c.fail(f"expected 3 inputs and 1 or 2 outputs, found {len(inst.ins)} and "
                     f"{len(inst.outs)}")
    src, vals, dst = _tiles(c, (0, 1), (0,))
    _size(c, vals, 8, "vals")
    c.same_size(src, dst)
    if len(inst.outs) == 2:
        _size(c, inst.outs[1], 8, "dst_idx")
        _dtype(c, inst.outs[1], INT_DTYPES, "dst_idx")


def check_shuffle(c: InstChecker) -> None:
    inst = c.inst
    if len(inst.ins) != 33 or len(inst.outs) != 1:
        raise c.fail(f"expected [src, 32 mask immediates] and one output, found {len(inst.ins)} "
                     f"inputs")
    src, dst = c.tile(inst.ins[0], "input"), inst.outs[0]
    if src.dtype != dst.dtype:
        raise c.fail(f"src and dst differ in dtype ({src.dtype.name}, {dst.dtype.name})")
    if _per_partition(src) != _per_partition(dst):
        raise c.fail("src and dst differ in elements per partition")
    for i, arg in enumerate(inst.ins[1:]):
        if not (isinstance(arg, b.Immediate) and isinstance(arg.value, int)
                and (0 <= arg.value < 32 or arg.value == 255)):
            raise c.fail(f"shuffle_mask[{i}] must be a partition 0..31 of the quadrant or 255")


def check_sequence_bounds(c: InstChecker) -> None:
    c.count((1,), 1)
    ids, dst = _tiles(c, (0,), (0,))
    _sbuf_only(c, ids, dst)
    if _parts(ids) != 1:
        raise c.fail(f"segment_ids must have one partition, found {_parts(ids)}")
    _size(c, dst, 2 * _per_partition(ids), "the output")
    allowed = frozenset({BirDtype.float32, BirDtype.int32})
    _dtype(c, ids, allowed, "segment_ids")
    _dtype(c, dst, allowed, "the output")


def check_n_gather(c: InstChecker) -> None:
    c.count((2,), 1)
    data, indices, dst = _tiles(c, (0, 1), (0,))
    _sbuf_only(c, data, indices, dst)
    _dtype(c, indices, frozenset({BirDtype.uint32}), "indices")
    if data.dtype != dst.dtype:
        raise c.fail(f"data and dst differ in dtype ({data.dtype.name}, {dst.dtype.name})")
    c.same_size(indices, dst)


def check_local_gather(c: InstChecker) -> None:
    inst = c.inst
    assert isinstance(inst, v.InstLocalGather)
    c.count((2,), 1)
    src, index, dst = _tiles(c, (0, 1), (0,))
    _sbuf_only(c, src, index, dst)
    if _parts(src) % 16:
        raise c.fail(f"local_gather works on groups of 16 partitions, found {_parts(src)}")
    if inst.num_elem_per_idx not in (1, 2, 4, 8, 16, 32):
        raise c.fail(f"num_elem_per_idx {inst.num_elem_per_idx} is not one of 1, 2, 4, 8, 16, 32")
    _dtype(c, index, frozenset({BirDtype.uint16}), "index")
    per_core = 16 * _per_partition(index)
    valid = inst.num_valid_indices or per_core
    if not 0 < valid <= min(per_core, 4096):
        raise c.fail(f"{valid} indices per GpSimd core: at most the {per_core} of its index "
                     f"partitions and 4096")
    if src.dtype != dst.dtype:
        raise c.fail(f"src and dst differ in dtype ({src.dtype.name}, {dst.dtype.name})")
    _size(c, dst, valid * inst.num_elem_per_idx, "the output")


def check_nonzero_with_count(c: InstChecker) -> None:
    c.count((1,), 1)
    src, dst = _tiles(c, (0,), (0,))
    _sbuf_only(c, src, dst)
    _dtype(c, src, frozenset({BirDtype.float32, BirDtype.int32}), "src")
    _dtype(c, dst, frozenset({BirDtype.int32}), "dst")
    _size(c, dst, _per_partition(src) + 1, "dst")


CHECKS: dict[type[b.Inst], Callable[[InstChecker], None]] = {
    v.InstBatchNormStats: check_bn_stats, v.InstBatchNormAggregate: check_bn_aggr,
    v.InstSelectReduce: check_select_reduce, v.InstCopyPredicated: check_copy_predicated,
    v.InstAffineSelect: check_affine_select, v.InstRangeSelect: check_range_select,
    v.InstMax8: check_max8, v.InstFindIndex8: check_find_index8,
    v.InstMatchReplace8: check_match_replace8, v.InstShuffle: check_shuffle,
    v.InstSequenceBounds: check_sequence_bounds, v.InstNGather: check_n_gather,
    v.InstLocalGather: check_local_gather, v.InstNonzeroWithCount: check_nonzero_with_count,
}
