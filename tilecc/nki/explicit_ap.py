"""`tensor.ap(pattern, offset)` of NKI 2.x: a view given by explicit [step, num] pairs.

Contract: applies to a tensor or to a view of it that is contiguous in row-major order (a
reshape, a range of whole rows, a range of partitions of whole rows); `offset` counts from
the view's first element. In HBM the pairs step over the row-major elements and must stay
inside the view; on chip the first pair steps partitions ([row, n]: one partition is `row`
elements) and the others stay inside one partition. A vector_offset makes a row gather /
scatter view (tilecc/nki/isa_indirect.py); `dtype=` the tensor's own dtype is accepted,
another dtype (a reinterpretation of the bits) is a KernelError.
"""

from __future__ import annotations

from tilecc.nki.dtypes import canonical_dtype
from tilecc.nki.errors import kernel_error
from tilecc.nki.tensor import Dim, NkiTensor


def _contiguous(tensor: NkiTensor) -> bool:
    """The view's free dims are row-major and contiguous (on chip: a whole partition row)."""
    if tensor.shape == tensor.alloc.shape and not tensor.offset and not tensor.par_start:
        return True
    dims = tensor.dims[1:] if tensor.alloc.on_chip else tensor.dims
    running = 1
    for dim in reversed(dims):
        if dim.num > 1 and dim.step != running:
            return False
        running *= dim.num
    if tensor.alloc.on_chip:
        return (tensor.par_index == 0 and tensor.offset == 0 and running == tensor.alloc.free_size
                and (not tensor.dims or tensor.dims[0].is_par or tensor.dims[0].num == 1))
    return True


def _same_dtype(tensor: NkiTensor, dtype: object) -> bool:
    try:
        return canonical_dtype(dtype) == tensor.dtype
    except ValueError:
        return False


def explicit_access(tensor: NkiTensor, pattern: list[list[int]], offset: int = 0,
                    scalar_offset: object = None, vector_offset: object = None,
                    indirect_dim: object = None, dtype: object = None) -> NkiTensor:
    """NKI 2.x explicit access pattern on a tensor or a contiguous view of it: [[step, num],
    ...] in elements, the partition pair first (on chip its step is the row length, one
    partition), and an element `offset` from the view's start; a vector_offset makes it a
    row gather / scatter."""
    if vector_offset is not None or scalar_offset is not None:
        from tilecc.nki.isa_indirect import explicit_indirect   # a gather / scatter view
        return explicit_indirect(tensor, pattern, offset, scalar_offset, vector_offset,
                                 indirect_dim)
    if indirect_dim is not None:
        raise kernel_error("tensor.ap(): indirect_dim without vector_offset is not supported by "
                           "tilecc")
    if dtype is not None and not _same_dtype(tensor, dtype):
        raise kernel_error(f"tensor.ap(): dtype={dtype!r} reinterprets {tensor!r} as another "
                           f"dtype, which KLR accesses cannot express")
    if not _contiguous(tensor):
        raise kernel_error(f"tensor.ap() applies to a tensor or a contiguous view of it "
                           f"(a reshape, a range of whole rows), not to {tensor!r} sliced inside "
                           f"its rows")
    pairs = [tuple(pair) for pair in pattern] if isinstance(pattern, (list, tuple)) else []
    if not pairs or any(len(p) != 2 or not all(isinstance(v, int) for v in p) or p[1] <= 0
                        for p in pairs):
        raise kernel_error(f"tensor.ap(): pattern is a list of [step, num] int pairs, got {pattern!r}")
    alloc, row = tensor.alloc, tensor.alloc.free_size
    extent = [offset + sum(min(0, s * (n - 1)) for s, n in pairs),
              offset + sum(max(0, s * (n - 1)) for s, n in pairs)]
    if not alloc.on_chip:
        total = tensor.partitions * tensor.free_elements
        if extent[0] < 0 or extent[1] >= total:
            raise kernel_error(f"tensor.ap(): elements {extent[0]}..{extent[1]} are outside "
                               f"{tensor!r} ({total} elements)")
        return NkiTensor(alloc, tensor.offset + offset, 0, tuple(Dim(s, n) for s, n in pairs))
    (par_step, par_num), free = pairs[0], pairs[1:]
    par_start, free_offset = divmod(offset, row)
    par_start += tensor.par_start
    low = free_offset + sum(min(0, s * (n - 1)) for s, n in free)
    high = free_offset + sum(max(0, s * (n - 1)) for s, n in free)
    if (par_num > 1 and par_step != row) or low < 0 or high >= row \
            or par_start + par_num > tensor.par_start + tensor.partitions:
        raise kernel_error(f"tensor.ap(): on chip the first pair steps one partition ([{row}, n]) "
                           f"and the others stay inside a partition of {row} elements; "
                           f"{[list(p) for p in pairs]} at offset {offset} does not fit {tensor!r}")
    return NkiTensor(alloc, free_offset, par_start,
                     (Dim(1, par_num, True), *(Dim(s, n) for s, n in free)))
