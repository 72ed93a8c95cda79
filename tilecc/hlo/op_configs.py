"""The attributes of fft, triangular-solve and scan, read and checked against the operand
shapes: one reading for the verifier's shape rules and the interpreter's steps.

Contract: `fft_config(inst)`, `triangular_solve_config(inst)` and `scan_config(inst)`
return the instruction's frozen config, or raise ValueError with one line saying what is
wrong (the verifier and the interpreter prefix it with the instruction's location);
`read_config(inst)` calls the one of the instruction's opcode (one of CONFIGURED).
A config is returned only when the instruction's own shape is the one XLA infers (XLA's
ShapeInference::InferFftShape / InferTriangularSolveShape, HloVerifier::HandleScan):
- fft: `fft_type=FFT|IFFT|RFFT|IRFFT`, `fft_length={n...}` of 1 to 3 sizes naming the
  last len(fft_length) dimensions. FFT / IFFT take a complex array and keep its shape;
  RFFT takes f32 / f64 whose transformed dimensions are fft_length and gives c64 / c128
  with the last dimension n/2+1 (0 stays 0); IRFFT takes a complex array whose transformed
  dimensions are fft_length but the last, which is n/2+1 (or 0 when n is 0), and gives the
  component type with the last dimension n.
- triangular-solve(a, b): `left_side`, `lower`, `unit_diagonal` (true / false, default
  false) and `transpose_a=NO_TRANSPOSE|TRANSPOSE|ADJOINT` (required: XLA's default is its
  invalid value); a and b float or complex of one type and rank >= 2, a's last two
  dimensions square and equal to b's dimension -2 (left side) or -1 (right side), equal
  batch dimensions in front; the result has b's shape.
- scan(inputs..., inits...): `dimensions={d}` (one), `num_carries=k` (the last k operands
  are the inits), `is_reverse`, `is_associative`; to_apply takes (input slices..., carries...)
  and gives (outputs..., new carries...) (one value when the result is not a tuple); an
  input and an output have the scan dimension, of one size, which their slices lack; a
  carry keeps its shape. Under `allow_mixed_precision` the float types of the computation
  may differ from the scan's (XLA's option).
"""

from __future__ import annotations

from dataclasses import dataclass

from tilecc.hlo.ir import HloInstruction
from tilecc.hlo.lexer import int_list
from tilecc.hlo.opcodes import HloOpcode
from tilecc.hlo.types import PrimitiveType, Shape, is_complex, is_floating

FFT_TYPES = ("FFT", "IFFT", "RFFT", "IRFFT")
TRANSPOSES = ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT")
_COMPLEX_OF = {PrimitiveType.F32: PrimitiveType.C64, PrimitiveType.F64: PrimitiveType.C128}
_PART_OF = {c: f for f, c in _COMPLEX_OF.items()}


@dataclass(frozen=True, slots=True)
class FftConfig:
    fft_type: str
    lengths: tuple[int, ...]

    @property
    def axes(self) -> tuple[int, ...]:
        """The transformed axes, counted from the end (-len .. -1)."""
        return tuple(range(-len(self.lengths), 0))


@dataclass(frozen=True, slots=True)
class TriangularSolveConfig:
    left_side: bool
    lower: bool
    unit_diagonal: bool
    transpose_a: str


@dataclass(frozen=True, slots=True)
class ScanConfig:
    dimension: int
    num_carries: int
    is_reverse: bool
    length: int
    """the size of the scan dimension"""


def _text(shape: Shape) -> str:
    return shape.to_text()


def _bool(inst: HloInstruction, key: str) -> bool:
    value = inst.attributes.get(key, "false")
    if value not in ("true", "false"):
        raise ValueError(f"{key}={value} must be true or false")
    return value == "true"


def _array_operand(inst: HloInstruction, k: int) -> Shape:
    if len(inst.operands) <= k or not inst.operands[k].shape.is_array:
        raise ValueError(f"operand {k} must be an array")
    return inst.operands[k].shape


def _expect(inst: HloInstruction, shape: Shape) -> None:
    if inst.shape.is_tuple or inst.shape.element_type != shape.element_type \
            or inst.shape.dims != shape.dims:
        raise ValueError(f"shape is {_text(inst.shape)}, expected {_text(shape)}")


def fft_config(inst: HloInstruction) -> FftConfig:
    """The fft's type and lengths; see the module contract."""
    fft_type = inst.attributes.get("fft_type")
    if fft_type not in FFT_TYPES:
        raise ValueError(f"fft_type={fft_type} must be one of {', '.join(FFT_TYPES)}")
    lengths = int_list(inst.attributes.get("fft_length", ""), "fft_length")
    if not 1 <= len(lengths) <= 3:
        raise ValueError(f"fft_length names 1 to 3 dimensions, got {len(lengths)}")
    x = _array_operand(inst, 0)
    if x.rank < len(lengths):
        raise ValueError(f"an fft of rank {len(lengths)} needs an operand of at least that "
                         f"rank, got {_text(x)}")
    t, dims, inner = x.element_type, list(x.dims), x.dims[-len(lengths):]
    if fft_type != "RFFT" and not is_complex(t):
        raise ValueError(f"{fft_type} takes a complex operand, got {_text(x)}")
    if fft_type == "RFFT":
        if t not in _COMPLEX_OF:
            raise ValueError(f"RFFT takes an f32 or f64 operand, got {_text(x)}")
        if inner != lengths:
            raise ValueError(f"RFFT of fft_length {_braced(lengths)} needs those last "
                             f"dimensions, got {_text(x)}")
        if lengths[-1]:
            dims[-1] = lengths[-1] // 2 + 1
        _expect(inst, Shape.array(_COMPLEX_OF[t], dims))
    elif fft_type == "IRFFT":
        half = lengths[-1] // 2 + 1
        # a zero-sized last dimension stays zero (XLA keeps zero sizes)
        if inner[:-1] != lengths[:-1] or ((inner[-1] or lengths[-1]) and inner[-1] != half):
            raise ValueError(f"IRFFT of fft_length {_braced(lengths)} needs last dimensions "
                             f"{_braced(lengths[:-1] + (half,))}, got {_text(x)}")
        dims[-1] = lengths[-1]
        _expect(inst, Shape.array(_PART_OF[t], dims))
    else:
        _expect(inst, x)
    return FftConfig(fft_type, lengths)


def _braced(values: tuple[int, ...]) -> str:
    return "{" + ",".join(map(str, values)) + "}"


def triangular_solve_config(inst: HloInstruction) -> TriangularSolveConfig:
    """The solve's options; see the module contract."""
    transpose = inst.attributes.get("transpose_a")
    if transpose not in TRANSPOSES:
        raise ValueError(f"transpose_a={transpose} must be one of {', '.join(TRANSPOSES)}")
    config = TriangularSolveConfig(_bool(inst, "left_side"), _bool(inst, "lower"),
                                   _bool(inst, "unit_diagonal"), transpose)
    a, b = _array_operand(inst, 0), _array_operand(inst, 1)
    t = a.element_type
    if not (is_floating(t) or is_complex(t)) or b.element_type != t:
        raise ValueError(f"a and b must be float or complex of one type, got {_text(a)} "
                         f"and {_text(b)}")
    if a.rank < 2 or b.rank != a.rank:
        raise ValueError(f"a and b must have one rank of at least 2, got {_text(a)} and "
                         f"{_text(b)}")
    n = a.dims[-1]
    if a.dims[-2] != n:
        raise ValueError(f"a's last two dimensions must be square, got {_text(a)}")
    shared = -2 if config.left_side else -1
    if b.dims[shared] != n:
        raise ValueError(f"b's dimension {b.rank + shared} must be a's {n} (left_side="
                         f"{str(config.left_side).lower()}), got {_text(b)}")
    if a.dims[:-2] != b.dims[:-2]:
        raise ValueError(f"a and b must have the same batch dimensions, got {_text(a)} and "
                         f"{_text(b)}")
    _expect(inst, b)
    return config


def scan_config(inst: HloInstruction, allow_mixed_precision: bool = False) -> ScanConfig:
    """The scan's dimension, carry count, direction and length; see the module contract."""
    dims = inst.dimensions or ()
    if len(dims) != 1 or dims[0] < 0:
        raise ValueError(f"dimensions={_braced(tuple(dims))} must name one dimension")
    carries_text = inst.attributes.get("num_carries", "")
    if not carries_text.isdigit():
        raise ValueError(f"num_carries={carries_text or '?'} must be a count")
    carries, dim = int(carries_text), dims[0]
    is_reverse = _bool(inst, "is_reverse")
    _bool(inst, "is_associative")  # a hint for XLA's rewrites: the result is the same
    comp = inst.to_apply
    if comp is None:
        raise ValueError("has no to_apply computation")
    operands = [o.shape for o in inst.operands]
    results = list(inst.shape.tuple_shapes) if inst.shape.is_tuple else [inst.shape]
    root = comp.root.shape if comp.root is not None else Shape.tuple([])
    roots = list(root.tuple_shapes) if root.is_tuple else [root]
    if carries > len(operands) or carries > len(results):
        raise ValueError(f"num_carries={carries} is more than the {len(operands)} operands "
                         f"or {len(results)} results")
    if len(operands) == carries and len(results) == carries:
        raise ValueError("has no inputs and no outputs")
    if len(comp.parameters) != len(operands):
        raise ValueError(f"{comp.name} takes {len(comp.parameters)} parameters for "
                         f"{len(operands)} operands")
    if len(roots) != len(results):
        raise ValueError(f"{comp.name} gives {len(roots)} values for {len(results)} results")
    inputs, outputs = len(operands) - carries, len(results) - carries
    scanned = operands[:inputs] + results[:outputs]
    if any(not s.is_array or s.rank <= dim for s in scanned):
        raise ValueError(f"scan dimension {dim} is out of range of an input or output")
    length = scanned[0].dims[dim]
    if any(s.dims[dim] != length for s in scanned):
        raise ValueError(f"inputs and outputs disagree on the size of scan dimension {dim}: "
                         f"{', '.join(_text(s) for s in scanned)}")
    same = _fp_equal if allow_mixed_precision else _equal
    for k, (s, p) in enumerate(zip(operands, comp.parameters)):
        want = _drop(s, dim) if k < inputs else s
        if not same(p.shape, want):
            raise ValueError(f"{comp.name} parameter {k} is {_text(p.shape)}, expected "
                             f"{_text(want)}")
    for k in range(carries):
        if not same(comp.parameters[inputs + k].shape, roots[outputs + k]):
            raise ValueError(f"{comp.name} gives carry {k} as {_text(roots[outputs + k])}, "
                             f"takes it as {_text(comp.parameters[inputs + k].shape)}")
    for k, (s, r) in enumerate(zip(results, roots)):
        want = _drop(s, dim) if k < outputs else s
        if not same(r, want):
            raise ValueError(f"{comp.name} gives result {k} as {_text(r)}, expected "
                             f"{_text(want)}")
    return ScanConfig(dim, carries, is_reverse, length)


def _drop(shape: Shape, dim: int) -> Shape:
    return Shape.array(shape.element_type, shape.dims[:dim] + shape.dims[dim + 1:])


def _equal(a: Shape, b: Shape) -> bool:
    if a.is_tuple or b.is_tuple:
        return a.is_tuple and b.is_tuple and len(a.tuple_shapes) == len(b.tuple_shapes) \
            and all(_equal(x, y) for x, y in zip(a.tuple_shapes, b.tuple_shapes))
    return a.element_type == b.element_type and a.dims == b.dims


def _fp_equal(a: Shape, b: Shape) -> bool:
    """Equal but for the width of float (or complex) element types."""
    if a.is_tuple or b.is_tuple:
        return a.is_tuple and b.is_tuple and len(a.tuple_shapes) == len(b.tuple_shapes) \
            and all(_fp_equal(x, y) for x, y in zip(a.tuple_shapes, b.tuple_shapes))
    kinds = (is_floating(a.element_type) and is_floating(b.element_type)) or \
        (is_complex(a.element_type) and is_complex(b.element_type))
    return (a.element_type == b.element_type or kinds) and a.dims == b.dims


def read_config(inst: HloInstruction, allow_mixed_precision: bool = False) -> object:
    """The config of an instruction whose opcode is one of CONFIGURED."""
    if inst.opcode is HloOpcode.SCAN:
        return scan_config(inst, allow_mixed_precision)
    return CONFIGURED[inst.opcode](inst)


CONFIGURED = {HloOpcode.FFT: fft_config, HloOpcode.TRIANGULAR_SOLVE: triangular_solve_config,
              HloOpcode.SCAN: scan_config}
"""Opcode -> the reader of its config."""
