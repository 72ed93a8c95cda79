"""The nki.language functions that lower to Tensor Engine and transposing DMA instructions.

Contract (NKI API reference pages, https://awsdocs-neuron.readthedocs-hosted.com/en/latest/
nki/api/generated/nki.language.<name>.html; signatures of aws-neuron-sdk
nki/api/nki/language/__init__.py):
- `matmul(x, y, transpose_x=False)`: x @ y in a new float32 PSUM tile. With transpose_x, x
  is already [K, M] and this is one nc_matmul(x, y); without it, x [M, K] is first
  transposed (nc_transpose, then copied to SBUF: "matmul(x, y) lowers to
  nc_matmul(transpose(x), y)").
- `transpose(x, dtype=None)`: nc_transpose of a 2-d tile (PSUM from the Tensor Engine, SBUF
  from the Vector Engine for tiles of at most 32 x 32); a dtype other than x's copies the
  result into a new SBUF tile of that dtype.
- `load_transpose2d(src, dtype=None)`: a 2-d HBM tensor [a, b] into a new SBUF tile
  [b, a] by one dma_transpose (then a converting copy when dtype differs).
- `shared_identity_matrix(n, dtype=uint8)`: the [n, n] identity in SBUF (one per dtype
  and size in a kernel, as NKI shares them).
- `stage_psum(tile)`: what `nl.store` of a PSUM tile does first (NKI 1.x kernels store
  matmul results straight from PSUM): a copy into a new SBUF tile.
- `shared_constant(constant, dtype=None)`: a shared-HBM tensor of the constant, for the
  constants instructions can build (one value everywhere, an identity); other data is a
  located KernelError (a KLR kernel carries no constant data).
Without `mask=` support (a located KernelError): KLR's Tensor Engine instructions take no mask.
"""

from __future__ import annotations

import numpy as np

from tilecc.nki.dtypes import canonical_dtype
from tilecc.nki.errors import kernel_error
from tilecc.nki.isa_tensor_engine import identity_tile
from tilecc.nki.tensor import NkiTensor
from tilecc.nki.tracer import active_trace, assigned_name


def _dtype(fn: str, value: object, default: str) -> str:
    if value is None:
        return default
    try:
        return canonical_dtype(value)
    except ValueError as err:
        raise kernel_error(f"nl.{fn}: {err}") from None


def _tile(fn: str, arg: str, value: object) -> NkiTensor:
    if not isinstance(value, NkiTensor) or not value.alloc.on_chip:
        raise kernel_error(f"nl.{fn}: {arg} must be an SBUF tile, got {value!r}")
    return value


def _no_mask(fn: str, mask: object) -> None:
    if mask is not None:
        raise kernel_error(f"nl.{fn}: mask= is not supported on the Tensor Engine")


def stage_psum(tile: NkiTensor) -> NkiTensor:
    """A PSUM tile copied to a new SBUF tile (the Vector Engine), for a DMA: `nl.store` of a
    PSUM tile, which NKI 1.x kernels write (the DMA queues read SBUF and HBM)."""
    return _to_sbuf(tile)


def _to_sbuf(tile: NkiTensor, dtype: str | None = None) -> NkiTensor:
    from tilecc.nki import isa
    if tile.buffer == "sbuf" and dtype in (None, tile.dtype):
        return tile
    out = active_trace().allocate(tile.shape, dtype or tile.dtype, "sbuf", assigned_name())
    isa.tensor_copy(dst=out, src=tile)
    return out


def matmul(x: object, y: object, transpose_x: bool = False, mask: object = None) -> NkiTensor:
    """x @ y on the Tensor Engine (x transposed first unless transpose_x), a new PSUM tile."""
    from tilecc.nki.isa_tensor_engine import nc_matmul
    _no_mask("matmul", mask)
    a, b = _tile("matmul", "x", x), _tile("matmul", "y", y)
    if not transpose_x:
        if a.free_elements != b.partitions:
            raise kernel_error(f"nl.matmul: x {list(a.shape)} and y {list(b.shape)}: x's free "
                               f"size must be y's partition size")
        a = _to_sbuf(transpose(a))
    result: NkiTensor = nc_matmul(_to_sbuf(a), _to_sbuf(b))
    return result


def transpose(x: object, dtype: object = None, mask: object = None) -> NkiTensor:
    """The 2-d transpose of a tile (Vector Engine up to 32 x 32, else the Tensor Engine)."""
    from tilecc.nki.isa_tensor_engine import nc_transpose
    _no_mask("transpose", mask)
    tile = _tile("transpose", "x", x)
    if tile.ndim != 2:
        raise kernel_error(f"nl.transpose: x must be a 2-d tile, got {list(tile.shape)}")
    if tile.buffer == "psum" and not (tile.partitions <= 32 and tile.free_elements <= 32):
        tile = _to_sbuf(tile)
    result: NkiTensor = nc_transpose(tile)
    want = _dtype("transpose", dtype, tile.dtype)
    return result if want == result.dtype else _to_sbuf(result, want)


def load_transpose2d(src: object, dtype: object = None, mask: object = None) -> NkiTensor:
    """Load a 2-d HBM tensor transposed into a new SBUF tile (a DMA transpose)."""
    from tilecc.nki.isa_dma import dma_transpose
    _no_mask("load_transpose2d", mask)
    if not isinstance(src, NkiTensor) or src.alloc.on_chip or src.ndim != 2:
        raise kernel_error(f"nl.load_transpose2d: src must be a 2-d HBM tensor, got {src!r}")
    out = active_trace().allocate((src.shape[1], src.shape[0]), src.dtype, "sbuf",
                                  assigned_name())
    dma_transpose(out, src)
    want = _dtype("load_transpose2d", dtype, src.dtype)
    return out if want == out.dtype else _to_sbuf(out, want)


def shared_identity_matrix(n: int, dtype: object = "uint8", dst: object = None) -> NkiTensor:
    """An n x n identity matrix tile (built with iota and a compare)."""
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 128:
        raise kernel_error(f"nl.shared_identity_matrix: n must be an int in 1..128, got {n!r}")
    eye = identity_tile(n, _dtype("shared_identity_matrix", dtype, "uint8"))
    if dst is None:
        return eye
    from tilecc.nki import isa
    isa.tensor_copy(dst=dst, src=eye)
    assert isinstance(dst, NkiTensor)   # tensor_copy has checked it is a tile
    return dst


def shared_constant(constant: object, dtype: object = None) -> NkiTensor:
    """A shared-HBM tensor holding `constant` (an array, or the path of a .npy file) in
    `dtype` (default: the array's), for the constants the instructions can build from
    immediates: one value everywhere (a memset) or an n x n identity (n <= 128, the
    shared identity). Other data is a KernelError: a KLR kernel carries no constant data."""
    from tilecc.nki import isa
    try:
        values = np.load(constant) if isinstance(constant, str) else np.asarray(constant)
    except (OSError, ValueError) as err:
        raise kernel_error(f"nl.shared_constant: cannot read {constant!r}: {err}") from None
    if values.ndim == 0 or values.size == 0:
        raise kernel_error(f"nl.shared_constant: the constant must be a non-empty array, got "
                           f"shape {list(values.shape)}")
    want = _dtype("shared_constant", values.dtype if dtype is None else dtype, "float32")
    trace = active_trace()
    out = trace.allocate(tuple(int(n) for n in values.shape), want, "hbm", assigned_name())
    flat = values.reshape(values.shape[0], -1)
    if values.ndim == 2 and values.shape[0] == values.shape[1] <= 128 and \
            np.array_equal(values, np.eye(values.shape[0], dtype=values.dtype)):
        isa.dma_copy(dst=out, src=identity_tile(values.shape[0], want))
        return out
    if not (flat == flat.flat[0]).all():
        raise kernel_error("nl.shared_constant is not supported by tilecc for this data: a KLR "
                           "kernel carries no constant data, so only a constant of one value or "
                           "an identity (built by instructions) can be made; pass the array as "
                           "a kernel argument instead")
    rows = min(values.shape[0], 128)
    fill = trace.allocate((rows, *values.shape[1:]) if values.ndim > 1 else (1, rows), want,
                          "sbuf", "constant_fill")
    isa.memset(dst=fill, value=flat.flat[0].item())
    for start in range(0, values.shape[0], rows):
        count = min(rows, values.shape[0] - start)
        if values.ndim == 1:
            isa.dma_copy(dst=out[start:start + count], src=fill[0:1, 0:count])
        else:
            isa.dma_copy(dst=out[start:start + count], src=fill[0:count])
    return out


MX_DTYPES = frozenset({"float8_e4m3fn_x4", "float8_e5m2_x4", "float4_e2m1fn_x4"})


def refuse_mx_dtype(name: str) -> None:
    """`nl.<name>` of a packed MX dtype (four values per element) is a located KernelError."""
    if name in MX_DTYPES:
        raise kernel_error(f"nl.{name} is not supported by tilecc: the MX quantized family "
                           f"(nc_matmul_mx, quantize_mx and the x4 packed dtypes) is not simulated")
