"""On-chip tensors with block dims too large to be one buffer: one allocation per block.

Contract (NKI direct-allocation guide, nki.compiler.psum.alloc.html: "the block dimension
describes how many (P, F) logical tiles this tensor has, but does not reflect the number of
physical tiles being allocated"): an SBUF / PSUM tensor `(B0, ..., nl.par_dim(P), F...)`
whose blocks together exceed a partition (`qk = nl.ndarray((32, 8, nl.par_dim(128), 512),
buffer=nl.psum)`) is a BlockTensor: each logical block is its own [P, F...] allocation,
made when first indexed, so the simulator places (and reuses) blocks by their lifetimes, as
NKI's allocator does. Indexing takes ints on the block dims (`qk[i, j]`, `qk[i, j, ip, jf]`,
`buf[i]` keeps the remaining block dims), then indexes the block tile as usual; assignment
`qk[i, j, ...] = value` is the tile assignment. Anything else that needs the tensor as one
tile (a store of the whole tensor, a non-int block index) is a located KernelError.
A tensor whose blocks fit together stays one allocation (tilecc/nki/tensor.py).
"""

from __future__ import annotations

from collections.abc import Callable

from tilecc.nki.dtypes import dtype_info, plain_number
from tilecc.nki.errors import kernel_error
from tilecc.nki.operators import installed
from tilecc.nki.tensor import PSUM_PARTITION_BYTES, SBUF_PARTITION_BYTES, NkiTensor


def needs_blocks(shape: tuple[int, ...], dtype: str, buffer: str, par_axis: int) -> bool:
    """An on-chip tensor with block dims whose blocks exceed a partition together, while one
    block fits."""
    if buffer == "hbm" or par_axis == 0:
        return False
    block = dtype_info(dtype).size
    for size in shape[par_axis + 1:]:
        block *= size
    count = 1
    for size in shape[:par_axis]:
        count *= size
    limit = SBUF_PARTITION_BYTES if buffer == "sbuf" else PSUM_PARTITION_BYTES
    return block * count > limit >= block


class BlockTensor:
    """The logical blocks of one on-chip tensor (module docstring); `prefix` fixes leading
    block indices (`buf[i]` of a 2-block-dim tensor)."""

    def __init__(self, shape: tuple[int, ...], dtype: str, buffer: str, name: str, par_axis: int,
                 allocate: Callable[..., NkiTensor], blocks: dict[tuple[int, ...], NkiTensor] | None = None,
                 prefix: tuple[int, ...] = ()) -> None:
        self.full_shape, self.dtype, self.buffer, self.name = shape, dtype, buffer, name
        self.par_axis, self._allocate, self.prefix = par_axis, allocate, prefix
        self._blocks: dict[tuple[int, ...], NkiTensor] = {} if blocks is None else blocks

    @property
    def shape(self) -> tuple[int, ...]:
        return self.full_shape[len(self.prefix):]

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        return f"<{self.buffer} tensor {self.name}{list(self.shape)} {self.dtype} (one tile per block)>"

    def block(self, index: tuple[int, ...]) -> NkiTensor:
        """The [P, F...] tile of block `index` (all block dims given), made on first use."""
        if (tile := self._blocks.get(index)) is None:
            suffix = "_".join(str(i) for i in index)
            tile = self._allocate(self.full_shape[self.par_axis:], self.dtype, self.buffer,
                                  f"{self.name}_{suffix}")
            self._blocks[index] = tile
        return tile

    def all_blocks(self) -> list[NkiTensor]:
        """Every block's tile, in row-major block order (nl.zeros fills each)."""
        counts = self.full_shape[len(self.prefix):self.par_axis]
        indices: list[tuple[int, ...]] = [self.prefix]
        for count in counts:
            indices = [index + (i,) for index in indices for i in range(count)]
        return [self.block(index) for index in indices]

    def __getitem__(self, key: object) -> object:
        items = list(key) if isinstance(key, tuple) else [key]
        free_blocks = self.par_axis - len(self.prefix)
        index = list(self.prefix)
        for position, item in enumerate(items[:free_blocks]):
            item = plain_number(item)
            size = self.full_shape[len(self.prefix) + position]
            if isinstance(item, bool) or not isinstance(item, int):
                raise kernel_error(f"{self!r}: its block dims (before nl.par_dim) are indexed with "
                                   f"ints, got {item!r}")
            if not -size <= item < size:
                raise kernel_error(f"index {item} is out of bounds for a block dim of size {size} "
                                   f"of {self!r}")
            index.append(item + size if item < 0 else item)
        if len(index) < self.par_axis:
            return BlockTensor(self.full_shape, self.dtype, self.buffer, self.name, self.par_axis,
                               self._allocate, self._blocks, tuple(index))
        tile = self.block(tuple(index))
        rest = items[free_blocks:]
        return tile[tuple(rest)] if rest else tile

    def __setitem__(self, key: object, value: object) -> None:
        view = self[key]
        if not isinstance(view, NkiTensor):
            raise kernel_error(f"{self!r}: assign to one block (index every block dim with an int)")
        installed("assign")(view, value)
