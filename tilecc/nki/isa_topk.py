"""nki.isa searches of the Vector Engine: max8, nc_find_index8 and nc_match_replace8
(re-exported by tilecc.nki.isa).

Contract as tilecc/nki/isa.py (NKI 2.x `dst=` form, and the 1.x tile-returning form
through `two_forms`). Pages:
https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/api/generated/nki.isa.max8.html
(and .nc_find_index8, .nc_match_replace8). Restrictions checked: 8..16384 elements per
partition read; exactly 8 vals per partition; outputs of 8 per partition (max8, indices),
index outputs uint16 or uint32 (the 1.x default is uint32); match_replace8's dst has
data's elements and `imm` is a compile-time float.
"""

from __future__ import annotations

from typing import Any, cast

from tilecc.klr import ast
from tilecc.klr import ast_vector as kv
from tilecc.nki import isa_legacy as legacy
from tilecc.nki import operands as chk
from tilecc.nki.dtypes import plain_number
from tilecc.nki.errors import kernel_error
from tilecc.nki.isa_legacy import two_forms
from tilecc.nki import masking
from tilecc.nki.isa_vector import ap, emit, f32_immediate, masked_input
from tilecc.nki.tensor import NkiTensor
from tilecc.nki.tracer import assigned_name, klr_dtype


def _searched(fn: str, arg: str, value: object) -> NkiTensor:
    x = chk.tile(fn, arg, value)
    if not 8 <= x.free_elements <= 16384:
        raise kernel_error(f"nisa.{fn}: {arg} must have 8 to 16384 elements per partition, got "
                           f"{x.free_elements} ({list(x.shape)})")
    return x


def _eight(fn: str, arg: str, value: NkiTensor, data: NkiTensor) -> None:
    chk.same_partitions(fn, ("data", data), (arg, value))
    if value.free_elements != 8:
        raise kernel_error(f"nisa.{fn}: {arg} must hold 8 elements per partition, got "
                           f"{list(value.shape)}")


def _index_dtype(fn: str, arg: str, value: NkiTensor) -> None:
    if value.dtype not in ("uint16", "uint32"):
        raise kernel_error(f"nisa.{fn}: {arg} holds indices: uint16 or uint32, got {value.dtype}")


# ---------------------------------------------------------------- 1.x forms

def _max8_legacy(fn: object, *, src: object, mask: object = None, dtype: object = None) -> NkiTensor:
    x = _searched("max8", "src", src)
    part, out, written = masked_input("max8", mask, x, (x.partitions, 8),
                                      legacy._dtype(cast(Any, fn), dtype, x.dtype))
    max8(dst=written, src=part)
    return out


def _find_index8_legacy(fn: object, *, data: object, vals: object, mask: object = None,
                        dtype: object = None) -> NkiTensor:
    x = _searched("nc_find_index8", "data", data)
    part, out, written = masked_input("nc_find_index8", mask, x, (x.partitions, 8),
                                      legacy._dtype(cast(Any, fn), dtype, "uint32"))
    nc_find_index8(dst=written, data=part, vals=_rows(vals, masking.call_box("nisa.nc_find_index8", mask, x)))
    return out


def _match_replace8_legacy(fn: object, *, data: object, vals: object, imm: object,
                           dst_idx: object = None, mask: object = None,
                           dtype: object = None) -> NkiTensor:
    x = _searched("nc_match_replace8", "data", data)
    box = masking.call_box("nisa.nc_match_replace8", mask, x)
    out, written = masking.result_tile(x.shape, legacy._dtype(cast(Any, fn), dtype, x.dtype),
                                       assigned_name(), box)
    part = masking.cut(x, box, x.shape)
    nc_match_replace8(dst=written, data=part, vals=_rows(vals, box), imm=imm,
                      dst_idx=_rows(dst_idx, box))
    return out


def _rows(value: object, box: masking.DimBox | None) -> object:
    """A [P, 8] operand of a masked call restricted to the partitions the call computes."""
    if not isinstance(value, NkiTensor) or box is None:
        return value
    return value.restricted((box[0], *((0, n) for n in value.shape[1:])))


# ---------------------------------------------------------------- 2.x forms

@two_forms(_max8_legacy)
def max8(dst: object, src: object, name: str | None = None) -> None:
    """dst[P, 8] = the 8 largest values of each partition of src, in descending order."""
    fn = "max8"
    d, x = chk.tile(fn, "dst", dst), _searched(fn, "src", src)
    _eight(fn, "dst", d, x)
    emit(kv.Max8(ap(d), ap(x), klr_dtype(d.dtype)))


@two_forms(_find_index8_legacy)
def nc_find_index8(dst: object, data: object, vals: object, name: str | None = None) -> None:
    """dst[p, j] = the first index of vals[p, j] in data[p, :] (all ones when absent)."""
    fn = "nc_find_index8"
    d, x, v = chk.tile(fn, "dst", dst), _searched(fn, "data", data), chk.tile(fn, "vals", vals)
    _eight(fn, "vals", v, x)
    _eight(fn, "dst", d, x)
    _index_dtype(fn, "dst", d)
    emit(kv.FindIndex8(ap(d), ap(x), ap(v), klr_dtype(d.dtype)))


@two_forms(_match_replace8_legacy)
def nc_match_replace8(dst: object, data: object, vals: object, imm: object, dst_idx: object = None,
                      name: str | None = None) -> None:
    """dst = data with the first match of each of the 8 vals replaced by imm; dst_idx gets
    the matched positions (duplicate vals pair from the last one backwards)."""
    fn = "nc_match_replace8"
    d, x, v = chk.tile(fn, "dst", dst), _searched(fn, "data", data), chk.tile(fn, "vals", vals)
    chk.same_elements(fn, ("data", x), ("dst", d))
    _eight(fn, "vals", v, x)
    value = plain_number(imm)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise kernel_error(f"nisa.{fn}: imm must be a compile-time float, got {imm!r}")
    idx: ast.TensorRef | None = None
    if dst_idx is not None:
        i = chk.tile(fn, "dst_idx", dst_idx)
        _eight(fn, "dst_idx", i, x)
        _index_dtype(fn, "dst_idx", i)
        idx = ap(i)
    emit(kv.MatchReplace8(ap(d), ap(x), ap(v), f32_immediate(float(value)), idx, klr_dtype(d.dtype)))
