"""Seeded random inputs for an HLO module's entry parameters, covering every dtype's corners.

Contract: `random_inputs(module, replicas, seed, partitions=1)` returns one array per entry
parameter (a tuple parameter: a tuple of them, nested as its shape), shaped
(replicas * partitions, *dims) with the parameter's numpy dtype, the same
for the same (module parameters, replicas, seed). Devices get independent values.
- integers: uniform over the type's full range, and about a quarter of the elements replaced
  by extremes (INT_MIN, INT_MIN + 1, INT_MAX, INT_MAX - 1, 0, 1, -1, 2); the sub-byte
  integers (s4 / u4 / s2 / u2, ml_dtypes' int4 / uint4 / int2 / uint2, one byte per
  element) alike over their own range, drawn as 8-bit integers;
- floats: signed values with random exponents across a wide range (clamped to the type's
  finite range), and about a fifth replaced by specials (NaN, +-inf, +-0, +-max, +-tiny, +-1);
- complex (c64 / c128): real and imaginary parts drawn independently as floats of the
  component type (f32 / f64), specials included;
- pred: fair coin flips.
`entry_inputs(module, devices, rng, given, rows)` is the one way a run picks its inputs
(`tilecc run`, `hlo-opt --verify`, their MPI forms): per entry parameter, the value in
`given` (by parameter number) or else the random one; a random value is drawn for every
parameter, given or not, so a parameter's values never depend on which others were given.
With `rows` (device ids), only those devices' rows are kept, as a contiguous copy (of every
leaf of a tuple), and each full draw is dropped before the next parameter's (an MPI
process's share).
`loop_safe(module, inputs)` folds the integers of the parameters that may bound a while
loop into [0, 3], the same on every device, so such loops end. A token parameter gets the interpreter's token, an empty (devices, 0) pred array; a tuple
parameter a tuple of values, nested as its shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import ml_dtypes
import numpy as np

from tilecc.errors import InterpError
from tilecc.hlo.ir import HloModule
from tilecc.hlo.loop_bounds import loop_bound_parameters
from tilecc.hlo.types import (UNBOUNDED, PrimitiveType, Shape, is_complex, is_floating,
                              numpy_dtype, primitive_type_name)

_INTEGER_SHARE_OF_EXTREMES = 0.25
_FLOAT_SHARE_OF_SPECIALS = 0.2


_SUB_BYTE_INTEGERS = frozenset(np.dtype(getattr(ml_dtypes, name))
                               for name in ("int4", "uint4", "int2", "uint2"))


def is_integer_dtype(dtype: np.dtype) -> bool:
    """True for numpy's integers and ml_dtypes' sub-byte ones (whose numpy kind is "V", as
    for ml_dtypes' floats)."""
    return dtype.kind in "iu" or dtype in _SUB_BYTE_INTEGERS


# numpy's NPY_MAXDIMS (numpy 2): arrays of more dimensions cannot be made
NUMPY_MAX_DIMS = 64


def random_inputs(module: HloModule, replicas: int, seed: int,
                  partitions: int = 1) -> list[Any]:
    """One array per entry parameter; see the module contract."""
    return entry_inputs(module, replicas * partitions, np.random.default_rng(seed))


def entry_inputs(module: HloModule, devices: int, rng: np.random.Generator,
                 given: Mapping[int, np.ndarray] | None = None,
                 rows: np.ndarray | None = None) -> list[Any]:
    """Given or drawn values of every entry parameter; see the module contract."""
    if module.entry is None:
        raise InterpError(f"module {module.name} has no entry computation")
    inputs = []
    for param in module.entry.parameters:
        drawn = random_value(param.shape, devices, rng, param.name)
        chosen = (given or {}).get(param.parameter_number or 0, drawn)
        inputs.append(chosen if rows is None else _rows_of(chosen, rows))
        del drawn, chosen
    return inputs


def _rows_of(value: Any, rows: np.ndarray) -> Any:
    if isinstance(value, tuple):
        return tuple(_rows_of(v, rows) for v in value)
    return np.ascontiguousarray(value[rows])


def random_value(shape: Shape, devices: int, rng: np.random.Generator,
                 what: str = "value") -> Any:
    """random_array for an array shape; for a tuple shape a tuple of them, nested as the
    shape (elements drawn depth-first, in XLA's flattened parameter order); a token gets
    the interpreter's token value, an empty (devices, 0) pred array."""
    if shape.is_tuple:
        return tuple(random_value(s, devices, rng, f"{what}[{k}]")
                     for k, s in enumerate(shape.tuple_shapes))
    if shape.is_token:  # the interpreter's token: no data (interp.async_steps)
        return np.zeros((devices, 0), np.bool_)
    return random_array(shape, devices, rng, what)


def random_array(shape: Shape, devices: int, rng: np.random.Generator,
                 what: str = "value") -> np.ndarray:
    """A (devices, *shape.dims) array of `shape`'s element type; see the module contract."""
    t = shape.element_type
    if not shape.is_array:
        raise InterpError(f"{what}: cannot make random values of shape {shape}")
    full = (devices,) + shape.dims
    if UNBOUNDED in shape.dims:
        raise InterpError(f"{what}: {shape.to_text()} has an unbounded dynamic dimension (?), "
                          "which no array has")
    if len(full) > NUMPY_MAX_DIMS:
        raise InterpError(f"{what}: {shape.element_type.name.lower()} array of "
                          f"{len(shape.dims)} dimensions; numpy arrays (with the device axis) "
                          f"have at most {NUMPY_MAX_DIMS}")
    if is_complex(t):
        dtype = numpy_dtype(t)
        part = np.float32 if dtype == np.complex64 else np.float64
        real = _random_floats(np.dtype(part), full, rng)
        imag = _random_floats(np.dtype(part), full, rng)
        values = np.empty(full, dtype)
        values.real, values.imag = real, imag
        return values
    if t == PrimitiveType.PRED:
        return rng.integers(0, 2, size=full).astype(np.bool_)
    if is_floating(t):
        return _random_floats(numpy_dtype(t), full, rng)
    try:
        dtype = numpy_dtype(t)
        info = ml_dtypes.iinfo(dtype)  # numpy's iinfo does not know the sub-byte integers
    except (ValueError, TypeError) as exc:
        raise InterpError(f"{what}: no random values for {primitive_type_name(t)}") from exc
    return _random_integers(dtype, info, full, rng)


def _random_integers(dtype: np.dtype, info: Any, shape: tuple[int, ...],
                     rng: np.random.Generator) -> np.ndarray:
    # numpy draws only its own integer types: a sub-byte type's values as 8-bit ones
    draw = dtype if dtype.kind in "iu" else np.dtype(np.int8 if info.min < 0 else np.uint8)
    values = rng.integers(int(info.min), int(info.max), size=shape, dtype=draw, endpoint=True)
    extremes = np.array([v for v in (int(info.min), int(info.min) + 1, int(info.max),
                                     int(info.max) - 1, 0, 1, -1, 2)
                         if info.min <= v <= info.max], dtype=draw)
    replace = rng.random(shape) < _INTEGER_SHARE_OF_EXTREMES
    chosen = np.where(replace, extremes[rng.integers(0, extremes.size, size=shape)], values)
    return chosen.astype(dtype, copy=False)


def _random_floats(dtype: np.dtype, shape: tuple[int, ...],
                   rng: np.random.Generator) -> np.ndarray:
    finfo = ml_dtypes.finfo(dtype)
    max_exponent = min(int(np.log2(float(finfo.max))), 60)
    exponents = rng.integers(-max_exponent, max_exponent, size=shape, endpoint=True)
    mantissas = rng.uniform(1.0, 2.0, size=shape)
    signs = np.where(rng.random(shape) < 0.5, -1.0, 1.0)
    values = signs * mantissas * np.exp2(exponents.astype(np.float64))
    values = np.clip(values, -float(finfo.max), float(finfo.max))
    big, tiny = float(finfo.max), float(finfo.tiny)
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, big, -big, tiny, -tiny, 1.0,
                         -1.0], dtype=np.float64)
    replace = rng.random(shape) < _FLOAT_SHARE_OF_SPECIALS
    chosen = np.where(replace, specials[rng.integers(0, specials.size, size=shape)], values)
    return chosen.astype(dtype)


LOOP_BOUND_TOP = 3
"""Integers of a loop-bound parameter are drawn in [0, LOOP_BOUND_TOP] by loop_safe."""


def loop_safe(module: HloModule, inputs: list[Any]) -> list[Any]:
    """`inputs` with the integers of every parameter that may bound a while loop
    (loop_bounds.loop_bound_parameters) folded into [0, LOOP_BOUND_TOP] (|x| modulo 4), so a
    loop counting up to such a value, or down from it, ends within that many trips, and
    device 0's value of such a parameter given to every device, so all devices take the
    same trips (a collective inside the loop waits for every device on XLA CPU)."""
    bound = {int(name[1:]) for name in loop_bound_parameters(module)}
    return [_folded(value) if k in bound else value for k, value in enumerate(inputs)]


def _folded(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_folded(v) for v in value)
    if not is_integer_dtype(value.dtype):
        return value
    first = np.broadcast_to(value[:1], value.shape)
    return (np.abs(first.astype(np.int64)) % (LOOP_BOUND_TOP + 1)).astype(value.dtype)
