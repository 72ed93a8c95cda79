"""Shapes, buffers and reduction axes as kernels write them, checked.

Contract: `parse_shape` takes NKI's shape forms (an int, a tuple / list of ints or numpy
integers, at most one `par_dim(n)` marking the partition dim) and gives (sizes, partition
axis); `parse_buffer` maps nl.sbuf / nl.psum / nl.hbm / nl.shared_hbm / nl.private_hbm to
the three buffers; `new_tensor` allocates in the active trace (`nl.ndarray`);
`reduce_axes` / `reduced_shape` say which free dims a reduction folds and the result's shape
(reduced dims dropped, or kept as 1 with keepdims; a [P, 1] column when every free dim goes).
Every violation is a KernelError at the kernel line. Instruction modules and nki.language
both use these, so they live below both.
"""

from __future__ import annotations

from tilecc.nki.dtypes import canonical_dtype, plain_number
from tilecc.nki.block_tensor import BlockTensor, needs_blocks
from tilecc.nki.errors import kernel_error
from tilecc.nki.tensor import NkiTensor
from tilecc.nki.tracer import active_trace, assigned_name

BUFFERS = {"sbuf": "sbuf", "psum": "psum", "hbm": "hbm", "shared_hbm": "hbm", "private_hbm": "hbm"}


class par_dim:  # noqa: N801 (NKI's name)
    """Marks the partition dimension inside a shape: `(nl.par_dim(128), 512)`."""

    def __init__(self, size: int) -> None:
        self.size = size

    def __repr__(self) -> str:
        return f"par_dim({self.size})"


def parse_dtype(value: object) -> str:
    """The canonical dtype name of `value` (an nl dtype, a numpy dtype or type, a name)."""
    try:
        return canonical_dtype(value)
    except ValueError as err:
        raise kernel_error(str(err)) from None


def parse_shape(shape: object) -> tuple[tuple[int, ...], int]:
    """(sizes, partition axis) of an NKI shape."""
    if isinstance(shape, (int, par_dim)):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)) or not shape:
        raise kernel_error(f"a shape is a tuple of ints, got {shape!r}")
    marks = [axis for axis, size in enumerate(shape) if isinstance(size, par_dim)]
    if len(marks) > 1:
        raise kernel_error("a shape can hold one nl.par_dim")
    raw = [size.size if isinstance(size, par_dim) else plain_number(size) for size in shape]
    sizes = tuple(size for size in raw if isinstance(size, int) and not isinstance(size, bool))
    if len(sizes) != len(raw):
        raise kernel_error(f"a shape is a tuple of ints, got {shape!r}")
    return sizes, (marks[0] if marks else 0)


def parse_buffer(buffer: object) -> str:
    """"sbuf" (the default), "psum" or "hbm"."""
    if buffer is None:
        return "sbuf"
    if not isinstance(buffer, str) or buffer not in BUFFERS:
        raise kernel_error(f"buffer must be nl.sbuf, nl.psum, nl.hbm, nl.shared_hbm or "
                           f"nl.private_hbm, got {buffer!r}")
    return BUFFERS[buffer]


def new_tensor(shape: object, dtype: object, buffer: object = None, name: str = "") -> NkiTensor:
    """A new tensor of `shape` and `dtype` in `buffer` (default nl.sbuf); without a name it
    is named after the variable it is assigned to (`row_max = nl.ndarray(...)`)."""
    sizes, par_axis = parse_shape(shape)
    dtype, buffer, name = parse_dtype(dtype), parse_buffer(buffer), name or assigned_name()
    trace = active_trace()
    if needs_blocks(sizes, dtype, buffer, par_axis):
        # blocks that do not fit together: one allocation each (tilecc/nki/block_tensor.py)
        blocks: NkiTensor = BlockTensor(sizes, dtype, buffer, name or buffer, par_axis,  # type: ignore[assignment]
                                        trace.allocate)
        return blocks
    return trace.allocate(sizes, dtype, buffer, name, par_axis)


def reduce_axes(what: str, tile: NkiTensor, axis: object) -> list[int]:
    """The free dims `axis` names (an int or a list; negative counts from the end), sorted."""
    raw = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    raw = [plain_number(a) for a in raw]
    ints = [a for a in raw if isinstance(a, int) and not isinstance(a, bool)]
    if not raw or len(ints) != len(raw):
        raise kernel_error(f"{what}: axis must be an int or a list of ints, got {axis!r}")
    axes = sorted({a + tile.ndim if a < 0 else a for a in ints})
    if axes[0] < 1 or axes[-1] >= tile.ndim:
        raise kernel_error(f"{what}: axis {raw} must name free dims 1..{tile.ndim - 1} of "
                           f"{tile!r} (the partition dim 0 is reduced by "
                           f"nisa.tensor_partition_reduce)")
    return axes


def reduced_shape(what: str, tile: NkiTensor, axis: object, keepdims: bool) -> tuple[int, ...]:
    """The shape of a reduction result: reduced dims dropped (kept as 1 with keepdims), and
    a [P, 1] column when every free dim is reduced."""
    axes = reduce_axes(what, tile, axis)
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(tile.shape))
    shape = tuple(n for i, n in enumerate(tile.shape) if i not in axes)
    return shape if len(shape) > 1 else (shape[0], 1)
