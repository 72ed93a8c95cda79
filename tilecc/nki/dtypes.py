"""NKI data types: the `nl.<dtype>` names, their KLR Dtype spelling, numpy type and width.

Contract: a dtype inside the frontend is always the canonical NKI name (a str such as
"bfloat16"); `canonical_dtype` accepts that name, a numpy dtype / scalar type (np.float32,
ml_dtypes.bfloat16) or a string numpy understands, and raises ValueError otherwise.
`plain_number` turns numpy scalars into Python numbers wherever the API takes a number.
KLR spells the fp8 types of the Neuron docs float8e4 / float8e5 and tfloat32 float32r
(klr-bir.md, Dtype); `bool_` is stored as uint8, as NKI stores it in a byte.
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np


def plain_number(value: object) -> object:
    """A numpy scalar (np.int32(3), np.float32(0.5): sizes and constants a kernel computed
    with numpy) as the Python int / float / bool it holds; anything else unchanged."""
    return value.item() if isinstance(value, (np.integer, np.floating, np.bool_)) else value


@dataclass(frozen=True, slots=True)
class DtypeInfo:
    name: str          # canonical nl name
    klr: str           # KLR Dtype member name
    numpy: np.dtype    # host representation of one element
    size: int          # bytes per element on the device
    is_float: bool


def _info(name: str, klr: str, numpy_type: type[np.generic], size: int, is_float: bool) -> DtypeInfo:
    return DtypeInfo(name, klr, np.dtype(numpy_type), size, is_float)


DTYPES: dict[str, DtypeInfo] = {info.name: info for info in [
    _info("float32", "float32", np.float32, 4, True),
    _info("tfloat32", "float32r", np.float32, 4, True),
    _info("float16", "float16", np.float16, 2, True),
    _info("bfloat16", "bfloat16", ml_dtypes.bfloat16, 2, True),
    _info("float8_e4m3", "float8e4", ml_dtypes.float8_e4m3, 1, True),
    _info("float8_e5m2", "float8e5", ml_dtypes.float8_e5m2, 1, True),
    _info("float8_e4m3fn", "float8_e4m3fn", ml_dtypes.float8_e4m3fn, 1, True),
    _info("int8", "int8", np.int8, 1, False),
    _info("int16", "int16", np.int16, 2, False),
    _info("int32", "int32", np.int32, 4, False),
    _info("uint8", "uint8", np.uint8, 1, False),
    _info("uint16", "uint16", np.uint16, 2, False),
    _info("uint32", "uint32", np.uint32, 4, False),
    _info("bool_", "uint8", np.uint8, 1, False),
]}

# numpy dtype -> canonical name, for kernel inputs and dtype=np.float32 style arguments.
_FROM_NUMPY: dict[np.dtype, str] = {}
for _name, _dtype_info in DTYPES.items():
    if _name not in ("tfloat32", "bool_"):
        _FROM_NUMPY.setdefault(_dtype_info.numpy, _name)
_FROM_NUMPY[np.dtype(np.bool_)] = "bool_"

ALIASES = {"fp32": "float32", "bool": "bool_", "float8e4": "float8_e4m3", "float8e5": "float8_e5m2"}


def canonical_dtype(value: object) -> str:
    """The canonical nl dtype name of `value`; ValueError when it is not an NKI dtype."""
    if isinstance(value, str):
        name = ALIASES.get(value, value)
        if name in DTYPES:
            return name
    try:
        # any object on purpose: numpy decides what names a dtype, a TypeError is "not one"
        dtype = np.dtype(value)  # type: ignore[call-overload]
    except TypeError:
        raise ValueError(f"{value!r} is not an NKI dtype") from None
    if (found := _FROM_NUMPY.get(dtype)) is not None:
        return found
    raise ValueError(f"{dtype} is not an NKI dtype (expected one of {', '.join(DTYPES)})")


def dtype_info(name: str) -> DtypeInfo:
    return DTYPES[name]


def is_float(name: str) -> bool:
    return DTYPES[name].is_float
