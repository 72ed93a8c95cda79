"""`nl.loop_reduce(x, op, loop_indices)`: a reduction carried across loop iterations.

Contract (https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/api/generated/
nki.language.loop_reduce.html): "the destination tile is also the rhs input to op":
`dst[...] = nl.loop_reduce(x, op=np.add, loop_indices=(i,))` is
`dst[...] = nisa.tensor_tensor(data1=dst, data2=x, op=op)` in each iteration, so dst must
hold the reduction's start (nl.zeros for an add, as the page's example). The call returns a
`LoopFold` that the tile assignment `dst[...] = ...` turns into that one tensor_tensor
(tilecc/nki/tile_ops.py `assign`); loop_indices only tell NKI's compiler which loops it may
reorder, so they are checked, not used. A compile-time False `mask=` skips the fold; a mask
of grid indices restricts dst and x to its box. Used any other way (`b = nl.loop_reduce(...)`
rebinding a name gives the call no destination) the LoopFold is not a tile, and the call
that receives it refuses it at its line.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilecc.nki import masking
from tilecc.nki.errors import kernel_error
from tilecc.nki.ops import Op, resolve_op
from tilecc.nki.tensor import NkiTensor
from tilecc.nki.tracer import masked_off


@dataclass(frozen=True)
class LoopFold:
    """What `nl.loop_reduce` returns: `dst = op(dst, tile)` once it is assigned to a dst
    (`tile` None: masked off, nothing to fold)."""
    tile: NkiTensor | None
    op: Op
    mask: object = None


def loop_reduce(x: object, op: object, loop_indices: object, dtype: object = None,
                mask: object = None) -> LoopFold:
    """dst = op(dst, x) for the tile `dst[...]` this is assigned to (module docstring)."""
    found = resolve_op(op)
    if found is None or found.alu is None:
        raise kernel_error(f"nl.loop_reduce: op must be an ALU operator (np.add, np.maximum, "
                           f"...), got {op!r}")
    indices = loop_indices if isinstance(loop_indices, (tuple, list)) else (loop_indices,)
    if any(isinstance(i, bool) or not isinstance(i, int) for i in indices):
        raise kernel_error(f"nl.loop_reduce: loop_indices are loop indices (ints of "
                           f"nl.affine_range), got {loop_indices!r}")
    if masked_off(mask):
        return LoopFold(None, found)
    if not isinstance(x, NkiTensor) or not x.alloc.on_chip:
        raise kernel_error(f"nl.loop_reduce: x must be a tile on chip, got {x!r}")
    return LoopFold(x, found, mask)


def fold_into(dst: NkiTensor, fold: LoopFold) -> None:
    """`dst[...] = fold`: one tensor_tensor dst = op(dst, x) (inside the mask's box)."""
    from tilecc.nki import isa
    if fold.tile is None:
        return
    if dst.shape != fold.tile.shape and dst.free_elements != fold.tile.free_elements:
        raise kernel_error(f"nl.loop_reduce: {fold.tile!r} does not fit the destination {dst!r}")
    box = masking.call_box("nl.loop_reduce", fold.mask, dst)
    target = masking.cut(dst, box, dst.shape)
    isa.tensor_tensor(dst=target, data1=target, data2=masking.cut(fold.tile, box, dst.shape),
                      op=fold.op)
