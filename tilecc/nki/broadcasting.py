"""How nl's elementwise ops (`nl.add(a, b)`, `a * b`, `nl.maximum` ...) line up two tiles.

Specification: nki.language.add and its siblings, "x.shape and y.shape must be broadcastable
to a common shape, that will become the shape of the output", with the examples of a
[128, 1] tile against [128, 512] (free-dimension broadcast) and [1, 512] against [128, 512]
(partition broadcast, which the page notes is the more expensive one)
(https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/api/generated/nki.language.add.html).
Tiles are partition-first, so two shapes line up on the partition dim (numpy lines them up
on the last dim, which would pair a partition dim with a free dim). In order:
- the partition counts are equal, or one of them is 1: that tile is first copied to the
  other's partitions (tensor.broadcast_to);
- equal shapes are elementwise;
- a tile with one element per partition ([P, 1], [P, 1, 1], [P]) against one with more is a
  column: it repeats along the other tile's free dims, and the result has the other's shape;
- tiles of one rank whose free dims are pairwise equal or 1 broadcast as numpy does per dim
  ([P, 1, F] and [P, W, 1] make [P, W, F]);
- shapes equal once size-1 free dims are dropped ([P, W, 1] and [P, W]; [64, 1] and [64]) are
  elementwise; the result has the shape of more dims.
Any other pair is a KernelError naming both shapes. The operands come back as views of the
result's shape, a repeated dim being a step-0 pair (which every engine access may hold), so
the instruction always sees operands of one shape.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilecc.nki.errors import kernel_error
from tilecc.nki.tensor import Dim, NkiTensor


@dataclass(frozen=True)
class LinedUp:
    """Two operands of an elementwise op on the result's `shape`. `column` is 0 or 1 when that
    operand is a column (one element per partition) left as it is, so the caller may give it
    to an instruction that takes a [P, 1] operand; `first` / `second` are in argument order."""
    shape: tuple[int, ...]
    first: NkiTensor
    second: NkiTensor
    column: int | None = None


def line_up(what: str, a: NkiTensor, b: NkiTensor) -> LinedUp:
    """The result shape of `a <op> b` and both operands lined up on it (module docstring)."""
    a, b = _same_partitions(what, a, b)
    if a.shape == b.shape:
        return LinedUp(a.shape, a, b)
    if b.free_elements == 1 < a.free_elements:
        return LinedUp(a.shape, a, b, column=1)
    if a.free_elements == 1 < b.free_elements:
        return LinedUp(b.shape, a, b, column=0)
    if a.ndim == b.ndim and all(x == y or 1 in (x, y) for x, y in zip(a.shape[1:], b.shape[1:])):
        shape = (a.shape[0], *(max(x, y) for x, y in zip(a.shape[1:], b.shape[1:])))
        return LinedUp(shape, _repeated(what, a, shape), _repeated(what, b, shape))
    if _squeezed(a) == _squeezed(b):
        shape = a.shape if a.ndim >= b.ndim else b.shape
        return LinedUp(shape, _reshaped(what, a, shape), _reshaped(what, b, shape))
    raise kernel_error(f"{what}: shape mismatch: {list(a.shape)} and {list(b.shape)} do not broadcast: tiles "
                       f"line up on the partition dim, and their free dims must be equal, equal "
                       f"but for size-1 dims, one element per partition ([P, 1]), or pairwise "
                       f"equal or 1")


def in_shape_of(what: str, t: NkiTensor, like: NkiTensor) -> NkiTensor:
    """`t` viewed in the shape of `like` when the two differ only by size-1 free dims ([64] and
    [64, 1]: numpy's index shapes make both), else `t` itself: nisa.tensor_tensor takes
    operands of one element count per partition, and the executors read them in one shape."""
    if t.shape == like.shape or _squeezed(t) != _squeezed(like) or like.par_index != 0:
        return t
    return _reshaped(what, t, like.shape)


def repeated_column(column: NkiTensor, shape: tuple[int, ...]) -> NkiTensor:
    """A column (one element per partition) read as a tile of `shape`: its partition dim and
    step-0 free dims."""
    return NkiTensor(column.alloc, column.offset, column.par_start,
                     (column.dims[column.par_index], *(Dim(0, num) for num in shape[1:])))


def _same_partitions(what: str, a: NkiTensor, b: NkiTensor) -> tuple[NkiTensor, NkiTensor]:
    if a.partitions == b.partitions:
        return a, b
    if a.partitions == 1:
        return a.broadcast_to((b.partitions, *a.shape[1:])), b
    if b.partitions == 1:
        return a, b.broadcast_to((a.partitions, *b.shape[1:]))
    raise kernel_error(f"{what}: shape mismatch: {list(a.shape)} and {list(b.shape)} have "
                       f"different partition counts")


def _squeezed(t: NkiTensor) -> tuple[int, ...]:
    return (t.partitions, *(num for i, num in enumerate(t.shape) if i != t.par_index and num != 1))


def _partition_first(what: str, t: NkiTensor) -> None:
    if t.par_index != 0:
        raise kernel_error(f"{what}: {t!r} has dims before its partition dim; index them with "
                           f"ints before broadcasting it against a tile of another shape")


def _reshaped(what: str, t: NkiTensor, shape: tuple[int, ...]) -> NkiTensor:
    """`t` as a view of `shape`, which equals t's shape once size-1 free dims are dropped."""
    if t.shape == shape:
        return t
    _partition_first(what, t)
    wide = iter(dim for dim in t.dims[1:] if dim.num != 1)
    dims = [t.dims[0], *(next(wide) if num != 1 else Dim(0, 1) for num in shape[1:])]
    return NkiTensor(t.alloc, t.offset, t.par_start, tuple(dims))


def _repeated(what: str, t: NkiTensor, shape: tuple[int, ...]) -> NkiTensor:
    """`t` (of `shape`'s rank) with each size-1 free dim repeated to `shape`'s size."""
    if t.shape == shape:
        return t
    _partition_first(what, t)
    dims = [t.dims[0], *(dim if dim.num == num else Dim(0, num)
                         for dim, num in zip(t.dims[1:], shape[1:]))]
    return NkiTensor(t.alloc, t.offset, t.par_start, tuple(dims))
