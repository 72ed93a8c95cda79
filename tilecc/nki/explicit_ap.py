"""`tensor.ap(pattern, offset)` of NKI 2.x: a view given by explicit [step, num] pairs.

Contract: applies to a whole tensor. In HBM the pairs step over the row-major elements and
must stay inside the tensor; on chip the first pair steps partitions ([row, n]: one
partition is `row` elements) and the others stay inside one partition. A vector_offset
makes a row gather / scatter view (tilecc/nki/isa_indirect.py); dtype reinterpretation is
a KernelError.
"""

from __future__ import annotations

from tilecc.nki.errors import kernel_error
from tilecc.nki.tensor import Dim, NkiTensor


def explicit_access(tensor: NkiTensor, pattern: list[list[int]], offset: int = 0,
                    scalar_offset: object = None, vector_offset: object = None,
                    indirect_dim: object = None, dtype: object = None) -> NkiTensor:
    """NKI 2.x explicit access pattern on a whole tensor: [[step, num], ...] in elements,
    the partition pair first (on chip its step is the row length, one partition), and an
    element `offset` from the tensor's start. Indirect (dynamic) offsets are not supported."""
    if vector_offset is not None or scalar_offset is not None:
        from tilecc.nki.isa_indirect import explicit_indirect   # a gather / scatter view
        return explicit_indirect(tensor, pattern, offset, scalar_offset, vector_offset,
                                 indirect_dim)
    if indirect_dim is not None or dtype is not None:
        raise kernel_error("tensor.ap(): indirect_dim without vector_offset, and dtype "
                           "reinterpretation, are not supported by tilecc")
    if tensor.shape != tensor.alloc.shape or tensor.offset or tensor.par_start:
        raise kernel_error("tensor.ap() applies to a whole tensor, not to a view of it")
    pairs = [tuple(pair) for pair in pattern] if isinstance(pattern, (list, tuple)) else []
    if not pairs or any(len(p) != 2 or not all(isinstance(v, int) for v in p) or p[1] <= 0
                        for p in pairs):
        raise kernel_error(f"tensor.ap(): pattern is a list of [step, num] int pairs, got {pattern!r}")
    alloc, row = tensor.alloc, tensor.alloc.free_size
    extent = [offset + sum(min(0, s * (n - 1)) for s, n in pairs),
              offset + sum(max(0, s * (n - 1)) for s, n in pairs)]
    total = row * alloc.partitions
    if not alloc.on_chip:
        if extent[0] < 0 or extent[1] >= total:
            raise kernel_error(f"tensor.ap(): elements {extent[0]}..{extent[1]} are outside "
                               f"{tensor!r} ({total} elements)")
        return NkiTensor(alloc, offset, 0, tuple(Dim(s, n) for s, n in pairs))
    (par_step, par_num), free = pairs[0], pairs[1:]
    par_start, free_offset = divmod(offset, row)
    low = free_offset + sum(min(0, s * (n - 1)) for s, n in free)
    high = free_offset + sum(max(0, s * (n - 1)) for s, n in free)
    if (par_num > 1 and par_step != row) or low < 0 or high >= row \
            or par_start + par_num > alloc.partitions:
        raise kernel_error(f"tensor.ap(): on chip the first pair steps one partition ([{row}, n]) "
                           f"and the others stay inside a partition of {row} elements; "
                           f"{[list(p) for p in pairs]} at offset {offset} does not fit {tensor!r}")
    return NkiTensor(alloc, free_offset, par_start,
                     (Dim(1, par_num, True), *(Dim(s, n) for s, n in free)))
