"""Element types of the simulated machine: BIR dtype -> numpy dtype, and the write converter.

Contract (NKI "Type Casting": values pass through float32 on their way to the destination):
- float32 values are written to a float destination with round-to-nearest-even
  (ml_dtypes for bfloat16 and the fp8 formats), to an integer destination rounded to
  nearest-even, saturated to the integer range, NaN -> 0;
- integer values (results of bitvec ops, integer copies) are written to an integer
  destination by their bits (numpy's wrapping astype), to a float one by value;
- float8e4 / float8_e4m3 are the IEEE-style e4m3 of ml_dtypes (max 240, with inf),
  float8_e4m3fn the finite-only one, float8e5 e5m2, float8e3 e3m4; float32r is float32.
  The packed x4 formats have no element view and raise SimError.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from tilecc.bir.enums import BirDtype
from tilecc.errors import SimError

NUMPY_DTYPES: dict[BirDtype, np.dtype] = {
    BirDtype.bfloat16: np.dtype(ml_dtypes.bfloat16),
    BirDtype.float8e3: np.dtype(ml_dtypes.float8_e3m4),
    BirDtype.float8e4: np.dtype(ml_dtypes.float8_e4m3),
    BirDtype.float8e5: np.dtype(ml_dtypes.float8_e5m2),
    BirDtype.float16: np.dtype(np.float16),
    BirDtype.float32: np.dtype(np.float32),
    BirDtype.float32r: np.dtype(np.float32),
    BirDtype.int8: np.dtype(np.int8),
    BirDtype.int16: np.dtype(np.int16),
    BirDtype.int64: np.dtype(np.int64),
    BirDtype.int32: np.dtype(np.int32),
    BirDtype.uint8: np.dtype(np.uint8),
    BirDtype.uint16: np.dtype(np.uint16),
    BirDtype.uint32: np.dtype(np.uint32),
    BirDtype.uint64: np.dtype(np.uint64),
    BirDtype.float8_e4m3: np.dtype(ml_dtypes.float8_e4m3),
    BirDtype.float8_e4m3fn: np.dtype(ml_dtypes.float8_e4m3fn),
}


def numpy_dtype(dtype: BirDtype) -> np.dtype:
    if (np_dtype := NUMPY_DTYPES.get(dtype)) is None:
        raise SimError(f"dtype {dtype.name} has no element view in the simulator")
    return np_dtype


def is_int(dtype: np.dtype) -> bool:
    return dtype.kind in "iu"


def convert(values: np.ndarray, dst: np.dtype) -> np.ndarray:
    """`values` as they are written to a `dst` element (module docstring)."""
    values = np.asarray(values)
    if values.dtype == dst:
        return values
    if is_int(dst) and not is_int(values.dtype):
        info = np.iinfo(dst)
        wide = np.rint(values.astype(np.float64))
        wide = np.where(np.isnan(wide), 0.0, wide)
        return np.clip(wide, info.min, info.max).astype(dst)
    return values.astype(dst)
