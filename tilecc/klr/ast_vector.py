"""KLR operators of the Vector / GpSimd / Scalar-engine instructions beyond spec 003's family.

Names and fields are KLR HEAD's (KLR/Core/Operators.lean: `batchNormStats`,
`selectReduce`, `ncAffineSelect`, ...; fields in KLR order, snake_case here); they are
registered into `klr.ast.OPERATOR_CTOR` on import, so the JSON readers and writer of
`klr.read` handle them like the operators of `klr.ast`. Invariants of `klr.ast` hold
(accesses, `dtype` None = dst's dtype, `pos` not compared).

Semantics (NKI ISA reference, https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/
api/nki.isa.html, one page per instruction; arithmetic in float32, then converted to the
destination dtype):
- BatchNormStats (nki.isa.bn_stats): per partition over the F (<= 512) free elements of
  src in access order, the even-position group x[0::2] and the odd one x[1::2]; dst [P, 6]
  = count_even, mean_even, M2_even, count_odd, mean_odd, M2_odd where M2 = sum((x -
  mean)^2) ("variance * count"). An empty group (F == 1: no odd element) is count 0,
  mean 0, M2 0.
- BatchNormAggregate (nki.isa.bn_aggr): src holds G (count, mean, M2) triples per
  partition; dst [P, 2] = the pooled mean sum(c_i m_i) / sum(c_i) and the population
  variance (sum(M2_i) + sum(c_i (m_i - mean)^2)) / sum(c_i). Groups of count 0 add
  nothing; all counts 0 gives mean 0, variance 0.
- SelectReduce (nki.isa.select_reduce): dst = where(pred != 0, on_true, on_false)
  (reverse_pred: where(pred == 0, ...)); on_false an immediate or a [P, 1] column. With
  reduce_cmd the Vector Engine accumulator registers fold the row maxima of dst
  (reduce_op max only): Idle leaves them, Zero sets -inf, ZeroAccumulate = row max,
  Accumulate = max(registers, row max); reduce_res [P, 1], when given, receives them.
- CopyPredicated (nki.isa.tensor_copy_predicated): dst[i] = src[i] where predicate[i] != 0
  (reverse_pred: where it is 0); the other elements of dst keep their values.
- NcAffineSelect (nki.isa.affine_select): v(p, x...) = pred.offset + p *
  pred.channel_multiplier + sum(x_i * step_i) over pred's pattern (as Iota); dst =
  on_true_tile where cmp_op(v, 0) else on_false_value.
- NcRangeSelect (nki.isa.range_select): i(f) = range_start + f (f the free index in
  access order); keep = comp_op0(i, bound0) and comp_op1(i, bound1) (bounds [P, 1]);
  dst = on_true_tile where keep else on_false_value; the registers fold the row maxima of
  dst per reduce_command as SelectReduce, and reduce_res receives them when given.
- Max8 (nki.isa.max8): dst [P, 8] = the 8 largest values of src per partition in
  descending order (8 <= F <= 16384).
- FindIndex8 (nki.isa.nc_find_index8): dst[p, j] = the first index of vals[p, j] in
  src[p, :], or the all-ones value of dst's dtype when absent.
- MatchReplace8 (nki.isa.nc_match_replace8): for j = 7 .. 0, the first not yet matched
  position of vals[p, j] in src[p, :] is replaced by replace_value in dst (a copy of src)
  and written to dst_idx[p, j] (all-ones when absent).
- Shuffle (nki.isa.nc_stream_shuffle): in each 32-partition quadrant q, dst partition
  32q + i = src partition 32q + shuffle_mask[i]; mask value 255 leaves dst partition i.
- SequenceBounds (nki.isa.sequence_bounds): segment_ids [1, N]; dst [1, 2, N]: an element
  of a run of equal nonzero ids at positions s .. e-1 gets start s and end e; an id of 0
  (padding) gets start N and end -1 (the published numpy equivalent: runs, not ids, so an
  id that comes back later starts a new run).
- NcNGather (nki.isa.nc_n_gather): dst[p, j] = data[p, indices[p, j]] over the flattened
  free elements of data (an index outside them is an error).
- NcLocalGather (nki.isa.local_gather): the GpSimd core of partitions 16g .. 16g+15 reads
  its 16 index partitions flattened partition-first (index[16g:16g+16].T.ravel()), keeps
  the first V = num_valid_indicies (default all), and every partition p of the core gets
  dst[p, j*E + e] = src[p, idx_j + e] for e < E = num_elem_per_idx, idx_j an element offset
  into p's flattened free elements (the published example's numpy reference).
- NonzeroWithCount (nki.isa.nonzero_with_count): only partitions 0, 16, ..., 112 of the
  accesses (each GpSimd core's first): dst row = the positions of src's nonzero elements
  + index_offset, then padding_val up to F entries, then the count (F + 1 in all); the
  other dst partitions are not written.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tilecc.klr.ast import (OPERATOR_CTOR, AccumCmd, AluOp, DataPattern, Dtype, Immediate,
                            Operand, Pos, TensorRef)

# KLR `List Immediate` (a name, so that the JSON readers can key a field reader by it)
ImmediateList = tuple[Immediate, ...]


@dataclass(slots=True)
class BatchNormStats:
    dst: TensorRef
    src: TensorRef
    dtype: Dtype | None = None
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class BatchNormAggregate:
    dst: TensorRef
    src: TensorRef
    dtype: Dtype | None = None
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class SelectReduce:
    dst: TensorRef
    predicate: TensorRef
    on_true: TensorRef
    on_false: Operand
    reduce_res: TensorRef | None = None
    reduce_cmd: AccumCmd = AccumCmd.Idle
    reduce_op: AluOp = AluOp.max
    reverse_pred: bool = False
    dtype: Dtype | None = None
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class CopyPredicated:
    dst: TensorRef
    src: TensorRef
    predicate: TensorRef
    dtype: Dtype | None = None
    reverse_pred: bool = False
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class NcAffineSelect:
    dst: TensorRef
    pred: DataPattern
    on_true_tile: TensorRef
    on_false_value: Immediate
    dtype: Dtype | None = None
    cmp_op: AluOp = AluOp.is_equal
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class NcRangeSelect:
    dst: TensorRef
    reduce_command: AccumCmd
    reduce_res: TensorRef | None
    reduce_op: AluOp | None
    comp_op0: AluOp
    comp_op1: AluOp
    bound0: TensorRef
    bound1: TensorRef
    range_start: Immediate
    on_true_tile: TensorRef
    on_false_value: Immediate
    dtype: Dtype | None = None
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class Max8:
    dst: TensorRef
    src: TensorRef
    dtype: Dtype | None = None
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class FindIndex8:
    dst: TensorRef
    src: TensorRef
    vals: TensorRef
    dtype: Dtype | None = None
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class MatchReplace8:
    dst: TensorRef
    src: TensorRef
    vals: TensorRef
    replace_value: Immediate
    dst_idx: TensorRef | None = None
    dtype: Dtype | None = None
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class Shuffle:
    dst: TensorRef
    src: TensorRef
    shuffle_mask: ImmediateList
    dtype: Dtype | None = None
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class SequenceBounds:
    dst: TensorRef
    segment_ids: TensorRef
    dtype: Dtype | None = None
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class NcNGather:
    dst: TensorRef
    data: TensorRef
    indices: TensorRef
    dtype: Dtype | None = None
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class NcLocalGather:
    dst: TensorRef
    src: TensorRef
    index: TensorRef
    num_elem_per_idx: Immediate
    num_valid_indicies: Immediate | None = None  # KLR's spelling
    pos: Pos | None = field(default=None, compare=False)


@dataclass(slots=True)
class NonzeroWithCount:
    dst: TensorRef
    src: TensorRef
    index_offset: Immediate
    padding_val: Immediate
    pos: Pos | None = field(default=None, compare=False)


VECTOR_CTORS: dict[type, str] = {
    BatchNormStats: "batchNormStats", BatchNormAggregate: "batchNormAggregate",
    SelectReduce: "selectReduce", CopyPredicated: "copyPredicated",
    NcAffineSelect: "ncAffineSelect", NcRangeSelect: "ncRangeSelect", Max8: "max8",
    FindIndex8: "findIndex8", MatchReplace8: "matchReplace8", Shuffle: "shuffle",
    SequenceBounds: "sequenceBounds", NcNGather: "ncNGather", NcLocalGather: "ncLocalGather",
    NonzeroWithCount: "nonzeroWithCount",
}
OPERATOR_CTOR.update(VECTOR_CTORS)
