"""`nki.isa` for tilecc: the compute, copy and fill instructions of spec 003, traced to KLR.

Contract: each function has the signature and defaults of the public NKI 2.x docs
(aws-neuron-sdk nki/api/nki/isa/__init__.py): outputs are passed in `dst` (and
`reduce_res`), nothing is returned; the NKI 1.x form without dst, which returns a new tile,
is accepted too (tilecc/nki/isa_legacy.py). A call checks the documented restrictions (see
tilecc/nki/operands.py and the named op sets in tilecc/nki/ops.py), then appends one KLR
operator to the active trace with `dtype` = the dst dtype, as KLR's own NKI frontend does.
Restrictions tilecc adds because KLR / BIR cannot express a form: tensor_scalar_reduce only
with reduce_cmd=reset_reduce (KLR TensorScalarReduce is always ZeroAccumulate, spec 003)
and without reverse0 (documented as not supported yet); activate2 reduce_op without
abs_max / abs_min (no KLR AluOp).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import replace

from tilecc.klr import ast
from tilecc.nki import isa_legacy as legacy
from tilecc.nki import operands as chk
from tilecc.nki.broadcasting import in_shape_of
from tilecc.nki.dtypes import is_float, plain_number
from tilecc.nki.errors import kernel_error
from tilecc.nki.operators import install
from tilecc.nki.isa_enums import dge_mode, engine, klr_engine, oob_mode, reduce_cmd
from tilecc.nki.isa_indirect import IndirectView, indirect_dma_copy
from tilecc.nki.isa_legacy import two_forms
from tilecc.nki.isa_refused import refusal
from tilecc.nki.tensor import NkiTensor, canonical_dtype_or_none, mask_tile
from tilecc.nki.tracer import active_trace, klr_dtype, masked_off

tensor_engine, vector_engine, scalar_engine = engine.tensor, engine.vector, engine.scalar
gpsimd_engine, unknown_engine = engine.gpsimd, engine.unknown
_Engine, _DgeMode, _Oob = engine, dge_mode, oob_mode


def _emit(stmt: ast.Stmt) -> None:
    active_trace().emit(stmt)


def _ap(view: NkiTensor) -> ast.TensorRef:
    return active_trace().access(view)


# ---------------------------------------------------------------- data movement and fill

def _dma_copy_2x(dst: object, src: object, priority: int | None = None,
                 oob_mode: oob_mode = oob_mode.error, dge_mode: dge_mode = dge_mode.unknown,
                 engine: engine = engine.unknown, name: str | None = None) -> None:
    """dst = src through a DMA engine (HBM or SBUF on both sides, equal element counts);
    an indirect side (`t[idx_tile, ...]`, `t.ap(vector_offset=...)`) makes it a row gather /
    scatter (tilecc/nki/isa_indirect.py)."""
    _dma_copy(dst, src, oob_mode, dge_mode, engine, False)


@functools.wraps(_dma_copy_2x)
def dma_copy(*args: object, dst_rmw_op: object = None, mask: object = None,
             **kwargs: object) -> None:
    """The NKI 2.x signature (what inspect.signature reports), plus NKI 1.x's keywords
    `dst_rmw_op` (np.add / nl.add: dst += src) and `mask` (restricts both sides to its box,
    as nl.store's does)."""
    if masked_off(mask):
        return
    try:
        bound = _DMA_COPY_SIGNATURE.bind(*args, **kwargs)
    except TypeError as err:
        raise kernel_error(f"nisa.dma_copy: {err}") from None
    bound.apply_defaults()
    a = bound.arguments
    _dma_copy(a["dst"], a["src"], a["oob_mode"], a["dge_mode"], a["engine"], _rmw_add(dst_rmw_op), mask)


_DMA_COPY_SIGNATURE = inspect.signature(_dma_copy_2x)


def _dma_copy(dst: object, src: object, oob_mode: object, dge_mode: object, engine: object,
              add: bool, mask: object = None) -> None:
    if isinstance(dst, IndirectView) or isinstance(src, IndirectView):
        if mask is not None:
            raise kernel_error("nisa.dma_copy: mask= on an indirect (gather / scatter) copy is not "
                               "supported; slice the index tile instead")
        if not isinstance(dst, NkiTensor) or not isinstance(src, NkiTensor):
            raise kernel_error("nisa.dma_copy: dst and src must be tensors")
        indirect_dma_copy(dst, src, skip=oob_mode is _Oob.skip, accumulate=add)
        return
    d = chk.tile("dma_copy", "dst", dst, ("hbm", "sbuf"))
    s = chk.tile("dma_copy", "src", src, ("hbm", "sbuf"))
    if mask is not None:
        d, s = d.masked(mask, "nisa.dma_copy"), mask_tile("nisa.dma_copy", s, mask)
    if d.partitions * d.free_elements != s.partitions * s.free_elements:
        raise kernel_error(f"nisa.dma_copy: dst {list(d.shape)} and src {list(s.shape)} must hold "
                           f"the same number of elements")
    if engine is not _Engine.unknown and dge_mode is not _DgeMode.hwdge:
        raise kernel_error("nisa.dma_copy: engine is only valid with dge_mode=nisa.dge_mode.hwdge")
    trace = active_trace()
    compute = ast.DgeComputeOp.add if add else ast.DgeComputeOp.none
    for dst_piece, src_piece in _row_pieces(d, s):
        _emit(ast.NcDmaCopy(trace.access(dst_piece, dma=True), trace.access(src_piece, dma=True),
                            compute))


def _rmw_add(op: object) -> bool:
    """NKI 1.x `dst_rmw_op`: None, or an add (dst += src), the one DGE compute op."""
    if op is None:
        return False
    from tilecc.nki.ops import resolve_op
    if (found := resolve_op(op)) is None or found.alu != "add":
        raise kernel_error(f"nisa.dma_copy: dst_rmw_op must be None or an add (np.add, nl.add), "
                           f"got {op!r}")
    return True


def _row_pieces(d: NkiTensor, s: NkiTensor) -> list[tuple[NkiTensor, NkiTensor]]:
    """One DMA per index of the free dims that step whole HBM rows (`a[i_h + i_kh, i_w]`:
    overlapping row windows), and one per row when the first dim steps over rows
    (`a[0:128:2, :]`, as the klr tool traces it) or, stepping less than a row, leaves the
    row it starts in (the rows of `a.reshape((140, 5000))` for a [2, 70, 5000] `a`): a KLR
    access keeps its free elements inside one row of the HBM tensor's first dim and its
    rows consecutive, so such a copy is several copies, one per row offset."""
    hbm = s if not s.alloc.on_chip else d if not d.alloc.on_chip else None
    if hbm is None or d.shape != s.shape:
        return [(d, s)]
    row = hbm.alloc.free_size // (hbm.alloc.shape[0] if len(hbm.alloc.shape) > 1 else 1)
    split = [i for i, dim in enumerate(hbm.dims) if i > 0 and dim.num > 1 and dim.step
             and dim.step % row == 0 and not dim.is_par]
    pieces = [(d, s)]
    for axis in reversed(split):
        pieces = [(_drop_dim(dp, axis, k), _drop_dim(sp, axis, k))
                  for dp, sp in pieces for k in range(hbm.dims[axis].num)]
    if (hbm.dims and (first := hbm.dims[0]).num > 1 and first.step not in (0, row)
            and (first.step % row == 0 or not _inside_one_row(hbm, row))):
        pieces = [(_one_row(dp, k), _one_row(sp, k)) for dp, sp in pieces for k in range(first.num)]
    return pieces


def _inside_one_row(view: NkiTensor, row: int) -> bool:
    """Every element of the HBM `view` lies in the row of the first dim where it starts."""
    start = view.offset % row
    low = start + sum(min(0, d.step * (d.num - 1)) for d in view.dims)
    high = start + sum(max(0, d.step * (d.num - 1)) for d in view.dims)
    return low >= 0 and high < row


def _drop_dim(view: NkiTensor, axis: int, index: int) -> NkiTensor:
    """`view` at position `index` of its free dim `axis` (that dim removed)."""
    dim = view.dims[axis]
    return NkiTensor(view.alloc, view.offset + index * dim.step, view.par_start,
                     view.dims[:axis] + view.dims[axis + 1:])


def _one_row(view: NkiTensor, index: int) -> NkiTensor:
    """`view` cut to entry `index` of its first dim (kept, of size 1): a partition of an
    on-chip view, a row of an HBM one."""
    first = view.dims[0]
    if view.alloc.on_chip and view.par_index == 0:
        return NkiTensor(view.alloc, view.offset, view.par_start + index * first.step,
                         (replace(first, num=1), *view.dims[1:]))
    return NkiTensor(view.alloc, view.offset + index * first.step, view.par_start,
                     (replace(first, num=1), *view.dims[1:]))


@two_forms(legacy.tensor_copy)
def tensor_copy(dst: object, src: object, engine: engine = engine.unknown, name: str | None = None,
                *, dtype: object = None) -> None:
    """dst = src on Vector, Scalar or GpSimd Engine (tiles in SBUF / PSUM). The tutorials'
    `tensor_copy(dst=, src=, dtype=)` casts to `dtype` ("cast to expected output data-type"):
    another dtype than dst's is a copy into a tile of that dtype, then into dst."""
    d, s = chk.tile("tensor_copy", "dst", dst), chk.tile("tensor_copy", "src", src)
    if dtype is not None and (cast := canonical_dtype_or_none(dtype)) != d.dtype:
        if cast is None:
            raise kernel_error(f"nisa.tensor_copy: dtype={dtype!r} is not an NKI dtype")
        staged = active_trace().allocate(s.shape, cast, "sbuf", "cast")
        tensor_copy(staged, s, engine)
        s = staged
    chk.same_elements("tensor_copy", ("src", s), ("dst", d))
    eng = klr_engine("tensor_copy", engine, (_Engine.vector, _Engine.scalar, _Engine.gpsimd, _Engine.unknown))
    if eng is ast.Engine.pool and "psum" in (d.buffer, s.buffer):
        raise kernel_error("nisa.tensor_copy: GpSimd Engine cannot access PSUM")
    _emit(ast.NcCopy(_ap(d), _ap(s), klr_dtype(d.dtype), eng))


@two_forms(legacy.memset)
def memset(dst: object, value: object, engine: engine = engine.unknown, name: str | None = None) -> None:
    """Fill dst with the compile-time constant `value` (Vector or GpSimd Engine)."""
    d = chk.tile("memset", "dst", dst)
    value = plain_number(value)
    eng = klr_engine("memset", engine, (_Engine.vector, _Engine.gpsimd, _Engine.unknown))
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise kernel_error(f"nisa.memset: value must be a compile-time number, got {chk.describe(value)}")
    if not is_float(d.dtype) and not float(value).is_integer():
        raise kernel_error(f"nisa.memset: value {value} does not fit the integer dtype {d.dtype}")
    immediate = ast.Immediate(float(value) if is_float(d.dtype) else int(value))
    _emit(ast.MemSet(_ap(d), immediate, klr_dtype(d.dtype), eng))


@two_forms(legacy.iota)
def iota(dst: object, pattern: list[list[int]], offset: int = 0, channel_multiplier: int = 0,
         name: str | None = None) -> None:
    """dst[p, x...] = offset + p * channel_multiplier + sum(x_i * step_i) (GpSimd, SBUF)."""
    d = chk.tile("iota", "dst", dst, ("sbuf",))
    pairs: list[ast.APPair] = []
    for pair in pattern:
        if not isinstance(pair, (list, tuple)) or len(pair) != 2 or not all(isinstance(v, int) for v in pair):
            raise kernel_error(f"nisa.iota: pattern is a list of [step, num] int pairs, got {pattern!r}")
        pairs.append(ast.APPair(pair[0], pair[1]))
    if not 1 <= len(pairs) <= 4:
        raise kernel_error(f"nisa.iota: pattern has 1 to 4 [step, num] pairs, got {len(pairs)}")
    count = 1
    for ap_pair in pairs:
        count *= ap_pair.num
    if count != d.free_elements:
        raise kernel_error(f"nisa.iota: pattern covers {count} elements but dst has {d.free_elements} "
                           f"per partition")
    if not isinstance(offset, int) or not isinstance(channel_multiplier, int):
        raise kernel_error("nisa.iota: offset and channel_multiplier must be int32 values")
    _emit(ast.Iota(_ap(d), ast.DataPattern(offset, tuple(pairs), channel_multiplier), klr_dtype(d.dtype)))


# ---------------------------------------------------------------- element-wise ALU

@two_forms(legacy.tensor_tensor)
def tensor_tensor(dst: object, data1: object, data2: object, op: object, engine: engine = engine.unknown,
                  name: str | None = None) -> None:
    """dst = data1 op data2, element-wise (same partitions and elements per partition).
    Two SBUF inputs of different dtypes are illegal in BIR (spec 003: the verifier's
    checkTensorTensorInputType), while NKI computes in float32 whatever the input dtypes:
    the input that is not float32 is first copied to a float32 tile (exact: it is the
    conversion the engine makes when it reads it)."""
    fn = "tensor_tensor"
    d, a, b = chk.tile(fn, "dst", dst), chk.tile(fn, "data1", data1), chk.tile(fn, "data2", data2)
    chk.same_elements(fn, ("data1", a), ("data2", b), ("dst", d))
    b = in_shape_of(f"nisa.{fn}", b, a)
    alu = chk.alu_op(fn, "op", op, binary=True)
    chk.integer_dtypes(fn, alu, ("data1", a), ("data2", b), ("dst", d))
    chk.not_both_psum(fn, ("data1", a), ("data2", b))
    if a.dtype != b.dtype and a.buffer == b.buffer == "sbuf":
        a, b = (_as_float32(t) for t in (a, b))
    eng = klr_engine(fn, engine, (_Engine.vector, _Engine.gpsimd, _Engine.unknown))
    in_psum = "psum" in (a.buffer, b.buffer, d.buffer)
    if alu is ast.AluOp.pow and eng is ast.Engine.dve:
        raise kernel_error("nisa.tensor_tensor: nl.power runs on GpSimd Engine, not on Vector Engine")
    if (eng is ast.Engine.pool or alu is ast.AluOp.pow) and in_psum:
        raise kernel_error("nisa.tensor_tensor: GpSimd Engine cannot access PSUM")
    if eng is ast.Engine.unassigned:
        eng = _tensor_tensor_engine(alu, (a, b, d), in_psum)
    _emit(ast.TensorTensor(_ap(d), _ap(a), _ap(b), alu, klr_dtype(d.dtype), eng))


def _as_float32(tile: NkiTensor) -> NkiTensor:
    """`tile`, or a float32 SBUF copy of it."""
    if tile.dtype == "float32":
        return tile
    copy = active_trace().allocate(tile.shape, "float32", "sbuf", f"{tile.name}_f32")
    _emit(ast.NcCopy(_ap(copy), _ap(tile), ast.Dtype.float32, ast.Engine.unassigned))
    return copy


def _tensor_tensor_engine(alu: ast.AluOp, tiles: tuple[NkiTensor, ...], in_psum: bool) -> ast.Engine:
    """The engine NKI picks for engine=unknown (docs): nl.power and all-int32/uint32 tiles
    go to GpSimd (exact integer math) unless a tile is in PSUM; everything else to Vector.
    BIR requires TensorTensor's engine to be assigned (birverifier checkTensorTensor)."""
    if alu is ast.AluOp.pow:
        return ast.Engine.pool
    if not in_psum and all(t.dtype in ("int32", "uint32") for t in tiles):
        return ast.Engine.pool
    return ast.Engine.dve


@two_forms(legacy.tensor_scalar)
def tensor_scalar(dst: object, data: object, op0: object, operand0: object, reverse0: bool = False,
                  op1: object = None, operand1: object = None, reverse1: bool = False,
                  engine: engine = engine.unknown, name: str | None = None) -> None:
    """dst = (data op0 operand0) op1 operand1; operands are scalars or [P, 1] tiles."""
    fn = "tensor_scalar"
    d, x = chk.tile(fn, "dst", dst), chk.tile(fn, "data", data)
    chk.same_elements(fn, ("data", x), ("dst", d))
    alu0 = chk.alu_op(fn, "op0", op0)
    alu1 = None if op1 is None else chk.alu_op(fn, "op1", op1)
    if (op1 is None) != (operand1 is None):
        raise kernel_error("nisa.tensor_scalar: op1 and operand1 must both be given or both be None")
    bitvec = alu0 in ast.BITWISE_ALU_OPS
    if alu1 is not None and (alu1 in ast.BITWISE_ALU_OPS) != bitvec:
        raise kernel_error(f"nisa.tensor_scalar: op0 ({op0!r}) and op1 ({op1!r}) must both be bitvec or "
                           f"both be arithmetic operators")
    chk.integer_dtypes(fn, alu0, ("data", x), ("dst", d))
    eng = klr_engine(fn, engine, tuple(_Engine))
    _check_tensor_scalar_engine(eng, bitvec, alu0, alu1)
    imm0 = _maybe_unary_operand(fn, "operand0", op0, operand0, x, bitvec)
    imm1 = None if operand1 is None else _maybe_unary_operand(fn, "operand1", op1, operand1, x, bitvec)
    _emit(ast.TensorScalar(_ap(d), _ap(x), imm0, alu0, imm1, alu1, chk.reverse_ops(reverse0, reverse1),
                           eng, klr_dtype(d.dtype)))


def _check_tensor_scalar_engine(eng: ast.Engine, bitvec: bool, alu0: ast.AluOp,
                                alu1: ast.AluOp | None) -> None:
    if eng in (ast.Engine.pe, ast.Engine.dma, ast.Engine.sp):
        raise kernel_error(f"nisa.tensor_scalar: cannot run on engine {eng.name}; use vector, scalar "
                           f"or gpsimd")
    if bitvec and eng not in (ast.Engine.dve, ast.Engine.unassigned):
        raise kernel_error("nisa.tensor_scalar: bitvec operators must run on Vector Engine")
    if eng is ast.Engine.pool and (alu0 is not ast.AluOp.rsqrt or alu1 is not None):
        raise kernel_error("nisa.tensor_scalar: GpSimd Engine is only allowed for nl.rsqrt")
    scalar_pairs = {(ast.AluOp.mult, ast.AluOp.add), (ast.AluOp.mult, None), (ast.AluOp.add, None)}
    if eng is ast.Engine.act and (alu0, alu1) not in scalar_pairs:
        raise kernel_error("nisa.tensor_scalar: Scalar Engine supports op0=nl.multiply with op1=nl.add "
                           "or None, and op0=nl.add with op1=None")


def _maybe_unary_operand(fn: str, arg: str, op: object, value: object, data: NkiTensor,
                         bitvec: bool) -> ast.Operand:
    """A unary op ignores its operand: it "must be None or 0" (NKI docs)."""
    unary = getattr(chk.op_of(fn, arg, op), "unary", False)
    if unary:
        if value not in (None, 0):
            raise kernel_error(f"nisa.{fn}: {arg} must be None or 0 for the unary operator {op!r}")
        return ast.Immediate(0 if bitvec else 0.0)
    return chk.scalar_operand(fn, arg, value, data, integer=bitvec)


@two_forms(legacy.scalar_tensor_tensor)
def scalar_tensor_tensor(dst: object, data: object, op0: object, operand0: object, op1: object,
                         operand1: object, reverse0: bool = False, reverse1: bool = False,
                         name: str | None = None) -> None:
    """dst = (data op0 operand0) op1 operand1; operand0 scalar / [P, 1], operand1 a tile like data."""
    fn = "scalar_tensor_tensor"
    d, x = chk.tile(fn, "dst", dst), chk.tile(fn, "data", data)
    t1 = chk.tile(fn, "operand1", operand1)
    chk.same_elements(fn, ("data", x), ("operand1", t1), ("dst", d))
    chk.not_both_psum(fn, ("data", x), ("operand1", t1))
    alu0 = chk.alu_op(fn, "op0", op0, arithmetic=True, binary=True)
    alu1 = chk.alu_op(fn, "op1", op1, arithmetic=True, binary=True)
    src0 = chk.scalar_operand(fn, "operand0", operand0, x, float32_tile=False)
    _emit(ast.NcScalarTensorTensor(_ap(d), _ap(x), src0, _ap(t1), alu0, alu1,
                                   chk.reverse_ops(reverse0, reverse1), klr_dtype(d.dtype)))


@two_forms(legacy.tensor_tensor_scan)
def tensor_tensor_scan(dst: object, data0: object, data1: object, initial: object, op0: object,
                       op1: object, reverse0: bool = False, reverse1: bool = False,
                       name: str | None = None) -> None:
    """r[i] = op1(op0(data0[i], r[i-1]), data1[i]) per partition, r[-1] = initial."""
    fn = "tensor_tensor_scan"
    d, a, b = chk.tile(fn, "dst", dst), chk.tile(fn, "data0", data0), chk.tile(fn, "data1", data1)
    chk.same_elements(fn, ("data0", a), ("data1", b), ("dst", d))
    chk.not_both_psum(fn, ("data0", a), ("data1", b))
    alu0 = chk.alu_op(fn, "op0", op0, arithmetic=True, binary=True)
    alu1 = chk.alu_op(fn, "op1", op1, arithmetic=True, binary=True)
    imm0 = chk.scalar_operand(fn, "initial", initial, a, float32_tile=False)
    _emit(ast.TensorTensorScan(_ap(d), _ap(a), _ap(b), alu0, alu1, chk.reverse_ops(reverse0, reverse1),
                               imm0, ast.AccumCmd.Idle, klr_dtype(d.dtype)))


# The reduction and activation families live in their own modules; nki.isa exports them all.
from tilecc.nki.isa_activation import (activate2, activation, activation_reduce,  # noqa: E402
                                       exponential, reciprocal)
from tilecc.nki.isa_reduce import (tensor_partition_reduce, tensor_reduce,  # noqa: E402
                                   tensor_scalar_cumulative, tensor_scalar_reduce)
from tilecc.nki.isa_tensor_engine import matmul_perf_mode, nc_matmul, nc_transpose  # noqa: E402
from tilecc.nki.isa_dma import dma_transpose  # noqa: E402
from tilecc.nki.isa_dynamic import tensor_copy_dynamic_dst, tensor_copy_dynamic_src  # noqa: E402
from tilecc.nki.isa_vector import (affine_select, bn_aggr, bn_stats, range_select,  # noqa: E402
                                   select_reduce, tensor_copy_predicated)
from tilecc.nki.isa_topk import max8, nc_find_index8, nc_match_replace8  # noqa: E402
from tilecc.nki.isa_movement import (local_gather, nc_n_gather, nc_stream_shuffle,  # noqa: E402
                                     nonzero_with_count, sequence_bounds)
from tilecc.nki.isa_target import get_nc_sub_version, get_nc_version, nc_version  # noqa: E402
from tilecc.nki.isa_random import (dropout, rand2, rand_get_state, rand_set_state, rng,  # noqa: E402
                                   set_rng_seed)

# the instructions the Tensor Engine helpers below this module build identities and casts
# with (tilecc/nki/isa_tensor_engine.py), reached through tilecc/nki/operators.py
for _name in ("tensor_copy", "iota", "tensor_scalar"):
    install(f"nisa.{_name}", globals()[_name])

__all__ = [
    "engine", "reduce_cmd", "dge_mode", "oob_mode", "tensor_engine", "vector_engine", "scalar_engine",
    "gpsimd_engine", "unknown_engine", "dma_copy", "tensor_copy", "memset", "iota", "tensor_tensor",
    "tensor_scalar", "scalar_tensor_tensor", "tensor_tensor_scan", "activation", "activation_reduce",
    "activate2", "exponential", "reciprocal", "tensor_reduce", "tensor_partition_reduce",
    "tensor_scalar_reduce", "tensor_scalar_cumulative", "matmul_perf_mode", "nc_matmul",
    "nc_transpose", "dma_transpose", "tensor_copy_dynamic_src", "tensor_copy_dynamic_dst",
    "bn_stats", "bn_aggr", "select_reduce", "tensor_copy_predicated", "affine_select", "range_select",
    "max8", "nc_find_index8", "nc_match_replace8", "nc_stream_shuffle", "nc_n_gather", "local_gather",
    "sequence_bounds", "nonzero_with_count", "rng", "rand2", "dropout", "set_rng_seed", "rand_set_state", "rand_get_state",
    "nc_version", "get_nc_version", "get_nc_sub_version",
]

# NKI instructions tilecc does not trace yet, and those it refuses (tilecc/nki/isa_refused.py):
# calling one is a KernelError at the kernel line (not an AttributeError), so a ported
# kernel learns which call to replace.
_NOT_TRACED = frozenset({
    "nc_matmul_mx", "quantize_mx", "topk",
})


MX_FAMILY = frozenset({"nc_matmul_mx", "quantize_mx"})


def __getattr__(name: str) -> Callable[..., None]:
    reason = refusal(name)
    if name not in _NOT_TRACED and reason is None:
        raise AttributeError(f"module 'tilecc.nki.isa' has no attribute {name!r}")

    def not_traced(*args: object, **kwargs: object) -> None:
        if name in MX_FAMILY:
            raise kernel_error(f"nisa.{name} is not supported by tilecc: the MX quantized family "
                               f"(nc_matmul_mx, quantize_mx and the x4 packed dtypes) is not "
                               f"simulated")
        raise kernel_error(reason or f"nisa.{name} is not supported by tilecc yet")
    return not_traced
