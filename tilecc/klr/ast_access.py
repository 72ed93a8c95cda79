"""KLR AST tensors, accesses and operands: TensorName and its Address, the three Access forms,
Immediate operands, and the helpers that turn an access into an AccessPattern.

Invariants:
- A tensor is row-major: shape (par_dim, free_dims); partition p holds the free elements in
  row-major order. Its Address gives par_size partitions x free_size BYTES per partition,
  with par_dim <= par_size <= 128 (HBM: no partition limit) and
  prod(free_dims) * dtype size <= free_size.
- Every class here is a frozen dataclass (hashable, compared by value).

Accesses (KLR `Access`; a TensorRef is an Access in this AST, KLR's `.abstract` form):
- a TensorName itself = `simple`: the whole tensor;
- AccessBasic(tensor, indexes): one Index per dimension (partition first); Coord(e) picks
  one element (the dimension stays, with size 1), Slice(l, u, step) as Python's l:u:step
  (on the partition dim step must be 1);
- AccessPattern(tensor, par_num, pattern, par_offset, free_offset): partitions
  par_offset .. par_offset+par_num-1 (partition step is always 1), and in each partition the
  free ELEMENT indices free_offset + sum(x_i * step_i) for x_i < num_i; the first APPair
  changes slowest. step may be 0 (broadcast) or negative. (KLR stores freeOffset in bytes;
  the reader converts.) `to_pattern(access)` turns every access into this form, and
  `access_shape(access)` gives (par_num, [num_i ...]).
Operands (KLR `Operand`): an Immediate (int = Int32, float = Float32, by Python type) or a
TensorRef; a tensor operand of a "scalar" slot is a [P, 1] per-partition column.
Everything here is re-exported by `tilecc.klr.ast`, the place to import it from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from tilecc.errors import CodegenError
from tilecc.klr.ast_enums import DTYPE_SIZE, Dtype, Memory


@dataclass(frozen=True, slots=True)
class Shape:
    par_dim: int
    free_dims: tuple[int, ...]

    @property
    def free_elements(self) -> int:
        n = 1
        for d in self.free_dims:
            n *= d
        return n


@dataclass(frozen=True, slots=True)
class Address:
    """A memory region: par_size partitions x free_size bytes; offsets None = unallocated."""
    name: str
    memory: Memory
    par_size: int
    free_size: int
    par_offset: int | None = None
    free_offset: int | None = None
    is_shared: bool = False


@dataclass(frozen=True, slots=True)
class TensorName:
    name: str
    dtype: Dtype
    shape: Shape
    address: Address


@dataclass(frozen=True, slots=True)
class Coord:
    e: int


@dataclass(frozen=True, slots=True)
class Slice:
    l: int  # noqa: E741 (KLR's name)
    u: int
    step: int = 1

    @property
    def size(self) -> int:
        return len(range(self.l, self.u, self.step))


Index = Union[Coord, Slice]


@dataclass(frozen=True, slots=True)
class AccessBasic:
    tensor: TensorName
    indexes: tuple[Index, ...]


@dataclass(frozen=True, slots=True)
class APPair:
    step: int
    num: int


@dataclass(frozen=True, slots=True)
class AccessPattern:
    tensor: TensorName
    par_num: int
    pattern: tuple[APPair, ...]
    par_offset: int = 0
    free_offset: int = 0


Access = Union[TensorName, AccessBasic, AccessPattern]
TensorRef = Access


@dataclass(frozen=True, slots=True)
class Immediate:
    """KLR Immediate: `int` (Int32) when value is an int, `float` (Float32) when a float."""
    value: int | float


Operand = Union[Immediate, TensorName, AccessBasic, AccessPattern]


@dataclass(frozen=True, slots=True)
class DataPattern:
    offset: int
    pattern: tuple[APPair, ...]
    channel_multiplier: int


def access_tensor(access: Access) -> TensorName:
    return access if isinstance(access, TensorName) else access.tensor


def row_strides(shape: Shape) -> list[int]:
    """Element stride of each free dim in the row-major layout of one partition."""
    strides = [1] * len(shape.free_dims)
    for i in range(len(shape.free_dims) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape.free_dims[i + 1]
    return strides


def to_pattern(access: Access) -> AccessPattern:
    """Every access as an AccessPattern on its tensor (see the module docstring).

    Raises CodegenError for an AccessBasic whose partition Slice has a step other than 1
    (the reader already rejects it in JSON, with the field path)."""
    if isinstance(access, AccessPattern):
        return access
    if isinstance(access, TensorName):
        strides = row_strides(access.shape)
        pairs = tuple(APPair(s, n) for s, n in zip(strides, access.shape.free_dims))
        return AccessPattern(access, access.shape.par_dim, pairs)
    tensor = access.tensor
    par, *free = access.indexes
    if isinstance(par, Slice) and par.step != 1:
        # an AccessPattern's partitions are consecutive: dropping the step would silently
        # access other partitions (1:4:2 would become 1..3)
        raise CodegenError(f"access of '{tensor.name}': partition slice {par.l}:{par.u}:"
                           f"{par.step} has step {par.step}, the partition step must be 1")
    par_start, par_num = (par.e, 1) if isinstance(par, Coord) else (par.l, par.size)
    offset = 0
    pairs_list: list[APPair] = []
    for index, stride in zip(free, row_strides(tensor.shape)):
        if isinstance(index, Coord):
            offset += index.e * stride
            pairs_list.append(APPair(stride, 1))
        else:
            offset += index.l * stride
            pairs_list.append(APPair(stride * index.step, index.size))
    return AccessPattern(tensor, par_num, tuple(pairs_list), par_start, offset)


def access_shape(access: Access) -> tuple[int, tuple[int, ...]]:
    ap = to_pattern(access)
    return ap.par_num, tuple(p.num for p in ap.pattern)


def make_tensor(name: str, dtype: Dtype, shape: tuple[int, ...], memory: Memory) -> TensorName:
    """A TensorName whose address exactly fits its shape (the usual form for tiles and args)."""
    s = Shape(shape[0], tuple(shape[1:]))
    return TensorName(name, dtype, s,
                      Address(name, memory, s.par_dim, s.free_elements * DTYPE_SIZE[dtype]))
