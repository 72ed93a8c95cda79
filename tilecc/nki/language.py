"""`nki.language` for tilecc: dtypes, buffers, tensor allocation, index grids and op names.

Contract: the names a kernel written against the public NKI API uses from `nl`
(`import tilecc.nki.language as nl`): dtypes (`nl.float32`, `nl.bfloat16`, `nl.float8_e4m3`
...; a dtype is its name as a str, numpy dtypes are accepted wherever a dtype is), buffers
(`nl.sbuf`, `nl.psum`, `nl.hbm`, `nl.shared_hbm`, `nl.private_hbm`), `nl.ndarray` /
`nl.zeros` / `nl.full` / `nl.empty_like`, `nl.par_dim`, `nl.tile_size.pmax == 128`,
`nl.arange` / `nl.mgrid` / `nl.ds` indices, the loop ranges (unrolled while tracing),
`nl.load` / `nl.store` (DMA copies; `mask=` restricts them to its box) and the operator
names (`nl.add`, `nl.exp` ...) that nki.isa instructions take as `op` arguments; called on
tiles they, `nl.sum` / `nl.max` / `nl.min` / `nl.prod` / `nl.mean` / `nl.var`, `nl.negative`,
`nl.logical_not` and `nl.broadcast_to` are NKI's tile-level API (tilecc/nki/tile_ops.py);
`nl.program_id` / `nl.num_programs` / `nl.program_ndim` read the SPMD launch grid, whose
`nl.nc` / `nl.spmd_dim` core annotations only count programs (one simulated core); `nl.where`,
`nl.floor` ... (tilecc/nki/language_math.py) and `nl.rand` / `nl.dropout` / `nl.device_print`
(tilecc/nki/isa_random.py) are re-exported. Each call records KLR statements in the active
trace (tilecc/nki/tracer.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from tilecc.klr import ast
from tilecc.nki import ops as _ops
from tilecc.nki.dtypes import canonical_dtype, dtype_info, plain_number
from tilecc.nki.errors import kernel_error
from tilecc.nki.tensor import PMAX, NkiTensor, mask_tile
from tilecc.nki import isa, masking, tile_ops
from tilecc.nki.block_tensor import BlockTensor
from tilecc.nki.shapes import new_tensor, par_dim, parse_dtype
from tilecc.nki.tracer import (active_trace, assigned_name, klr_dtype, masked_off,
                               skip_masked_off)

# ---------------------------------------------------------------- dtypes and buffers

class _Dtype(str):
    """An nl dtype: its canonical name (a str, so it works wherever a dtype name does);
    calling it makes a compile-time scalar of that type, as `nl.float32(0.0)` does in NKI;
    `.min` / `.max` / `.bits` / `.itemsize` are the type's range and width (`nl.fp32.min`)."""

    def __call__(self, value: int | float) -> int | float:
        return float(value) if dtype_info(self).is_float else int(value)

    @property
    def min(self) -> int | float:
        """The most negative finite value."""
        return plain_number(_limits(self).min)  # type: ignore[return-value]

    @property
    def max(self) -> int | float:
        """The largest finite value."""
        return plain_number(_limits(self).max)  # type: ignore[return-value]

    @property
    def bits(self) -> int:
        return dtype_info(self).size * 8

    @property
    def itemsize(self) -> int:
        return dtype_info(self).size


def _limits(dtype: str) -> Any:
    """numpy / ml_dtypes finfo or iinfo of an nl dtype (bool_: 0..1)."""
    host = dtype_info(canonical_dtype(dtype)).numpy
    return ml_dtypes.finfo(host) if dtype_info(canonical_dtype(dtype)).is_float else np.iinfo(host)


def finfo(dtype: object) -> Any:
    """Limits of a float dtype (numpy's finfo, ml_dtypes' for bf16 / fp8): .min .max .eps ..."""
    name = parse_dtype(dtype)
    if not dtype_info(name).is_float:
        raise kernel_error(f"nl.finfo: {name} is not a float dtype (nl.iinfo takes integers)")
    return _limits(name)


def iinfo(dtype: object) -> Any:
    """Limits of an integer dtype (numpy's iinfo): .min .max .bits."""
    name = parse_dtype(dtype)
    if dtype_info(name).is_float:
        raise kernel_error(f"nl.iinfo: {name} is a float dtype (nl.finfo takes floats)")
    return _limits(name)


class NKIObject:
    """NKI's base class for compile-time helper objects (the nki-library's TensorView,
    TiledRange, allocators subclass it): a plain Python object while tracing."""


bool_ = _Dtype("bool_")
int8, int16, int32 = _Dtype("int8"), _Dtype("int16"), _Dtype("int32")
uint8, uint16, uint32 = _Dtype("uint8"), _Dtype("uint16"), _Dtype("uint32")
float16, float32, bfloat16, tfloat32 = (_Dtype("float16"), _Dtype("float32"), _Dtype("bfloat16"),
                                        _Dtype("tfloat32"))
float8_e4m3, float8_e5m2, float8_e4m3fn = (_Dtype("float8_e4m3"), _Dtype("float8_e5m2"),
                                           _Dtype("float8_e4m3fn"))

fp32 = _Dtype("float32")

sbuf, psum, hbm = "sbuf", "psum", "hbm"
shared_hbm, private_hbm = "shared_hbm", "private_hbm"


class tile_size:  # noqa: N801 (NKI's name)
    """Tile size constants (NKI nl.tile_size)."""
    pmax = PMAX
    psum_fmax = 512
    gemm_stationary_fmax = 128
    gemm_moving_fmax = 512
    bn_stats_fmax = 512


# ---------------------------------------------------------------- allocation

def ndarray(shape: object, dtype: object, buffer: object = None, name: str = "") -> NkiTensor:
    """A new tensor of `shape` and `dtype` in `buffer` (default nl.sbuf); without a name it
    is named after the variable it is assigned to (`row_max = nl.ndarray(...)`)."""
    return new_tensor(shape, dtype, buffer, name or assigned_name())


def full(shape: object, fill_value: int | float, dtype: object, buffer: object = None,
         name: str = "", lazy_initialization: bool = False) -> NkiTensor:
    """A new on-chip tensor filled with `fill_value` (one MemSet). NKI 1.x's
    `lazy_initialization` lets its compiler place the fill later; the values are the same."""
    tensor = ndarray(shape, dtype, buffer, name)
    tiles = tensor.all_blocks() if isinstance(tensor, BlockTensor) else [tensor]
    if not tiles[0].alloc.on_chip:
        raise kernel_error("nl.zeros / nl.full allocate on chip (nl.sbuf or nl.psum)")
    trace = active_trace()
    value = ast.Immediate(int(fill_value) if tensor.dtype.startswith(("int", "uint")) else float(fill_value))
    for tile in tiles:   # a tensor kept as one tile per block fills each block
        trace.emit(ast.MemSet(trace.access(tile), value, klr_dtype(tile.dtype)))
    return tensor


def zeros(shape: object, dtype: object, buffer: object = None, name: str = "",
          lazy_initialization: bool = False) -> NkiTensor:
    """A new on-chip tensor of zeros (one MemSet)."""
    return full(shape, 0, dtype, buffer, name)


def ones(shape: object, dtype: object, buffer: object = None, name: str = "",
         lazy_initialization: bool = False) -> NkiTensor:
    """A new on-chip tensor of ones (one MemSet)."""
    return full(shape, 1, dtype, buffer, name)


def empty_like(tensor: NkiTensor, dtype: object = None, buffer: object = None,
               name: str = "") -> NkiTensor:
    """A new tensor of `tensor`'s shape (its dtype and buffer unless given); nothing written."""
    return ndarray(tensor.shape, tensor.dtype if dtype is None else dtype,
                   tensor.buffer if buffer is None else buffer, name)


def load(src: NkiTensor, dtype: object = None, mask: object = None) -> NkiTensor:
    """Copy an HBM tensor (view) into a new SBUF tile of the same shape (one DMA copy); with
    a mask only its box is copied, and the tile holds values there only (tilecc/nki/masking.py)."""
    if not isinstance(src, NkiTensor):
        raise kernel_error(f"nl.load reads a tensor, got {src!r}")
    if masked_off(mask):
        # nothing is read, so an access reaching outside src (the tile past a ragged end that
        # the compile-time False mask skips) is no error
        return skip_masked_off(lambda: masking.result_tile(
            src.shape, parse_dtype(src.dtype if dtype is None else dtype), assigned_name(), None)[0])
    box = masking.call_box("nl.load", mask, src)
    tile, dst = masking.result_tile(src.shape, parse_dtype(src.dtype if dtype is None else dtype),
                                    assigned_name(), box)
    isa.dma_copy(dst=dst, src=masking.cut(src, box, src.shape))
    return tile


def store(dst: NkiTensor, value: object, mask: object = None) -> None:
    """Copy a tile into an HBM tensor (view) of the same number of elements (one DMA copy);
    a mask restricts both to its box. A number as `value` fills dst (a memset, then the copy)."""
    if not isinstance(dst, NkiTensor):
        raise kernel_error(f"nl.store writes a tensor, got {dst!r}")
    if masked_off(mask) or (isinstance(value, NkiTensor) and value.alloc.masked_off):
        return   # the store (or the instruction that made its value) is masked off
    number = plain_number(value)
    if isinstance(number, (int, float)) and not isinstance(number, bool):
        # storing a number fills dst (NKI: "effectively a memset"): a filled tile, one copy
        filled = full(dst.shape, number, dst.dtype, name=assigned_name() or "stored")
        return store(dst, filled, mask)
    if mask is not None:
        dst = dst.masked(mask, "nl.store")
        value = mask_tile("nl.store", value, mask)
    if isinstance(value, NkiTensor) and value.buffer == "psum":
        value = stage_psum(value)   # NKI 1.x stores a matmul result straight from PSUM
    isa.dma_copy(dst=dst, src=value)


def atomic_rmw(dst: NkiTensor, value: object, op: object, mask: object = None) -> None:
    """dst = op(dst, value) in HBM, atomically (nki.language.atomic_rmw.html): one DMA that
    adds into dst (NKI's one DMA compute op is an add), a scatter-add when dst is indexed by
    a tile of row numbers; another op is a located KernelError."""
    if not isinstance(dst, NkiTensor) or dst.alloc.on_chip:
        raise kernel_error(f"nl.atomic_rmw updates an HBM tensor, got {dst!r}")
    found = _ops.resolve_op(op)
    if found is None or found.alu != "add":
        raise kernel_error(f"nl.atomic_rmw: op must be an add (np.add, nl.add), the DMA's one "
                           f"compute op, got {op!r}")
    isa.dma_copy(dst=dst, src=value, dst_rmw_op=op, mask=mask)


# ---------------------------------------------------------------- tile-level reductions

_FOLD_OPS = {"sum": "add", "max": "maximum", "min": "minimum", "prod": "multiply"}


def _reduction(kind: str) -> Callable[..., NkiTensor]:
    def reduction(x: NkiTensor, axis: object, dtype: object = None, keepdims: bool = False,
                  mask: object = None) -> NkiTensor:
        return tile_ops.reduce(kind, x, axis, dtype, keepdims, mask, assigned_name())
    reduction.__name__ = reduction.__qualname__ = kind
    reduction.nki_op = _FOLD_OPS.get(kind)  # type: ignore[attr-defined]  # op=nl.max: resolve_op
    reduction.__doc__ = f"nl.{kind}(x, axis, dtype=None, keepdims=False, mask=None): a new tile."
    # where an instruction takes an ALU operator, nl.max means nl.maximum (op1=nl.max)
    reduction.nki_op = _ops.REDUCTION_ALU.get(kind)  # type: ignore[attr-defined]
    return reduction


sum = _reduction("sum")  # noqa: A001 (NKI's names)
max = _reduction("max")  # noqa: A001
min = _reduction("min")  # noqa: A001
prod = _reduction("prod")
mean = _reduction("mean")


def var(x: NkiTensor, axis: object, dtype: object = None, mask: object = None) -> NkiTensor:
    """Population variance over `axis` (numpy's var): mean((x - mean(x))^2), as a [P, 1]
    column or the shape nl.mean gives."""
    centered = tile_ops.binary(_OPS["subtract"], x, mean(x, axis, mask=mask), None, "centered")
    squared = tile_ops.unary(_OPS["square"], centered, None, "squared")
    return tile_ops.reduce("mean", squared, axis, dtype, False, None, assigned_name())


def negative(x: NkiTensor, dtype: object = None, mask: object = None) -> NkiTensor:
    """-x, element-wise (tensor_scalar multiply by -1)."""
    return tile_ops.apply(_OPS["multiply"], (x, -1.0), {"dtype": dtype, "mask": mask}, assigned_name())


def logical_not(x: NkiTensor, dtype: object = bool_, mask: object = None) -> NkiTensor:
    """1 where x == 0 else 0, element-wise (tensor_scalar equal 0)."""
    return tile_ops.apply(_OPS["equal"], (x, 0.0), {"dtype": dtype, "mask": mask}, assigned_name())


def zeros_like(x: NkiTensor, dtype: object = None, buffer: object = None, name: str = "") -> NkiTensor:
    """A new on-chip tensor of zeros in `x`'s shape (and dtype unless given)."""
    return full(x.shape, 0, x.dtype if dtype is None else dtype, buffer, name or assigned_name())


def ones_like(x: NkiTensor, dtype: object = None, buffer: object = None, name: str = "") -> NkiTensor:
    """A new on-chip tensor of ones in `x`'s shape (and dtype unless given)."""
    return full(x.shape, 1, x.dtype if dtype is None else dtype, buffer, name or assigned_name())


def broadcast_to(x: NkiTensor, shape: tuple[int, ...] | list[int]) -> NkiTensor:
    """`x` with its size-1 dims repeated to `shape` (NkiTensor.broadcast_to)."""
    if not isinstance(x, NkiTensor):
        raise kernel_error(f"nl.broadcast_to: expected a tensor, got {x!r}")
    return x.broadcast_to(shape)


# ---------------------------------------------------------------- operator names

_OPS = _ops.ALL_OPS
add = _OPS["add"]
subtract = _OPS["subtract"]
multiply = _OPS["multiply"]
divide = _OPS["divide"]
maximum = _OPS["maximum"]
minimum = _OPS["minimum"]
power = _OPS["power"]
fmod = _OPS["fmod"]
mod = _OPS["mod"]
average = _OPS["average"]
bypass = _OPS["bypass"]
equal = _OPS["equal"]
not_equal = _OPS["not_equal"]
greater = _OPS["greater"]
greater_equal = _OPS["greater_equal"]
less = _OPS["less"]
less_equal = _OPS["less_equal"]
logical_and = _OPS["logical_and"]
logical_or = _OPS["logical_or"]
logical_xor = _OPS["logical_xor"]
bitwise_and = _OPS["bitwise_and"]
bitwise_or = _OPS["bitwise_or"]
bitwise_xor = _OPS["bitwise_xor"]
invert = _OPS["invert"]
bitwise_not = _OPS["bitwise_not"]
left_shift = _OPS["left_shift"]
right_shift = _OPS["right_shift"]
abs = _OPS["abs"]
rsqrt = _OPS["rsqrt"]
exp = _OPS["exp"]
log = _OPS["log"]
tanh = _OPS["tanh"]
sigmoid = _OPS["sigmoid"]
relu = _OPS["relu"]
gelu = _OPS["gelu"]
gelu_apprx_tanh = _OPS["gelu_apprx_tanh"]
gelu_apprx_sigmoid = _OPS["gelu_apprx_sigmoid"]
gelu_dx = _OPS["gelu_dx"]
gelu_apprx_sigmoid_dx = _OPS["gelu_apprx_sigmoid_dx"]
silu = _OPS["silu"]
silu_dx = _OPS["silu_dx"]
erf = _OPS["erf"]
erf_dx = _OPS["erf_dx"]
mish = _OPS["mish"]
softplus = _OPS["softplus"]
sqrt = _OPS["sqrt"]
square = _OPS["square"]
sin = _OPS["sin"]
arctan = _OPS["arctan"]
sign = _OPS["sign"]
copy = _OPS["copy"]
reciprocal = _OPS["reciprocal"]

from tilecc.nki.language_tensor_engine import (load_transpose2d, matmul,  # noqa: E402,F401
                                               refuse_mx_dtype, shared_constant,
                                               shared_identity_matrix, stage_psum, transpose)

__all__ = [
    "finfo", "iinfo", "NKIObject", "static_cast", "abs_max", "abs_min",
    "par_dim", "bool_", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float16",
    "float32", "bfloat16", "tfloat32", "float8_e4m3", "float8_e5m2", "float8_e4m3fn", "fp32",
    "sbuf", "psum", "hbm", "shared_hbm", "private_hbm", "tile_size", "ndarray", "full", "zeros",
    "ones", "empty_like", "load", "store", "atomic_rmw", "loop_reduce", "arange", "Grid", "mgrid",
    "ds", "affine_range",
    "sequential_range", "static_range", "program_id", "num_programs", "program_ndim", "sum", "max",
    "min", "prod", "mean", "var", "negative", "logical_not", "zeros_like", "ones_like", "nc",
    "spmd_dim", "broadcast_to", "add", "subtract", "multiply", "divide", "maximum", "minimum",
    "power", "fmod", "mod", "average", "bypass", "equal", "not_equal", "greater", "greater_equal",
    "less", "less_equal", "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
    "bitwise_xor", "invert", "bitwise_not", "left_shift", "right_shift", "abs", "rsqrt", "exp",
    "log", "tanh", "sigmoid", "relu", "gelu", "gelu_apprx_tanh", "gelu_apprx_sigmoid", "gelu_dx",
    "gelu_apprx_sigmoid_dx", "silu", "silu_dx", "erf", "erf_dx", "mish", "softplus", "sqrt",
    "square", "sin", "arctan", "sign", "copy", "reciprocal",
    "load_transpose2d", "matmul", "shared_constant", "shared_identity_matrix", "transpose",
]

# The parts of NKI's tile-level API that no spec 003 instruction computes (nl.matmul,
# nl.where ...) are a KernelError at the kernel line.
_TILE_LEVEL = frozenset({
    "expand_dims", "select", "sum_reduce", "all_reduce",
    "dynamic_range",
})

from tilecc.nki.language_grid import (  # noqa: E402,F401
    Grid, affine_range, arange, ds, mgrid, nc, num_programs, program_id, program_ndim,
    sequential_range, spmd_dim, static_range)
from tilecc.nki.language_math import (  # noqa: E402,F401,A004 (lowered to several instructions)
    abs_max, abs_min, all, ceil, cos, floor, gather_flattened, is_hbm, is_on_chip, is_psum,
    is_sbuf, rms_norm, softmax, static_cast, tan, trunc, where)
from tilecc.nki.isa_random import device_print, language_dropout as dropout, rand, random_seed  # noqa: E402,F401
from tilecc.nki.loop_reduce import loop_reduce  # noqa: E402,F401


def __getattr__(name: str) -> object:
    refuse_mx_dtype(name)   # the packed MX dtypes: a located refusal naming the family
    if name not in _TILE_LEVEL:
        raise AttributeError(f"module 'tilecc.nki.language' has no attribute {name!r}")

    def not_traced(*args: object, **kwargs: object) -> None:
        raise kernel_error(f"nl.{name} is not supported by tilecc: no instruction of spec 003 "
                           f"computes it")
    return not_traced

