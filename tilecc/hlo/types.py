"""XLA primitive types, layouts and shapes, as XLA's HLO text spells them.

Contract:
- `PrimitiveType` keeps XLA's numbering from xla_data.proto (PRED=1 ... F8E8M0FNU=31), so
  numeric tests copied from compiled code (spec 000: `(et - 4) & ~4 == 0` selects
  {S32, U32}) hold on the enum values.
- `Shape` is immutable. An array shape has `element_type`, `dims`, `dynamic_dims` (one
  bool per dim, `<=N` in text; an unbounded size is UNBOUNDED = -1, `?`) and an optional
  `Layout`; a tuple shape has
  `element_type == TUPLE` and `tuple_shapes`; a token has `element_type == TOKEN`.
  Scalars (rank 0) never carry a layout in text.
- `Layout.minor_to_major` is the typed part; everything after it inside the braces
  (tiles `T(8,128)`, memory space `S(1)`, element size `E(4)` ...) is kept verbatim in
  `Layout.tail` so printing loses nothing.
- Tuples print with XLA's `/*index=N*/` marker before every fifth element.
- `compatible(a, b)` is XLA's ShapeUtil::Compatible: same element types and dims
  (recursively for tuples), layouts ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from functools import lru_cache
from math import prod

import numpy as np


class PrimitiveType(IntEnum):
    """XLA's PrimitiveType enum (xla_data.proto numbering)."""

    PRIMITIVE_TYPE_INVALID = 0
    PRED = 1
    S8 = 2
    S16 = 3
    S32 = 4
    S64 = 5
    U8 = 6
    U16 = 7
    U32 = 8
    U64 = 9
    F16 = 10
    F32 = 11
    F64 = 12
    TUPLE = 13
    OPAQUE_TYPE = 14
    C64 = 15
    BF16 = 16
    TOKEN = 17
    C128 = 18
    F8E5M2 = 19
    F8E4M3FN = 20
    S4 = 21
    U4 = 22
    F8E4M3B11FNUZ = 23
    F8E5M2FNUZ = 24
    F8E4M3FNUZ = 25
    S2 = 26
    U2 = 27
    F8E4M3 = 28
    F8E3M4 = 29
    F4E2M1FN = 30
    F8E8M0FNU = 31


_SPECIAL_NAMES = {PrimitiveType.TUPLE: "tuple", PrimitiveType.OPAQUE_TYPE: "opaque",
                  PrimitiveType.TOKEN: "token", PrimitiveType.PRIMITIVE_TYPE_INVALID: "invalid"}

# Text spelling of each type: the lower-case enum name, except the special ones above.
TYPE_NAMES: dict[PrimitiveType, str] = {
    t: _SPECIAL_NAMES.get(t, t.name.lower()) for t in PrimitiveType}
TYPE_BY_NAME: dict[str, PrimitiveType] = {
    name: t for t, name in TYPE_NAMES.items()
    if t not in (PrimitiveType.PRIMITIVE_TYPE_INVALID, PrimitiveType.TUPLE)}

_SIGNED = frozenset({PrimitiveType.S2, PrimitiveType.S4, PrimitiveType.S8, PrimitiveType.S16,
                     PrimitiveType.S32, PrimitiveType.S64})
_UNSIGNED = frozenset({PrimitiveType.U2, PrimitiveType.U4, PrimitiveType.U8, PrimitiveType.U16,
                       PrimitiveType.U32, PrimitiveType.U64})
_FLOATING = frozenset({
    PrimitiveType.F16, PrimitiveType.F32, PrimitiveType.F64, PrimitiveType.BF16,
    PrimitiveType.F8E5M2, PrimitiveType.F8E4M3FN, PrimitiveType.F8E4M3B11FNUZ,
    PrimitiveType.F8E5M2FNUZ, PrimitiveType.F8E4M3FNUZ, PrimitiveType.F8E4M3,
    PrimitiveType.F8E3M4, PrimitiveType.F4E2M1FN, PrimitiveType.F8E8M0FNU})
_COMPLEX = frozenset({PrimitiveType.C64, PrimitiveType.C128})


def primitive_type_name(t: PrimitiveType) -> str:
    """Text spelling: S32 -> 's32', PRED -> 'pred', TOKEN -> 'token'."""
    return TYPE_NAMES[PrimitiveType(t)]


def parse_primitive_type(name: str) -> PrimitiveType:
    """'s32' -> S32; raises KeyError for an unknown spelling."""
    return TYPE_BY_NAME[name]


def is_integral(t: PrimitiveType) -> bool:
    """PRED and every signed / unsigned integer type (spec 000's IsIntegralType classifier)."""
    return t == PrimitiveType.PRED or t in _SIGNED or t in _UNSIGNED


def is_unsigned(t: PrimitiveType) -> bool:
    """Unsigned integer types (PRED excluded)."""
    return t in _UNSIGNED


def is_floating(t: PrimitiveType) -> bool:
    """Real floating-point types, including bf16 and every fp8 / fp4 format."""
    return t in _FLOATING


def is_complex(t: PrimitiveType) -> bool:
    return t in _COMPLEX


_NOT_ARRAY = frozenset({PrimitiveType.TUPLE, PrimitiveType.TOKEN, PrimitiveType.OPAQUE_TYPE,
                        PrimitiveType.PRIMITIVE_TYPE_INVALID})
# module-level aliases: PrimitiveType.X is a slow attribute lookup on the enum class, and the
# shape properties below run on every instruction of every pass and print
_TUPLE, _TOKEN = PrimitiveType.TUPLE, PrimitiveType.TOKEN


def is_array_type(t: PrimitiveType) -> bool:
    """True for element types that an array shape can hold (not TUPLE / TOKEN / OPAQUE)."""
    return t not in _NOT_ARRAY


_SUB_BYTE_BITS = {PrimitiveType.S2: 2, PrimitiveType.U2: 2, PrimitiveType.S4: 4,
                  PrimitiveType.U4: 4, PrimitiveType.F4E2M1FN: 4}


def bit_width(t: PrimitiveType) -> int:
    """Bits of one element (XLA's primitive_util::BitWidth): pred 8, s4 4, c64 64.

    Raises ValueError for TUPLE / TOKEN / OPAQUE, which have no element values.
    """
    t = PrimitiveType(t)
    if t in _SUB_BYTE_BITS:
        return _SUB_BYTE_BITS[t]
    return numpy_dtype(t).itemsize * 8


_NUMPY_NAMES = {
    PrimitiveType.PRED: "bool", PrimitiveType.S8: "int8", PrimitiveType.S16: "int16",
    PrimitiveType.S32: "int32", PrimitiveType.S64: "int64", PrimitiveType.U8: "uint8",
    PrimitiveType.U16: "uint16", PrimitiveType.U32: "uint32", PrimitiveType.U64: "uint64",
    PrimitiveType.F16: "float16", PrimitiveType.F32: "float32", PrimitiveType.F64: "float64",
    PrimitiveType.C64: "complex64", PrimitiveType.C128: "complex128",
}
_ML_DTYPES_NAMES = {
    PrimitiveType.BF16: "bfloat16", PrimitiveType.F8E5M2: "float8_e5m2",
    PrimitiveType.F8E4M3FN: "float8_e4m3fn", PrimitiveType.F8E4M3B11FNUZ: "float8_e4m3b11fnuz",
    PrimitiveType.F8E5M2FNUZ: "float8_e5m2fnuz", PrimitiveType.F8E4M3FNUZ: "float8_e4m3fnuz",
    PrimitiveType.F8E4M3: "float8_e4m3", PrimitiveType.F8E3M4: "float8_e3m4",
    PrimitiveType.F4E2M1FN: "float4_e2m1fn", PrimitiveType.F8E8M0FNU: "float8_e8m0fnu",
    PrimitiveType.S4: "int4", PrimitiveType.U4: "uint4", PrimitiveType.S2: "int2",
    PrimitiveType.U2: "uint2",
}


@lru_cache(maxsize=None)
def numpy_dtype(t: PrimitiveType) -> np.dtype:
    """The numpy dtype holding values of `t` (ml_dtypes for bf16, fp8, fp4 and sub-byte ints).

    Raises ValueError for TUPLE / TOKEN / OPAQUE, which have no element values.
    """
    t = PrimitiveType(t)
    if (name := _NUMPY_NAMES.get(t)) is not None:
        return np.dtype(name)
    if (name := _ML_DTYPES_NAMES.get(t)) is not None:
        import ml_dtypes  # imported lazily: only programs that touch these types pay for it
        return np.dtype(getattr(ml_dtypes, name))
    raise ValueError(f"{primitive_type_name(t)} has no numpy dtype")


@dataclass(frozen=True, slots=True)
class Layout:
    """`{1,0:T(8,128)S(1)}`: minor_to_major (1, 0) plus the verbatim tail 'T(8,128)S(1)'."""

    minor_to_major: tuple[int, ...]
    tail: str = ""

    def to_text(self) -> str:
        body = ",".join(map(str, self.minor_to_major))
        return "{" + body + (":" + self.tail if self.tail else "") + "}"

    @staticmethod
    def default(rank: int) -> Layout:
        """XLA's default (row-major) layout: minor_to_major = rank-1 ... 0."""
        return _default_layout(rank)


@lru_cache(maxsize=64)
def _default_layout(rank: int) -> Layout:
    return Layout(tuple(range(rank - 1, -1, -1)))


@dataclass(frozen=True, slots=True)
class Shape:
    """An array, tuple or token shape (immutable, hashable; equality includes the layout)."""

    element_type: PrimitiveType
    dims: tuple[int, ...] = ()
    dynamic_dims: tuple[bool, ...] = ()
    layout: Layout | None = None
    tuple_shapes: tuple[Shape, ...] = ()
    _text: str | None = field(default=None, init=False, repr=False, compare=False)
    """to_text()'s result, kept on first use: the one cache of shape text (the printers, the
    short form and the pictures all ask here; modules share few shape objects)."""

    @staticmethod
    def array(element_type: PrimitiveType, dims: tuple[int, ...] | list[int] = (),
              layout: Layout | None = None,
              dynamic_dims: tuple[bool, ...] | None = None) -> Shape:
        """An array shape; rank >= 1 gets XLA's default layout unless one is given."""
        dims = tuple(int(d) for d in dims)
        if layout is None and dims:
            layout = _default_layout(len(dims))
        return Shape(PrimitiveType(element_type), dims,
                     tuple(dynamic_dims) if dynamic_dims is not None else (False,) * len(dims),
                     layout)

    @staticmethod
    def tuple(shapes: tuple[Shape, ...] | list[Shape]) -> Shape:  # noqa: A003 - XLA's name
        return Shape(PrimitiveType.TUPLE, tuple_shapes=tuple(shapes))

    @staticmethod
    def token() -> Shape:
        return Shape(PrimitiveType.TOKEN)

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def is_tuple(self) -> bool:
        return self.element_type == _TUPLE

    @property
    def is_token(self) -> bool:
        return self.element_type == _TOKEN

    @property
    def is_array(self) -> bool:
        return self.element_type not in _NOT_ARRAY

    def element_count(self) -> int:
        """Product of the dims (1 for a scalar); 0 for tuples and tokens."""
        return prod(self.dims) if self.element_type not in _NOT_ARRAY else 0

    def true_num_dimensions(self) -> int:
        """Number of dims whose size is not 1 (XLA's ShapeUtil::TrueNumDimensions)."""
        return sum(1 for d in self.dims if d != 1)

    def with_layout(self, layout: Layout | None) -> Shape:
        return Shape(self.element_type, self.dims, self.dynamic_dims, layout, self.tuple_shapes)

    def to_text(self) -> str:
        """XLA's spelling: `s32[2,<=3]{1,0}`, `(s32[], f32[2]{0})`, `token[]`."""
        text = self._text
        if text is None:
            text = tuple_text([s.to_text() for s in self.tuple_shapes]) if self.is_tuple \
                else _array_text(self)
            object.__setattr__(self, "_text", text)  # a cache, not a field: frozen stays true
        return text

    def __str__(self) -> str:
        return self.to_text()


_ARRAY_SHAPES: dict[tuple[PrimitiveType, tuple[int, ...]], Shape] = {}


def array_shape(element_type: PrimitiveType, dims: tuple[int, ...]) -> Shape:
    """`Shape.array(element_type, dims)` (default layout, static dims), one shared object per
    distinct value: shapes are immutable, and builders ask for the same few many times."""
    key = (element_type, dims)
    shape = _ARRAY_SHAPES.get(key)
    if shape is None:
        if len(_ARRAY_SHAPES) >= 4096:
            _ARRAY_SHAPES.clear()
        shape = _ARRAY_SHAPES[key] = Shape.array(element_type, dims)
    return shape


UNBOUNDED = -1
"""The size of an unbounded dynamic dimension, `?` in text (XLA's Shape::kUnboundedSize)."""


def _array_text(shape: Shape) -> str:
    if any(shape.dynamic_dims):
        dims = ",".join("?" if d == UNBOUNDED else ("<=" if dyn else "") + str(d)
                        for d, dyn in zip(shape.dims, shape.dynamic_dims))
    else:
        dims = ",".join(map(str, shape.dims))
    text = f"{TYPE_NAMES[shape.element_type]}[{dims}]"
    if shape.layout is not None and (shape.dims or shape.layout.tail):
        text += shape.layout.to_text()
    return text


def tuple_text(parts: list[str]) -> str:
    """`(a, b, c, d, e, /*index=5*/f)`: XLA marks every fifth element of long tuples."""
    return "(" + index_join(parts) + ")"


def index_join(parts: list[str]) -> str:
    """", ".join(parts) with XLA's `/*index=N*/` before element N when N % 5 == 0, N > 0."""
    if len(parts) <= 5:
        return ", ".join(parts)
    return ", ".join(f"/*index={i}*/{p}" if i and i % 5 == 0 else p for i, p in enumerate(parts))


def compatible(a: Shape, b: Shape) -> bool:
    """Same element types and dims (recursively for tuples), layouts ignored."""
    if a.element_type != b.element_type:
        return False
    if a.element_type == _TUPLE:
        return len(a.tuple_shapes) == len(b.tuple_shapes) and all(
            compatible(x, y) for x, y in zip(a.tuple_shapes, b.tuple_shapes))
    return a.dims == b.dims and a.dynamic_dims == b.dynamic_dims
