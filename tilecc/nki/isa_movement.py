"""nki.isa data movement on chip: nc_stream_shuffle (Vector Engine), nc_n_gather, local_gather,
sequence_bounds and nonzero_with_count (GpSimd Engine); re-exported by tilecc.nki.isa.

Contract as tilecc/nki/isa.py. Pages:
https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/api/generated/nki.isa.nc_stream_shuffle.html
(and .nc_n_gather, .local_gather, .sequence_bounds). Restrictions checked:
nc_stream_shuffle src / dst one dtype and one element count per partition, a 32-entry mask
of partitions 0..31 or 255 (NKI 1.x and 2.x both pass dst by reference; keyword calls
suit both, positional ones are read in the 2.x order dst, src, mask); nc_n_gather SBUF
tiles, uint32 indices, dst of data's dtype and the indices' element count;
local_gather SBUF tiles of one multiple-of-16 partition count, uint16 indices,
num_elem_per_idx in 1, 2, 4, 8, 16, 32, at most 4096 valid indices per core, dst of
src's dtype holding num_valid_indices * num_elem_per_idx elements per partition (the 1.x
form returns a [P, num_valid_indices, num_elem_per_idx] tile); sequence_bounds one
partition of float32 / int32 segment ids, dst [1, 2, N]; nonzero_with_count SBUF tiles,
float32 / int32 src, int32 dst of one more element per partition, int32 offset and padding.
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
from tilecc.nki.isa_vector import ap, emit, legacy_options, new_tile, no_mask
from tilecc.nki.tensor import NkiTensor
from tilecc.nki.tracer import klr_dtype

_NUM_ELEM = (1, 2, 4, 8, 16, 32)


def nc_stream_shuffle(dst: object, src: object, shuffle_mask: object, name: str | None = None, *,
                      mask: object = None, dtype: object = None) -> None:
    """dst partition 32q + i = src partition 32q + shuffle_mask[i] (255: dst partition kept)."""
    fn = "nc_stream_shuffle"
    d, s = chk.tile(fn, "dst", dst), chk.tile(fn, "src", src)
    legacy_options(fn, mask, dtype, d)
    if d.dtype != s.dtype:
        raise kernel_error(f"nisa.{fn}: dst and src must share a dtype, got {d.dtype} and {s.dtype}")
    if d.free_elements != s.free_elements:
        raise kernel_error(f"nisa.{fn}: dst {list(d.shape)} and src {list(s.shape)} must have the "
                           f"same number of elements per partition")
    raw = [plain_number(x) for x in shuffle_mask] if isinstance(shuffle_mask, (list, tuple)) else []
    entries = [x for x in raw if isinstance(x, int) and not isinstance(x, bool) and (0 <= x < 32 or x == 255)]
    if len(raw) != 32 or len(entries) != 32:
        raise kernel_error(f"nisa.{fn}: shuffle_mask must be 32 partitions of the quadrant (0..31) "
                           f"or 255, got {shuffle_mask!r}")
    reach = max((x for x in entries[:d.partitions] if x != 255), default=0)
    if d.partitions <= 32 and reach >= s.partitions:
        raise kernel_error(f"nisa.{fn}: shuffle_mask reads partition {reach} of a "
                           f"{s.partitions}-partition src")
    mask = tuple(ast.Immediate(x) for x in entries)
    emit(kv.Shuffle(ap(d), ap(s), mask, klr_dtype(d.dtype)))


def nc_n_gather(dst: object, data: object, indices: object, name: str | None = None) -> None:
    """dst[p, j] = data[p, indices[p, j]] over the flattened free elements of data."""
    fn = "nc_n_gather"
    d, x, i = (chk.tile(fn, arg, value, ("sbuf",)) for arg, value in
               (("dst", dst), ("data", data), ("indices", indices)))
    chk.same_elements(fn, ("indices", i), ("dst", d))
    chk.same_partitions(fn, ("data", x), ("dst", d))
    if i.dtype != "uint32":
        raise kernel_error(f"nisa.{fn}: indices must be uint32, got {i.dtype}")
    if d.dtype != x.dtype:
        raise kernel_error(f"nisa.{fn}: dst must have data's dtype {x.dtype}, got {d.dtype}")
    emit(kv.NcNGather(ap(d), ap(x), ap(i), klr_dtype(d.dtype)))


def _counts(fn: str, src: NkiTensor, index: NkiTensor, num_elem_per_idx: object,
            num_valid_indices: object) -> tuple[int, int]:
    per, valid = plain_number(num_elem_per_idx), plain_number(num_valid_indices)
    if per not in _NUM_ELEM or isinstance(per, bool) or not isinstance(per, int):
        raise kernel_error(f"nisa.{fn}: num_elem_per_idx must be one of 1, 2, 4, 8, 16, 32, got "
                           f"{num_elem_per_idx!r}")
    per_core = 16 * index.free_elements
    if valid is None:
        valid = per_core
    if isinstance(valid, bool) or not isinstance(valid, int) or not 0 < valid <= min(per_core, 4096):
        raise kernel_error(f"nisa.{fn}: num_valid_indices must be 1..{min(per_core, 4096)} (the "
                           f"indices of a core's 16 partitions, at most 4096), got "
                           f"{num_valid_indices!r}")
    return per, valid


def _local_gather_legacy(fn: object, src_buffer: object, index: object, num_elem_per_idx: object = 1,
                         num_valid_indices: object = None, *, mask: object = None) -> NkiTensor:
    s = chk.tile("local_gather", "src_buffer", src_buffer, ("sbuf",))
    no_mask("local_gather", mask, s)
    i = chk.tile("local_gather", "index", index, ("sbuf",))
    per, valid = _counts("local_gather", s, i, num_elem_per_idx, num_valid_indices)
    out = new_tile((s.partitions, valid, per), s.dtype)
    local_gather(dst=out, src_buffer=s, index=i, num_elem_per_idx=per, num_valid_indices=valid)
    return out


@two_forms(_local_gather_legacy)
def local_gather(dst: object, src_buffer: object, index: object, num_elem_per_idx: object = 1,
                 num_valid_indices: object = None, name: str | None = None) -> None:
    """Each GpSimd core (16 partitions) gathers num_elem_per_idx elements at each of its indices."""
    fn = "local_gather"
    d, s, i = (chk.tile(fn, arg, value, ("sbuf",)) for arg, value in
               (("dst", dst), ("src_buffer", src_buffer), ("index", index)))
    chk.same_partitions(fn, ("src_buffer", s), ("index", i), ("dst", d))
    if s.partitions % 16:
        raise kernel_error(f"nisa.{fn}: src_buffer must have a multiple of 16 partitions (one group "
                           f"per GpSimd core), got {s.partitions}")
    if i.dtype != "uint16":
        raise kernel_error(f"nisa.{fn}: index must be uint16, got {i.dtype}")
    if d.dtype != s.dtype:
        raise kernel_error(f"nisa.{fn}: dst must have src_buffer's dtype {s.dtype} (no casting), got "
                           f"{d.dtype}")
    per, valid = _counts(fn, s, i, num_elem_per_idx, num_valid_indices)
    if d.free_elements != per * valid:
        raise kernel_error(f"nisa.{fn}: dst must hold num_valid_indices * num_elem_per_idx = "
                           f"{valid * per} elements per partition, got {list(d.shape)}")
    emit(kv.NcLocalGather(ap(d), ap(s), ap(i), ast.Immediate(per),
                          None if num_valid_indices is None else ast.Immediate(valid)))


def nonzero_with_count(dst: object, src: object, index_offset: object = 0, padding_val: object = -1,
                       name: str | None = None) -> None:
    """Per GpSimd core's first partition (0, 16, ..., 112): the nonzero positions of src +
    index_offset, padding_val for the rest, then their count."""
    fn = "nonzero_with_count"
    d, s = chk.tile(fn, "dst", dst, ("sbuf",)), chk.tile(fn, "src", src, ("sbuf",))
    chk.same_partitions(fn, ("src", s), ("dst", d))
    if s.dtype not in ("float32", "int32") or d.dtype != "int32":
        raise kernel_error(f"nisa.{fn}: src must be float32 or int32 and dst int32, got {s.dtype} "
                           f"and {d.dtype}")
    if d.free_elements != s.free_elements + 1:
        raise kernel_error(f"nisa.{fn}: dst must have one element more than src per partition (the "
                           f"count), got {list(d.shape)} for src {list(s.shape)}")
    values = [plain_number(v) for v in (index_offset, padding_val)]
    ints = [v for v in values if isinstance(v, int) and not isinstance(v, bool) and -2 ** 31 <= v < 2 ** 31]
    if len(ints) != 2:
        raise kernel_error(f"nisa.{fn}: index_offset and padding_val must be int32 values, got "
                           f"{index_offset!r} and {padding_val!r}")
    emit(kv.NonzeroWithCount(ap(d), ap(s), ast.Immediate(ints[0]), ast.Immediate(ints[1])))


def _sequence_bounds_legacy(fn: object, *, segment_ids: object, dtype: object = None) -> NkiTensor:
    ids = chk.tile("sequence_bounds", "segment_ids", segment_ids, ("sbuf",))
    out = new_tile((1, 2, ids.free_elements), legacy._dtype(cast(Any, fn), dtype, ids.dtype))
    sequence_bounds(dst=out, segment_ids=ids)
    return out


@two_forms(_sequence_bounds_legacy)
def sequence_bounds(dst: object, segment_ids: object, name: str | None = None) -> None:
    """dst[0, 0, i] / dst[0, 1, i] = start / one past the end of the run of segment i (0: pad)."""
    fn = "sequence_bounds"
    d, ids = chk.tile(fn, "dst", dst, ("sbuf",)), chk.tile(fn, "segment_ids", segment_ids, ("sbuf",))
    if ids.partitions != 1 or d.partitions != 1:
        raise kernel_error(f"nisa.{fn}: the partition dimension must be 1, got segment_ids "
                           f"{list(ids.shape)} and dst {list(d.shape)}")
    if d.free_elements != 2 * ids.free_elements:
        raise kernel_error(f"nisa.{fn}: dst must be [1, 2, {ids.free_elements}] (start and end per "
                           f"element), got {list(d.shape)}")
    for arg, tile in (("segment_ids", ids), ("dst", d)):
        if tile.dtype not in ("float32", "int32"):
            raise kernel_error(f"nisa.{fn}: {arg} must be float32 or int32, got {tile.dtype}")
    emit(kv.SequenceBounds(ap(d), ap(ids), klr_dtype(d.dtype)))
