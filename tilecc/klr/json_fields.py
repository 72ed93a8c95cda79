"""JSON field readers shared by the KLR and BIR JSON decoders, and their failure `Bad`.

Contract: each `read_*` returns the value of one JSON scalar or raises `Bad` naming what was
expected and what was found; `at` / `bad_at` / `field` prepend keys to the path of a Bad
while it propagates, so the success path builds no path strings. `Bad.path()` renders the
location (`body[0].oper.op.tensorScalar.op0`); callers turn it into a ParseError.
"""

from __future__ import annotations

import struct
from enum import IntEnum
from typing import Any, Callable

INT32_MIN, INT32_MAX = -(2 ** 31), 2 ** 31 - 1


class Bad(Exception):
    """A decoding failure; `parts` collects the path innermost first."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.parts: list[str | int] = []

    def path(self) -> str:
        out = ""
        for part in reversed(self.parts):
            out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
        return out


def at(key: str | int, read: Callable[[Any], Any], value: Any) -> Any:
    """read(value), with `key` prepended to the path of a failure."""
    try:
        return read(value)
    except Bad as bad:
        bad.parts.append(key)
        raise


def bad_at(key: str | int, message: str) -> Bad:
    """A failure located at `key` of the object being decoded."""
    bad = Bad(message)
    bad.parts.append(key)
    return bad


def expect_obj(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise Bad(f"expected {what} (a JSON object), found {describe(value)}")
    return value


def one_ctor(value: Any, what: str) -> tuple[str, Any]:
    """A Lean constructor: a string (nullary) or an object with exactly one key."""
    if isinstance(value, str):
        return value, None
    if isinstance(value, dict) and len(value) == 1:
        return next(iter(value.items()))
    raise Bad(f"expected {what} (a string or a one-key object), found {describe(value)}")


def field(obj: dict[str, Any], key: str, read: Callable[[Any], Any]) -> Any:
    if key not in obj:
        raise Bad(f"missing field '{key}'")
    return at(key, read, obj[key])


def describe(value: Any) -> str:
    if isinstance(value, dict):
        return "an object with keys " + ", ".join(sorted(map(str, value))) if value else "{}"
    return json_type(value)


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the string '{value}'"
    return "an array"


def read_nat(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise Bad(f"expected a natural number, found {json_type(value)}")
    return value


def read_int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise Bad(f"expected an integer, found {json_type(value)}")
    return value


def read_bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise Bad(f"expected true or false, found {json_type(value)}")
    return value


def read_str(value: Any) -> str:
    if not isinstance(value, str):
        raise Bad(f"expected a string, found {json_type(value)}")
    return value


_F32 = struct.Struct("<f")


def read_float32(value: Any) -> float:
    """A Float32: a JSON number or "inf" / "-inf" / "nan", rounded to float32."""
    if isinstance(value, str) and value in ("inf", "-inf", "nan"):
        return float(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Bad(f"expected a float, found {json_type(value)}")
    try:
        return _F32.unpack(_F32.pack(value))[0]
    except OverflowError:
        raise Bad(f"float {value} does not fit float32") from None


def read_int32(value: Any) -> int:
    v = read_int(value)
    if not INT32_MIN <= v <= INT32_MAX:
        raise Bad(f"integer {v} does not fit Int32")
    return v


def enum_reader(enum: type[IntEnum]) -> Callable[[Any], IntEnum]:
    members = {m.name: m for m in enum}  # by name: KLR's `None` is the member None_ renamed

    def read(value: Any) -> IntEnum:
        if isinstance(value, str) and value in members:
            return members[value]
        raise Bad(f"unknown {enum.__name__} " + (f"'{value}'" if isinstance(value, str)
                                                 else json_type(value)))
    return read
