"""`nisa.nc_matmul` and `nisa.nc_transpose` for tilecc, traced to KLR NcMatMul / Transpose.

Contract: the NKI 2.x signatures and defaults (aws-neuron-sdk nki/api/nki/isa/__init__.py;
https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/api/generated/nki.isa.nc_matmul.html
and .../nki.isa.nc_transpose.html) with `dst=`, and the NKI 1.x tile-returning forms
(`res = nisa.nc_matmul(stationary, moving)`: a new float32 PSUM tile). Checked at trace time,
each failure one located line naming the argument: stationary / moving in SBUF, dst in
PSUM; equal partition counts (the contraction) <= 128 (or the tile's rows); stationary free
size <= 128 (or the tile's columns), moving free size <= 512; dst [M, N]; input dtypes
fp8 / bf16 / fp16 / tf32 / fp32, fp32-class only with fp32-class, legacy e4m3 never with
e4m3fn; dst float32 or bfloat16; tile_position / tile_size both set or both empty, sizes
32 / 64 / 128, positions multiples of them; perf_mode double_row only with fp8 inputs whose
first free dim is 2 and without column tiling.

Accumulation: `accumulate=True` adds into dst, False overwrites, None (the default) is
decided here as NKI's compiler does: accumulate when an earlier instruction of the trace
wrote this same PSUM access, else overwrite (`accumulate=(i > 0)` and a plain loop trace the
same). NKI 1.x `psum += nisa.nc_matmul(a, b)` (and `psum[...] += ...`) turns the matmul that
made the right-hand tile into one that accumulates into `psum` (`add_into`), as the 1.x
compiler fuses it; any other `+=` is the element-wise add it always was.

NKI 1.x forms as published kernels write them: a compile-time `mask=` (True computes, False
skips the call, and `psum += skipped` adds nothing); a mask of grid indices is refused, KLR's
matmul having none. A 1.x operand in PSUM (an nc_transpose result fed to the next matmul) is
first copied to SBUF by the Vector Engine, since the PE reads SBUF. `psum[...] =
nisa.nc_matmul(...)` makes that matmul write the PSUM view itself (`write_into`).

nc_transpose: on the Tensor Engine (data in SBUF, dst in PSUM, [128, 128] at most) it is a
transposing matmul of data (stationary) with an identity (moving) of data's dtype, as the
page says; on the Vector Engine (SBUF or PSUM, [32, 32] at most) KLR Transpose. engine
unknown picks the Vector Engine for tiles of at most 32 x 32, else the Tensor Engine.
"""

from __future__ import annotations

import weakref
from enum import Enum

import numpy as np

from tilecc.klr import ast
from tilecc.nki import operands as chk
from tilecc.nki.dtypes import canonical_dtype
from tilecc.nki.errors import kernel_error
from tilecc.nki.operators import install, installed
from tilecc.nki.isa_enums import engine
from tilecc.nki.isa_legacy import two_forms
from tilecc.nki.tensor import NkiTensor
from tilecc.nki.tracer import Trace, active_trace, assigned_name, klr_dtype

FP8 = ("float8_e4m3", "float8_e5m2", "float8_e4m3fn")
MATMUL_INPUTS = (*FP8, "bfloat16", "float16", "tfloat32", "float32")
FP32_CLASS = ("float32", "tfloat32")
TILE_SIZES = (32, 64, 128)


class matmul_perf_mode(Enum):  # noqa: N801 (NKI's name)
    """nc_matmul's perf_mode: none, or double_row (fp8 operands of [K, 2, ...])."""

    none = "none"
    double_row = "double_row"


# NKI 1.x spelled the mode as a string; "double_row_gen3" is the NeuronCore-v3 double-FP8 mode
LEGACY_PERF_MODES = {"none": matmul_perf_mode.none, "double_row": matmul_perf_mode.double_row,
                     "double_row_gen3": matmul_perf_mode.double_row}


class _TraceState:
    """Per trace: the PSUM accesses some instruction wrote (scanned from the body as it
    grows), and the last tile-returning matmul with the tile it made."""

    def __init__(self) -> None:
        self.scanned = 0
        self.written: set[object] = set()
        self.fresh: tuple[ast.NcMatMul, NkiTensor] | None = None

    def was_written(self, trace: Trace, access: object) -> bool:
        for stmt in trace.body[self.scanned:]:
            self.written.add(getattr(stmt, "dst", None))
        self.scanned = len(trace.body)
        return access in self.written


_STATES: weakref.WeakKeyDictionary[Trace, _TraceState] = weakref.WeakKeyDictionary()


def _state(trace: Trace) -> _TraceState:
    if (state := _STATES.get(trace)) is None:
        state = _STATES[trace] = _TraceState()
    return state


# ---------------------------------------------------------------- nc_matmul

def _constant_mask(fn: str, mask: object) -> None:
    """A Tensor Engine call takes a compile-time mask (`mask=i * 128 >= j * 512` of loop
    ints): True computes, False skips the call (isa_legacy.two_forms); KLR's matmul has no
    mask, so a mask of grid indices is refused."""
    if mask is not None and not isinstance(mask, (bool, np.bool_)):
        raise kernel_error(f"nisa.{fn}: mask= of grid indices is not supported on the Tensor "
                           f"Engine (KLR's matmul takes no mask); slice the operands instead")


def _sbuf_operand(arg: str, value: object) -> NkiTensor:
    """A 1.x matmul operand; a PSUM tile (an nc_transpose result, as NKI 1.x kernels pass
    it) is first copied to a new SBUF tile by the Vector Engine, since the PE reads SBUF."""
    tile = chk.tile("nc_matmul", arg, value, ("sbuf", "psum"))
    if tile.buffer == "sbuf":
        return tile
    trace = active_trace()
    staged = trace.allocate(tile.shape, tile.dtype, "sbuf", assigned_name())
    trace.emit(ast.NcCopy(trace.access(staged), trace.access(tile), klr_dtype(tile.dtype),
                          ast.Engine.dve))
    return staged


def _legacy_matmul(fn: object, stationary: object, moving: object, *,
                   is_stationary_onezero: bool = False, is_moving_onezero: bool = False,
                   is_transpose: bool = False, tile_position: object = (), tile_size: object = (),
                   perf_mode: object = matmul_perf_mode.none, mask: object = None) -> NkiTensor:
    """NKI 1.x: the product in a new PSUM tile (float32; a transpose keeps the dtype)."""
    _constant_mask("nc_matmul", mask)
    st = _sbuf_operand("stationary", stationary)
    mv = _sbuf_operand("moving", moving)
    double = LEGACY_PERF_MODES.get(perf_mode, perf_mode) is matmul_perf_mode.double_row \
        if isinstance(perf_mode, str) else perf_mode is matmul_perf_mode.double_row
    m = st.free_elements // (2 if double else 1)
    n = mv.free_elements // (2 if double else 1)
    trace = active_trace()
    out = trace.allocate((m, n), st.dtype if is_transpose else "float32", "psum",
                         assigned_name() or "psum")
    emitted = len(trace.body)
    nc_matmul(out, st, mv, is_stationary_onezero, is_moving_onezero, is_transpose, False,
              tile_position, tile_size, perf_mode)
    if len(trace.body) > emitted and isinstance(stmt := trace.body[-1], ast.NcMatMul):
        _state(trace).fresh = (stmt, out)   # (nothing is emitted under a False mask)
    return out


@two_forms(_legacy_matmul)
def nc_matmul(dst: object, stationary: object, moving: object, is_stationary_onezero: bool = False,
              is_moving_onezero: bool = False, is_transpose: bool = False, accumulate: object = None,
              tile_position: object = (), tile_size: object = (),
              perf_mode: matmul_perf_mode = matmul_perf_mode.none, name: str | None = None) -> None:
    """dst = stationary.T @ moving on the Tensor Engine (module docstring)."""
    fn = "nc_matmul"
    d = chk.tile(fn, "dst", dst, ("psum",))
    st = chk.tile(fn, "stationary", stationary, ("sbuf",))
    mv = chk.tile(fn, "moving", moving, ("sbuf",))
    position, size = _tiling(tile_position, tile_size)
    perf_mode = LEGACY_PERF_MODES.get(perf_mode, perf_mode) if isinstance(perf_mode, str) \
        else perf_mode
    if not isinstance(perf_mode, matmul_perf_mode):
        raise kernel_error(f"nisa.nc_matmul: perf_mode must be nisa.matmul_perf_mode.none or "
                           f".double_row, got {perf_mode!r}")
    double = perf_mode is matmul_perf_mode.double_row
    rows, cols = size or (128, 128)
    chk.same_partitions(fn, ("stationary", st), ("moving", mv))
    if st.partitions > rows:
        raise kernel_error(f"nisa.nc_matmul: the contraction (partition) size {st.partitions} "
                           f"exceeds {rows}; accumulate several matmuls into one PSUM tile for "
                           f"a longer contraction")
    m, n = _free_sizes(st, mv, double)
    if m > min(128, cols):
        raise kernel_error(f"nisa.nc_matmul: stationary free size {m} exceeds {min(128, cols)}")
    if n > 512:
        raise kernel_error(f"nisa.nc_matmul: moving free size {n} exceeds 512 (one PSUM bank "
                           f"of float32)")
    if d.partitions != m or d.free_elements != n:
        raise kernel_error(f"nisa.nc_matmul: dst {list(d.shape)} must be [{m}, {n}] "
                           f"(stationary free size x moving free size)")
    _check_dtypes(st.dtype, mv.dtype, d.dtype, is_transpose, double, cols)
    _check_one_bank(d)
    if accumulate is not None and not isinstance(accumulate, bool):
        raise kernel_error(f"nisa.nc_matmul: accumulate must be True, False or None, got "
                           f"{accumulate!r}")
    trace = active_trace()
    target = trace.access(d)
    if accumulate is None:
        accumulate = _state(trace).was_written(trace, target)
    perf = ast.MatmulPerfMode.DoubleRow if double else ast.MatmulPerfMode.None_
    trace.emit(ast.NcMatMul(target, trace.access(st), trace.access(mv), bool(is_stationary_onezero),
                            bool(is_moving_onezero), bool(is_transpose), position, size, perf,
                            accumulate))


def _check_one_bank(d: NkiTensor) -> None:
    """The output's bytes lie in one 2 KiB PSUM bank of its tile (a tile larger than a bank
    starts on one: sim/psum_banks.py)."""
    from tilecc.nki.dtypes import dtype_info
    size = dtype_info(d.dtype).size
    par = d.par_index
    free = [dim for i, dim in enumerate(d.dims) if i != par]
    low = d.offset + sum(min(0, dim.step * (dim.num - 1)) for dim in free)
    high = d.offset + sum(max(0, dim.step * (dim.num - 1)) for dim in free)
    if (low * size) // 2048 != ((high + 1) * size - 1) // 2048:
        raise kernel_error(f"nisa.nc_matmul: dst {d!r} covers bytes {low * size}..{(high + 1) * size - 1} "
                           f"of each PSUM partition, across a 2 KiB bank; an accumulation group "
                           f"lives in one bank")


def _free_sizes(st: NkiTensor, mv: NkiTensor, double: bool) -> tuple[int, int]:
    if not double:
        return st.free_elements, mv.free_elements
    for what, t in (("stationary", st), ("moving", mv)):
        if t.ndim < 3 or t.shape[1] != 2:
            raise kernel_error(f"nisa.nc_matmul: perf_mode double_row needs {what} of shape "
                               f"[K, 2, ...], got {list(t.shape)}")
    return st.free_elements // 2, mv.free_elements // 2


def _tiling(position: object, size: object) -> tuple[tuple[int, ...], tuple[int, ...]]:
    pos, sz = tuple(position) if isinstance(position, (list, tuple)) else position, \
        tuple(size) if isinstance(size, (list, tuple)) else size
    if pos == () and sz == ():
        return (), ()
    if not (isinstance(pos, tuple) and isinstance(sz, tuple) and len(pos) == len(sz) == 2
            and all(isinstance(v, int) for v in (*pos, *sz))):
        raise kernel_error(f"nisa.nc_matmul: tile_position and tile_size must both be set, as "
                           f"(row, column) int pairs, got {position!r} and {size!r}")
    for what, start, extent in (("row", pos[0], sz[0]), ("column", pos[1], sz[1])):
        if extent not in TILE_SIZES:
            raise kernel_error(f"nisa.nc_matmul: tile_size {what} {extent} must be 32, 64 or 128")
        if start % extent or not 0 <= start < 128:
            raise kernel_error(f"nisa.nc_matmul: tile_position {what} {start} must be a multiple "
                               f"of {extent} below 128")
    return pos, sz


def _check_dtypes(st: str, mv: str, dst: str, transpose: bool, double: bool, cols: int) -> None:
    if transpose:
        if dst != st:
            raise kernel_error(f"nisa.nc_matmul: a transpose keeps the dtype: dst is {dst}, "
                               f"stationary {st}")
        return
    for what, dtype in (("stationary", st), ("moving", mv)):
        if dtype not in MATMUL_INPUTS:
            raise kernel_error(f"nisa.nc_matmul: {what} dtype {dtype} is not one of "
                               f"{', '.join(MATMUL_INPUTS)}")
    if (st in FP32_CLASS) != (mv in FP32_CLASS):
        raise kernel_error(f"nisa.nc_matmul: a tfloat32 / float32 input needs a tfloat32 / "
                           f"float32 partner, got {st} and {mv}")
    if {st, mv} == {"float8_e4m3", "float8_e4m3fn"}:
        raise kernel_error("nisa.nc_matmul: float8_e4m3 and float8_e4m3fn cannot be mixed")
    if double and not (st in FP8 and mv in FP8):
        raise kernel_error(f"nisa.nc_matmul: perf_mode double_row needs fp8 inputs, got {st} "
                           f"and {mv}")
    if double and cols != 128:
        raise kernel_error("nisa.nc_matmul: perf_mode double_row cannot be combined with column "
                           "tiling")
    if dst not in ("float32", "bfloat16"):
        raise kernel_error(f"nisa.nc_matmul: dst must be float32 or bfloat16, got {dst}")


def write_into(target: NkiTensor, value: object) -> bool:
    """`psum_view[...] = nisa.nc_matmul(...)` (1.x): the matmul that made `value` writes
    `target` itself (overwriting), as the 1.x compiler places it, instead of a PSUM tile
    copied after; False when `value` is not that fresh product."""
    trace = active_trace()
    state = _state(trace)
    fresh = state.fresh
    if (fresh is None or not isinstance(value, NkiTensor) or target.buffer != "psum"
            or not trace.body or trace.body[-1] is not fresh[0] or value is not fresh[1]
            or target.dtype != value.dtype):
        return False
    stmt, made = fresh
    chk.same_elements("nc_matmul", ("the assigned view", target), ("the product", made))
    access = trace.access(target)
    state.was_written(trace, access)
    stmt.dst, stmt.accumulate = access, False
    state.written.add(access)
    state.fresh = None
    return True


def add_into(target: NkiTensor, value: object) -> NkiTensor:
    """`target += value` (module docstring)."""
    if isinstance(value, NkiTensor) and value.alloc.masked_off:
        return target   # the product of a call a compile-time False mask skipped
    trace = active_trace()
    state = _state(trace)
    fresh = state.fresh
    if (fresh is not None and isinstance(value, NkiTensor) and target.buffer == "psum"
            and trace.body and trace.body[-1] is fresh[0] and value is fresh[1]):
        stmt, made = fresh
        chk.same_elements("nc_matmul", ("the += target", target), ("the product", made))
        access = trace.access(target)
        stmt.dst, stmt.accumulate = access, state.was_written(trace, access)
        state.written.add(access)   # the scan saw this matmul's own tile as its dst
        state.fresh = None
        return target
    return target + value


# ---------------------------------------------------------------- nc_transpose

def _legacy_transpose(fn: object, data: object, *, mask: object = None, dtype: object = None,
                      engine: engine = engine.unknown) -> NkiTensor:
    """NKI 1.x: the transpose in a new tile (PSUM from the Tensor Engine, else SBUF)."""
    _constant_mask("nc_transpose", mask)
    x = chk.tile("nc_transpose", "data", data)
    on_pe = _transpose_engine(x, None, engine) is ast.Engine.pe
    out = active_trace().allocate((x.free_elements, x.partitions), x.dtype,
                                  "psum" if on_pe else "sbuf", assigned_name())
    nc_transpose(out, x, engine=_Engine.tensor if on_pe else _Engine.vector)
    if dtype is None or canonical_dtype(dtype) == out.dtype:
        return out
    # 1.x dtype=: "an additional cast" into a new SBUF tile
    converted = active_trace().allocate(out.shape, canonical_dtype(dtype), "sbuf", assigned_name())
    installed("nisa.tensor_copy")(dst=converted, src=out)
    return converted


_Engine = engine


@two_forms(_legacy_transpose)
def nc_transpose(dst: object, data: object, engine: engine = engine.unknown,
                 name: str | None = None) -> None:
    """dst = data with its partition and (flattened) free axes swapped (module docstring)."""
    fn = "nc_transpose"
    d, x = chk.tile(fn, "dst", dst), chk.tile(fn, "data", data)
    if d.partitions != x.free_elements or d.free_elements != x.partitions:
        raise kernel_error(f"nisa.nc_transpose: dst {list(d.shape)} must be [{x.free_elements}, "
                           f"{x.partitions}], the transpose of data {list(x.shape)}")
    if d.dtype != x.dtype:
        raise kernel_error(f"nisa.nc_transpose: dst dtype {d.dtype} must be data's {x.dtype}")
    trace = active_trace()
    if _transpose_engine(x, d, engine) is ast.Engine.dve:
        trace.emit(ast.Transpose(trace.access(d), trace.access(x), klr_dtype(d.dtype),
                                 ast.Engine.dve))
        return
    identity = identity_tile(x.partitions, x.dtype)
    nc_matmul(d, x, identity, is_moving_onezero=True, is_transpose=True, accumulate=False)


def _transpose_engine(x: NkiTensor, d: NkiTensor | None, eng: object) -> ast.Engine:
    small = x.partitions <= 32 and x.free_elements <= 32
    if eng is _Engine.unknown:
        eng = _Engine.vector if small and (d is None or d.buffer != "psum" or x.buffer != "sbuf") \
            else _Engine.tensor
    if eng is _Engine.vector:
        if not small:
            raise kernel_error(f"nisa.nc_transpose: the Vector Engine transposes at most 32 x 32, "
                               f"data is {x.partitions} x {x.free_elements}")
        return ast.Engine.dve
    if eng is not _Engine.tensor:
        raise kernel_error(f"nisa.nc_transpose: engine must be nisa.engine.tensor, .vector or "
                           f".unknown, got {eng!r}")
    if x.buffer != "sbuf" or (d is not None and d.buffer != "psum"):
        raise kernel_error("nisa.nc_transpose: the Tensor Engine reads data from SBUF and writes "
                           "dst to PSUM")
    if x.partitions > 128 or x.free_elements > 128:
        raise kernel_error(f"nisa.nc_transpose: the Tensor Engine transposes at most 128 x 128, "
                           f"data is {x.partitions} x {x.free_elements}")
    return ast.Engine.pe


_IDENTITIES: weakref.WeakKeyDictionary[Trace, dict[tuple[int, str], NkiTensor]] = \
    weakref.WeakKeyDictionary()


def identity_tile(n: int, dtype: str) -> NkiTensor:
    """The trace's [n, n] SBUF identity of `dtype`, made once (iota of f - p, then == 0),
    as NKI shares identity matrices of one dtype."""
    from tilecc.nki.ops import ALL_OPS
    trace = active_trace()
    cache = _IDENTITIES.setdefault(trace, {})
    if (found := cache.get((n, dtype))) is not None:
        return found
    index = trace.allocate((n, n), "int32", "sbuf", "identity_index")
    installed("nisa.iota")(index, [[1, n]], 0, -1)
    eye = trace.allocate((n, n), dtype, "sbuf", f"identity_{dtype}")
    installed("nisa.tensor_scalar")(eye, index, ALL_OPS["equal"], 0.0)
    cache[(n, dtype)] = eye
    return eye


# the operator behind `psum += ...` on the plain-data tensor (tilecc/nki/operators.py)
install("add_into", add_into)
