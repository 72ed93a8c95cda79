"""`nisa.dma_transpose` for tilecc, traced to KLR DmaTranspose.

Contract (https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/api/generated/
nki.isa.dma_transpose.html; signature of aws-neuron-sdk nki/api/nki/isa/__init__.py; the
NKI 1.x form `tile = nisa.dma_transpose(src)` returns a new SBUF tile):
dst (SBUF) = src (HBM or SBUF) with its axes permuted: 2-d [1, 0], 3-d [2, 1, 0], 4-d
[3, 1, 2, 0] (`axes` must be the one of src's rank, the default); dst has src's dtype and
the permuted shape. dge_mode unknown (default) or hwdge; hwdge adds the hardware DGE's
rules (2-d: src.shape[0] == 16; 3-d / 4-d: src.shape[0] in {1, 2, 4, 8, 16} and
src.shape[0] * src.shape[-2] a multiple of 16; src.shape[-1] <= 128; a 2-byte dtype).
An indirect source (rows of an HBM tensor picked by an index tile, tilecc/nki/isa_indirect.py)
is gathered into SBUF by one IndirectDmaCopy, where oob_mode applies (skip leaves a row's
partition unwritten), and transposed from there; oob_mode skip without one is refused.
KLR's TransposeOps permute 4-d accesses, so the accesses get size-1 pairs: 2-d
[a, b] -> [a, b, 1, 1] with ZWYX; 3-d src [a, b, c, 1] and dst [c, 1, b, a] with YXZW;
4-d XZYW (klr/ast_tensor_engine.py).
"""

from __future__ import annotations

from tilecc.klr import ast
from tilecc.nki import operands as chk
from tilecc.nki.errors import kernel_error
from tilecc.nki.isa_enums import dge_mode, engine, klr_engine, oob_mode
from tilecc.nki.isa_indirect import IndirectView, indirect_dma_copy
from tilecc.nki.tensor import NkiTensor
from tilecc.nki.dtypes import canonical_dtype
from tilecc.nki.isa_legacy import two_forms
from tilecc.nki.tracer import active_trace, assigned_name, klr_dtype

# rank -> (NKI axes, KLR TransposeOps, where size-1 pairs go in src / dst: (index, count))
_FORMS: dict[int, tuple[tuple[int, ...], ast.TransposeOps, int, int]] = {
    2: ((1, 0), ast.TransposeOps.ZWYX, 1, 1),
    3: ((2, 1, 0), ast.TransposeOps.YXZW, 2, 0),
    4: ((3, 1, 2, 0), ast.TransposeOps.XZYW, 0, 0),
}


def _legacy_dma_transpose(fn: object, src: object, *, axes: object = None, mask: object = None,
                          dtype: object = None, dge_mode: dge_mode = dge_mode.unknown,
                          oob_mode: oob_mode = oob_mode.error) -> NkiTensor:
    """NKI 1.x: `local = nisa.dma_transpose(src)`, the transpose in a new SBUF tile."""
    if mask is not None:
        raise kernel_error("nisa.dma_transpose: mask= is not supported")
    s = chk.tile("dma_transpose", "src", src, ("hbm", "sbuf"))
    order = _FORMS[s.ndim][0] if s.ndim in _FORMS else tuple(range(s.ndim))
    out = active_trace().allocate(tuple(s.shape[i] for i in order), s.dtype, "sbuf",
                                  assigned_name())
    dma_transpose(out, s, axes, dge_mode=dge_mode, oob_mode=oob_mode)
    if dtype is None or canonical_dtype(dtype) == s.dtype:
        return out
    trace = active_trace()
    converted = trace.allocate(out.shape, canonical_dtype(dtype), "sbuf", assigned_name())
    # the conversion is nisa.tensor_copy's statement (an engine copy converts the dtype)
    trace.emit(ast.NcCopy(trace.access(converted), trace.access(out), klr_dtype(converted.dtype),
                          klr_engine("dma_transpose", engine.unknown, (engine.unknown,))))
    return converted


@two_forms(_legacy_dma_transpose)
def dma_transpose(dst: object, src: object, axes: object = None, priority: int | None = None,
                  dge_mode: dge_mode = dge_mode.unknown, oob_mode: oob_mode = oob_mode.error,
                  name: str | None = None) -> None:
    """dst = src transposed by a DMA engine (module docstring)."""
    fn = "dma_transpose"
    d = chk.tile(fn, "dst", dst, ("sbuf",))
    s = chk.tile(fn, "src", src, ("hbm", "sbuf"))
    if isinstance(s, IndirectView):
        # an indirect source (`t[idx[i_p, 0], iy, iz]`): the rows are gathered into SBUF by
        # one IndirectDmaCopy (oob_mode applies there), then transposed from SBUF
        gathered = active_trace().allocate(s.shape, s.dtype, "sbuf", assigned_name())
        indirect_dma_copy(gathered, s, skip=oob_mode is _Oob.skip)
        s, oob_mode = gathered, _Oob.error
    if s.ndim not in _FORMS or d.ndim != s.ndim:
        raise kernel_error(f"nisa.dma_transpose: src and dst must both be 2-d, 3-d or 4-d, got "
                           f"{list(s.shape)} and {list(d.shape)}")
    order, op, src_pad, dst_pad = _FORMS[s.ndim]
    if axes is not None and (not isinstance(axes, (list, tuple)) or tuple(axes) != order):
        raise kernel_error(f"nisa.dma_transpose: axes {axes!r} is not supported; a {s.ndim}-d "
                           f"transpose has axes {order}")
    want = tuple(s.shape[i] for i in order)
    if d.shape != want:
        raise kernel_error(f"nisa.dma_transpose: dst {list(d.shape)} must be {list(want)}, src "
                           f"{list(s.shape)} transposed")
    if d.dtype != s.dtype:
        raise kernel_error(f"nisa.dma_transpose: dst dtype {d.dtype} must be src's {s.dtype}")
    if oob_mode is not _Oob.error:
        raise kernel_error("nisa.dma_transpose: oob_mode skip needs an indirect src (an index "
                           "tile picking its rows)")
    if dge_mode not in (_Dge.unknown, _Dge.hwdge):
        raise kernel_error(f"nisa.dma_transpose: dge_mode must be unknown or hwdge, got {dge_mode!r}")
    if dge_mode is _Dge.hwdge:
        _check_hwdge(s)
    trace = active_trace()
    src_ap = ast.to_pattern(trace.access(s, dma=True))
    if s.ndim == 2 and src_ap.par_num == 1 and len(src_ap.pattern) == 2:
        # a 2-d view inside a larger HBM tensor (`t[b, rows, cols]`): KLR keeps the size-1
        # first dim as the partition, so src is [1, a, b, 1] and dst [b, 1, a, 1] (YWZX)
        src_pad, dst_pad, op = 2, 0, ast.TransposeOps.YWZX
        dst_4d = _padded(trace.access(d, dma=True), dst_pad, d.ndim, extra=2)
        src_4d = ast.AccessPattern(src_ap.tensor, 1, src_ap.pattern + (ast.APPair(0, 1),),
                                   src_ap.par_offset, src_ap.free_offset)
    else:
        dst_4d = _padded(trace.access(d, dma=True), dst_pad, d.ndim)
        src_4d = _padded(src_ap, src_pad, s.ndim)
    trace.emit(ast.DmaTranspose(dst_4d, src_4d, op, klr_dtype(d.dtype), 0, ast.DmaBounds.error,
                                priority))


_Oob, _Dge = oob_mode, dge_mode


def _check_hwdge(s: NkiTensor) -> None:
    from tilecc.nki.dtypes import dtype_info
    first, last = s.shape[0], s.shape[-1]
    if s.ndim == 2 and first != 16:
        raise kernel_error(f"nisa.dma_transpose: a hardware DGE 2-d transpose needs src.shape[0] "
                           f"== 16, got {first}")
    if s.ndim > 2 and (first not in (1, 2, 4, 8, 16) or (first * s.shape[-2]) % 16):
        raise kernel_error(f"nisa.dma_transpose: a hardware DGE transpose needs src.shape[0] in "
                           f"(1, 2, 4, 8, 16) and src.shape[0] * src.shape[-2] a multiple of 16, "
                           f"got {list(s.shape)}")
    if last > 128 or dtype_info(s.dtype).size != 2:
        raise kernel_error(f"nisa.dma_transpose: a hardware DGE transpose needs src.shape[-1] <= "
                           f"128 and a 2-byte dtype, got {list(s.shape)} {s.dtype}")


def _padded(access: ast.Access, at: int, ndim: int,
            extra: int | None = None) -> ast.AccessPattern:
    """`access` of an `ndim`-d view as a 4-d one: size-1 free pairs inserted at free
    position `at` (and one more at free position `extra` after that, when given)."""
    ap = ast.to_pattern(access)
    if len(ap.pattern) + 1 != ndim:
        raise kernel_error(f"nisa.dma_transpose: this access of {ap.tensor.name} has "
                           f"{len(ap.pattern) + 1} dims in KLR, not its {ndim}; pass a view "
                           f"whose first dim steps whole rows")
    pad = 4 - ndim - (0 if extra is None else 1)
    pairs = ap.pattern[:at] + (ast.APPair(0, 1),) * pad + ap.pattern[at:]
    if extra is not None:
        pairs = pairs[:extra] + (ast.APPair(0, 1),) + pairs[extra:]
    return ast.AccessPattern(ap.tensor, ap.par_num, pairs, ap.par_offset, ap.free_offset)
