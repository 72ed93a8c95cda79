"""KLR -> BIR leaves of the Vector / GpSimd-engine family (klr.ast_vector -> bir.inst_vector).

Contract: `LEAVES[cls](cg, op)` lowers one operator with the codegen instance `cg`
(`KlirToBirCodegen`: naming `<Op>-<id>`, tensor_ref, operand, enum maps), appending one
instruction in bir.inst_vector's operand order. Engines are the ones the NKI ISA pages
name: bn_stats / bn_aggr / select_reduce / tensor_copy_predicated / range_select / max8 /
nc_find_index8 / nc_match_replace8 / nc_stream_shuffle on the Vector Engine (DVE),
affine_select / sequence_bounds / nc_n_gather / local_gather on GpSimd (Pool). A reduce_op other than
max on select_reduce / range_select is a CodegenError (the pages: "only nl.maximum is
supported"), as is a shuffle mask that is not 32 integers.
"""

from __future__ import annotations

from typing import Any, Callable

from tilecc.bir import inst as b
from tilecc.bir import inst_vector as v
from tilecc.bir.enums import BirDtype, EngineType
from tilecc.codegen import enum_maps as m
from tilecc.errors import CodegenError
from tilecc.klr import ast as k
from tilecc.klr import ast_vector as kv

DVE, POOL = EngineType.DVE, EngineType.Pool


def _plain(cls: type[b.Inst], engine: EngineType, *roles: str) -> Callable[[Any, Any], None]:
    """A leaf whose ins are the tensor fields `roles` of the operator, outs [dst]."""
    def leaf(cg: Any, op: Any) -> None:
        out = cg.tensor_ref(op.dst)
        cg.emit(cls(cg.name(op), engine, [cg.tensor_ref(getattr(op, r)) for r in roles], [out]))
    return leaf


def _max_only(op: k.AluOp | None, what: str) -> None:
    if op is not None and op != k.AluOp.max:
        raise CodegenError(f"{what} reduces with max only, found {op.name}")


def codegen_select_reduce(cg: Any, op: kv.SelectReduce) -> None:
    _max_only(op.reduce_op, "select_reduce")
    outs = [cg.tensor_ref(op.dst)]
    if op.reduce_res is not None:
        outs.append(cg.tensor_ref(op.reduce_res))
    ins = [cg.tensor_ref(op.predicate), cg.tensor_ref(op.on_true), cg.operand(op.on_false)]
    cg.emit(v.InstSelectReduce(cg.name(op), DVE, ins, outs, acc=m.codegen_accum_cmd(op.reduce_cmd),
                               reduce_op=m.codegen_alu_op(op.reduce_op),
                               reverse_pred=op.reverse_pred))


def codegen_copy_predicated(cg: Any, op: kv.CopyPredicated) -> None:
    out = cg.tensor_ref(op.dst)
    cg.emit(v.InstCopyPredicated(cg.name(op), DVE, [cg.tensor_ref(op.src), cg.tensor_ref(op.predicate)],
                                 [out], reverse_pred=op.reverse_pred))


def codegen_affine_select(cg: Any, op: kv.NcAffineSelect) -> None:
    out = cg.tensor_ref(op.dst)
    pat = op.pred
    cg.emit(v.InstAffineSelect(cg.name(op), POOL, [cg.tensor_ref(op.on_true_tile),
                                                   cg.operand(_float(op.on_false_value))], [out],
                               offset=pat.offset, pattern=tuple((p.step, p.num) for p in pat.pattern),
                               channel_multiplier=pat.channel_multiplier,
                               cmp_op=m.codegen_alu_op(op.cmp_op)))


def codegen_range_select(cg: Any, op: kv.NcRangeSelect) -> None:
    _max_only(op.reduce_op, "range_select")
    outs = [cg.tensor_ref(op.dst)]
    if op.reduce_res is not None:
        outs.append(cg.tensor_ref(op.reduce_res))
    ins = [cg.tensor_ref(op.on_true_tile), cg.tensor_ref(op.bound0), cg.tensor_ref(op.bound1),
           cg.operand(_float(op.range_start)), cg.operand(_float(op.on_false_value))]
    cg.emit(v.InstRangeSelect(cg.name(op), DVE, ins, outs, acc=m.codegen_accum_cmd(op.reduce_command),
                              comp_op0=m.codegen_alu_op(op.comp_op0),
                              comp_op1=m.codegen_alu_op(op.comp_op1)))


def _float(imm: k.Immediate) -> k.Immediate:
    """The engines compare and select in float32: an int immediate becomes its float."""
    return imm if isinstance(imm.value, float) else k.Immediate(float(imm.value))


def codegen_match_replace8(cg: Any, op: kv.MatchReplace8) -> None:
    outs = [cg.tensor_ref(op.dst)]
    if op.dst_idx is not None:
        outs.append(cg.tensor_ref(op.dst_idx))
    ins = [cg.tensor_ref(op.src), cg.tensor_ref(op.vals), cg.operand(_float(op.replace_value))]
    cg.emit(v.InstMatchReplace8(cg.name(op), DVE, ins, outs))


def codegen_shuffle(cg: Any, op: kv.Shuffle) -> None:
    mask = [imm.value for imm in op.shuffle_mask]
    if len(mask) != 32 or not all(isinstance(x, int) for x in mask):
        raise CodegenError(f"the shuffle mask must be 32 integers, found {mask}")
    out = cg.tensor_ref(op.dst)
    ins: list[b.Argument] = [cg.tensor_ref(op.src)]
    ins += [b.Immediate(BirDtype.int32, x) for x in mask]
    cg.emit(v.InstShuffle(cg.name(op), DVE, ins, [out]))


def codegen_local_gather(cg: Any, op: kv.NcLocalGather) -> None:
    counts = [op.num_elem_per_idx, op.num_valid_indicies]
    values = [0 if c is None else c.value for c in counts]
    if not all(isinstance(x, int) for x in values):
        raise CodegenError(f"local_gather counts must be integers, found {values}")
    out = cg.tensor_ref(op.dst)
    cg.emit(v.InstLocalGather(cg.name(op), POOL, [cg.tensor_ref(op.src), cg.tensor_ref(op.index)],
                              [out], num_elem_per_idx=int(values[0]), num_valid_indices=int(values[1])))


def codegen_nonzero_with_count(cg: Any, op: kv.NonzeroWithCount) -> None:
    values = [op.index_offset.value, op.padding_val.value]
    if not all(isinstance(x, int) for x in values):
        raise CodegenError(f"nonzero_with_count offsets must be int32, found {values}")
    out = cg.tensor_ref(op.dst)
    cg.emit(v.InstNonzeroWithCount(cg.name(op), POOL, [cg.tensor_ref(op.src)], [out],
                                   index_offset=int(values[0]), padding_val=int(values[1])))


LEAVES: dict[type, Callable[[Any, Any], None]] = {
    kv.BatchNormStats: _plain(v.InstBatchNormStats, DVE, "src"),
    kv.BatchNormAggregate: _plain(v.InstBatchNormAggregate, DVE, "src"),
    kv.SelectReduce: codegen_select_reduce,
    kv.CopyPredicated: codegen_copy_predicated,
    kv.NcAffineSelect: codegen_affine_select,
    kv.NcRangeSelect: codegen_range_select,
    kv.Max8: _plain(v.InstMax8, DVE, "src"),
    kv.FindIndex8: _plain(v.InstFindIndex8, DVE, "src", "vals"),
    kv.MatchReplace8: codegen_match_replace8,
    kv.Shuffle: codegen_shuffle,
    kv.SequenceBounds: _plain(v.InstSequenceBounds, POOL, "segment_ids"),
    kv.NcNGather: _plain(v.InstNGather, POOL, "data", "indices"),
    kv.NcLocalGather: codegen_local_gather,
    kv.NonzeroWithCount: codegen_nonzero_with_count,
}
