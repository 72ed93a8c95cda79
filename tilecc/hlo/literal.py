"""Constant literals: XLA's text form <-> numpy arrays.

Contract: `parse_literal(text, shape)` reads what XLA prints inside `constant(...)` for an
array shape -- a scalar `-3`, `1.5`, `inf`, `-nan`, `true`; nested braces with one level
per dimension `{ { 1, 2 }, { 3, 4 } }` (XLA's `/*i0=0*/` index comments skipped); `{}`
for zero elements; one scalar for a shape of rank >= 1 is its element 0, the others zero
(XLA's parser reads `s32[3] constant(4)` as {4, 0, 0}, and refuses it for no elements);
`-nan(0x7f)` carries a NaN payload, which must fit the type's mantissa (types with one
NaN encoding take none) and is not kept in the value -- and returns an array of
`numpy_dtype(shape.element_type)` with `shape.dims`. Integers must fit the element type
(no silent wrap-around, except XLA's u64 read as s64: -1 is 2^64 - 1); floats are not
accepted for integer types, and a finite float that rounds to infinity in its type is out
of range (XLA's rule). Anything else raises
LiteralError(message, offset) where offset indexes `text`.
`format_literal(array, shape)` prints the way XLA does: floats with C's %g at the type's
digits10 precision, falling back to max_digits10 when that does not round-trip
(XLA's RoundTripFpToString), integers in decimal, pred as 1 / 0 (as XLA prints it).
"""

from __future__ import annotations

import math
import re
from typing import Protocol

import numpy as np

from tilecc.hlo.types import PrimitiveType, Shape, is_complex, is_floating, numpy_dtype
from tilecc.limits import limit


class ScalarLike(Protocol):
    """One element handed to format_scalar: a Python scalar (`.item()`), a NumPy scalar (an
    element of a 1-d array) or a 0-d float or complex array (kept whole so narrow floats keep
    their type); complex values are read with complex(), which NumPy values support."""

    def __float__(self) -> float: ...

    def __int__(self) -> int: ...

# XLA annotates literals of rank >= 3 with index comments: `{ /*i0=0*/ { /*i1=0*/ {1, 2} } }`.
_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_TOKEN = re.compile(r"(?:\s|/\*.*?\*/)*(?:([{}(),])|(-?nan\(0x[0-9a-fA-F]+\)|[^\s{}(),]+))",
                    re.S)
_NAN_PAYLOAD = re.compile(r"(-?)nan\((0x[0-9a-fA-F]+)\)")

# (digits10, max_digits10) per float type, as std::numeric_limits gives them in XLA.
_FLOAT_DIGITS = {
    PrimitiveType.F64: (15, 17), PrimitiveType.F32: (6, 9), PrimitiveType.F16: (3, 5),
    PrimitiveType.BF16: (2, 4), PrimitiveType.C64: (6, 9), PrimitiveType.C128: (15, 17),
}


MAX_ARRAY_RANK = 64   # numpy's own bound on dimensions (1.x and 2.x): a fixed rule


class LiteralError(ValueError):
    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


def _tokens(text: str) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    pos = 0
    end = len(text.rstrip())
    if text.rstrip().endswith("*/"):
        end = len(_COMMENT.sub(lambda m: " " * len(m.group(0)), text).rstrip())
    while pos < end:
        m = _TOKEN.match(text, pos)
        if m is None:  # pragma: no cover - the pattern matches any non-space character
            raise LiteralError("unreadable literal", pos)
        out.append((m.group(1) or m.group(2), m.start(m.lastindex or 0)))
        pos = m.end()
    return out


def _convert_scalar(token: str, offset: int, et: PrimitiveType) -> bool | int | float:
    if et == PrimitiveType.PRED:
        if token in ("true", "1"):
            return True
        if token in ("false", "0"):
            return False
        raise LiteralError(f"expected true or false for pred, got '{token}'", offset)
    if is_floating(et) or is_complex(et):
        if token.endswith(")") and (nan := _NAN_PAYLOAD.fullmatch(token)) is not None:
            return _nan_with_payload(nan, offset, et)
        try:
            value_f = float(token)
        except ValueError:
            raise LiteralError(f"expected a number, got '{token}'", offset) from None
        if math.isfinite(value_f) and not np.isfinite(_narrow(value_f, et)):
            raise LiteralError(f"value {token} is out of range for {et.name.lower()} (it "
                               "rounds to infinity)", offset)
        if math.isinf(value_f) and "inf" not in token.lower():
            raise LiteralError(f"value {token} is out of range for a double", offset)
        return value_f
    try:
        value = int(token, 0) if token.lower().startswith(("0x", "-0x")) else int(token)
    except ValueError:
        raise LiteralError(f"expected an integer for {et.name.lower()}, got '{token}'",
                           offset) from None
    info = np.iinfo(numpy_dtype(et)) if et not in (PrimitiveType.S4, PrimitiveType.U4,
                                                   PrimitiveType.S2, PrimitiveType.U2) else None
    lo, hi = (int(info.min), int(info.max)) if info is not None else _subbyte_range(et)
    if et == PrimitiveType.U64 and -(1 << 63) <= value < 0:
        value += 1 << 64  # XLA reads a u64 as an s64 and keeps its bits: -1 is 2^64 - 1
    if not lo <= value <= hi:
        raise LiteralError(f"value {value} out of range for {et.name.lower()} [{lo}, {hi}]",
                           offset)
    return value


_PART_TYPE = {PrimitiveType.C64: PrimitiveType.F32, PrimitiveType.C128: PrimitiveType.F64}


def _nan_with_payload(nan: re.Match[str], offset: int, et: PrimitiveType) -> float:
    """`[-]nan(0x...)`: XLA's rule on the payload; the value is the signed NaN (the
    payload bits are not kept: the literal's text is, and printing reproduces it)."""
    name = et.name.lower()
    payload = int(nan.group(2), 16)
    if "fn" in name or is_complex(et):  # one NaN encoding (or none) in these types
        raise LiteralError(f"NaN payload {nan.group(2)}: {name} does not support payloads",
                           offset)
    limit = (1 << int(np.finfo(numpy_dtype(et)).nmant)) - 1
    if not 0 < payload <= limit:
        raise LiteralError(f"NaN payload {nan.group(2)} is out of range ({limit:#x}) for "
                           f"{name}", offset)
    return -math.nan if nan.group(1) else math.nan


def _narrow(value: float, et: PrimitiveType) -> float:
    """`value` rounded to the float type of `et` (a complex's part type)."""
    with np.errstate(over="ignore"):
        return float(np.float64(value).astype(numpy_dtype(_PART_TYPE.get(et, et))))


def _subbyte_range(et: PrimitiveType) -> tuple[int, int]:
    bits = 4 if et in (PrimitiveType.S4, PrimitiveType.U4) else 2
    if et in (PrimitiveType.U4, PrimitiveType.U2):
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


TupleLiteral = tuple["np.ndarray | TupleLiteral", ...]


def parse_tuple_literal(text: str, shape: Shape) -> TupleLiteral:
    """The value of a tuple constant, `(elem, elem, ...)` with one literal per tuple element
    (nested tuples in parentheses); LiteralError(message, offset into `text`) otherwise."""
    lead = len(text) - len(text.lstrip())
    body = text.strip()
    if not (body.startswith("(") and body.endswith(")")):
        raise LiteralError(f"expected '(' for a constant of shape {shape.to_text()}", lead)
    parts: list[tuple[int, int]] = []  # element spans in text
    depth, start = 0, lead + 1
    for k in range(lead + 1, lead + len(body) - 1):
        c = text[k]
        if c in "({":
            depth += 1
        elif c in ")}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append((start, k))
            start = k + 1
    if text[start:lead + len(body) - 1].strip() or parts:
        parts.append((start, lead + len(body) - 1))
    elements = shape.tuple_shapes
    if len(parts) != len(elements):
        raise LiteralError(f"{len(parts)} elements for a tuple of {len(elements)}", lead)
    values: list[np.ndarray | TupleLiteral] = []
    for (lo, hi), element in zip(parts, elements):
        try:
            values.append(parse_tuple_literal(text[lo:hi], element) if element.is_tuple
                          else parse_literal(text[lo:hi], element))
        except LiteralError as err:
            raise LiteralError(err.message, lo + err.offset) from None
    return tuple(values)


def parse_literal(text: str, shape: Shape) -> np.ndarray:
    """The array that `text` denotes for `shape` (see the module contract)."""
    if not shape.is_array:
        raise LiteralError(f"constants of shape {shape.to_text()} are not supported", 0)
    if shape.rank > MAX_ARRAY_RANK:
        raise LiteralError(f"{shape.rank} dimensions, more than the {MAX_ARRAY_RANK} an array "
                           "holds", 0)
    et = shape.element_type
    if shape.dims and (one := _ONE_SCALAR.fullmatch(text)) is not None and \
            shape.element_count() <= limit("elements"):
        # XLA's parser reads one scalar for an array as its element 0 (linear index), the
        # others zero: `s32[3] constant(4)` is {4, 0, 0} (measured on jaxlib 0.10.2, which
        # prints it so); an array of no elements has no element 0 (XLA refuses it too)
        scalar = parse_literal(one.group(1), Shape.array(et, ()))
        if shape.element_count() == 0:
            raise LiteralError("one value for an array of no elements: it sets element 0, "
                               "which is out of range", one.start(1))
        array = np.zeros(shape.dims, scalar.dtype)
        array.reshape(-1)[0] = scalar
        return array
    if (count := shape.element_count()) > len(text):
        # every element takes at least one character: refuse before building anything
        raise LiteralError(f"the shape has {count} elements but the literal is only "
                           f"{len(text)} characters long", 0)
    if count >= _BULK_MIN_ELEMENTS and (bulk := _parse_bulk(text, shape)) is not None:
        return bulk
    toks = _tokens(text)
    values: list[object] = []
    pos = _read_nested(toks, 0, shape.dims, 0, et, values, text)
    if pos != len(toks):
        raise LiteralError(f"unexpected '{toks[pos][0]}' after the literal", toks[pos][1])
    dtype = numpy_dtype(et)
    if is_complex(et):
        arr = np.array(values, dtype=np.complex128).astype(dtype)
    elif is_floating(et) and dtype.itemsize < 4:
        arr = np.array(values, dtype=np.float64).astype(dtype)
    else:
        arr = np.array(values, dtype=dtype)
    return arr.reshape(shape.dims)


_ONE_SCALAR = re.compile(r"\s*(-?nan\(0x[0-9a-fA-F]+\)|[^\s{}(),/]+)\s*")
_BULK_MIN_ELEMENTS = 64
_BULK_VALUE = re.compile(r"[^{},\s]+")


def _parse_bulk(text: str, shape: Shape) -> np.ndarray | None:
    """Big integer / float literals in one numpy conversion, or None to take the
    token-by-token path (which also produces the located error messages)."""
    et = shape.element_type
    if et == PrimitiveType.PRED or is_complex(et) or "nan" in text or "(" in text:
        return None
    skeleton = "x"
    for d in reversed(shape.dims):
        skeleton = "{" + ",".join([skeleton] * d) + "}"
    if "/*" in text:
        text = _COMMENT.sub(" ", text)
    if "".join(_BULK_VALUE.sub("x", text).split()) != skeleton:
        return None
    tokens = np.array(_BULK_VALUE.findall(text))
    dtype = numpy_dtype(et)
    try:
        if is_floating(et):
            wide_f = tokens.astype(np.float64)
            with np.errstate(over="ignore"):
                narrow = wide_f.astype(dtype)
            if not np.isfinite(narrow[np.isfinite(wide_f)]).all():
                return None  # out of range: the token path says which value
            return narrow.reshape(shape.dims)
        if et in _SUB_BYTE:
            return None
        wide = tokens.astype(np.int64 if dtype.kind == "i" else np.uint64)
    except (ValueError, OverflowError):
        return None
    info = np.iinfo(dtype)
    if wide.size and (wide.min() < info.min or wide.max() > info.max):
        return None
    return wide.astype(dtype).reshape(shape.dims)


_SUB_BYTE = (PrimitiveType.S4, PrimitiveType.U4, PrimitiveType.S2, PrimitiveType.U2)


def _read_nested(toks: list[tuple[str, int]], pos: int, dims: tuple[int, ...], depth: int,
                 et: PrimitiveType, out: list[object], text: str) -> int:
    """Read one value of rank len(dims)-depth starting at toks[pos]; return the next index."""
    if pos >= len(toks):
        raise LiteralError("literal ends early", len(text))
    tok, off = toks[pos]
    if depth == len(dims):
        if is_complex(et):
            return _read_complex(toks, pos, et, out, text)
        if tok in "{}(),":
            raise LiteralError(f"expected a scalar value, got '{tok}'", off)
        out.append(_convert_scalar(tok, off, et))
        return pos + 1
    if tok != "{":
        raise LiteralError(f"expected '{{' for dimension {depth} of size {dims[depth]}, got '{tok}'",
                           off)
    pos += 1
    count = 0
    while pos < len(toks) and toks[pos][0] != "}":
        if count:
            if toks[pos][0] != ",":
                raise LiteralError(f"expected ',' or '}}', got '{toks[pos][0]}'", toks[pos][1])
            pos += 1
        pos = _read_nested(toks, pos, dims, depth + 1, et, out, text)
        count += 1
    if pos >= len(toks):
        raise LiteralError("unbalanced '{' in literal", off)
    if count != dims[depth]:
        raise LiteralError(f"dimension {depth} has {count} elements, the shape says {dims[depth]}",
                           off)
    return pos + 1


def _read_complex(toks: list[tuple[str, int]], pos: int, et: PrimitiveType,
                  out: list[object], text: str) -> int:
    parts = [t for t, _ in toks[pos:pos + 5]]
    if len(parts) < 5 or parts[0] != "(" or parts[2] != "," or parts[4] != ")":
        raise LiteralError("expected a complex value (re, im)", toks[pos][1])
    re_, im = (_convert_scalar(parts[i], toks[pos + i][1], et) for i in (1, 3))
    out.append(complex(float(re_), float(im)))
    return pos + 5


def format_scalar(value: ScalarLike, et: PrimitiveType) -> str:
    if et == PrimitiveType.PRED:
        return "1" if bool(value) else "0"
    if is_complex(et):
        c = complex(value)
        return f"({_format_float(c.real, et)}, {_format_float(c.imag, et)})"
    if is_floating(et):
        return _format_float(value, et)
    return str(int(value))


def _format_float(value: ScalarLike, et: PrimitiveType) -> str:
    v = float(value)
    if v != v:
        return "-nan" if np.signbit(v) else "nan"
    if v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    short, full = _FLOAT_DIGITS.get(et, (2, 4))
    text = "%.*g" % (short, v)
    # XLA checks the round trip in float (double for f64 / c128), not in the narrow type:
    # bf16 0.1 prints as 0.1001 because float("0.1") != float(bf16(0.1)).
    wide = np.float64 if et in (PrimitiveType.F64, PrimitiveType.C128) else np.float32
    if wide(float(text)) != wide(v):
        text = "%.*g" % (full, v)
    return text


def format_literal(array: np.ndarray, shape: Shape) -> str:
    """XLA's text for `array` as a constant of `shape` (rank 0: a bare scalar)."""
    et = shape.element_type
    arr = np.asarray(array).reshape(shape.dims)
    if arr.ndim == 0:
        return format_scalar(arr if is_floating(et) or is_complex(et) else arr.item(), et)
    if arr.ndim == 1:
        return "{" + ", ".join(format_scalar(v, et) for v in arr) + "}"
    return "{ " + ", ".join(_format_nested(sub, et) for sub in arr) + " }"


def _format_nested(arr: np.ndarray, et: PrimitiveType) -> str:
    if arr.ndim == 1:
        return "{ " + ", ".join(format_scalar(v, et) for v in arr) + " }"
    return "{ " + ", ".join(_format_nested(sub, et) for sub in arr) + " }"
