"""Operator tokens: `nl.add`, `nl.exp` ... and the numpy ufuncs NKI also accepts for them.

Contract: an Op names one NKI operator and says what it is in KLR: an ALU op (`alu`, a KLR
AluOp member name), an activation function (`act`, a KLR ActivationFunc member name), or
both (nl.abs, nl.rsqrt). `resolve_op` turns whatever a kernel passed (an Op or a numpy
ufunc such as np.multiply) into an Op, or None. The named sets below are the restrictions
of the public NKI docstrings (nki/api/nki/isa/__init__.py); instructions check against them.

Shifts follow KLR's own NKI frontend (the klr 0.0.12 tool traces np.left_shift /
np.right_shift to logical_shift_left / logical_shift_right, shared/klr-0.0.12 k05): a right
shift fills with zeros whatever the dtype's signedness. nl.fmod and nl.mod are both the ALU
mod (C fmod: the sign of the dividend) when an instruction takes them as its op; the
tile-level nl.mod(x, y) is Python's modulus, as NKI documents it (tile_ops.floor_mod).

Calling an Op as a function (`nl.add(a, b)`, `nl.exp(x)`) is NKI's tile-level API: it
computes a new tile with one instruction (tilecc/nki/tile_ops.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tilecc.nki.operators import installed


@dataclass(frozen=True, slots=True)
class Op:
    name: str
    alu: str | None = None
    act: str | None = None
    unary: bool = False

    def __call__(self, *args: object, **kwargs: object) -> object:
        """NKI's tile-level form `nl.exp(x)`, `nl.add(a, b)`: a new tile (the instruction
        installed as "apply" by tilecc/nki/tile_ops.py; this table imports nothing above it)."""
        return installed("apply")(self, args, dict(kwargs))

    def __repr__(self) -> str:
        return f"nl.{self.name}"


def _alu(name: str, alu: str, unary: bool = False) -> Op:
    return Op(name, alu=alu, unary=unary)


def _act(name: str, act: str | None = None) -> Op:
    return Op(name, act=act or name)


ALL_OPS: dict[str, Op] = {op.name: op for op in [
    # arithmetic ALU ops
    _alu("add", "add"), _alu("subtract", "subtract"), _alu("multiply", "mult"),
    _alu("divide", "divide"), _alu("maximum", "max"), _alu("minimum", "min"),
    _alu("power", "pow"), _alu("fmod", "mod"), _alu("mod", "mod"), _alu("average", "average"),
    _alu("bypass", "bypass", unary=True),
    _alu("equal", "is_equal"), _alu("not_equal", "not_equal"), _alu("greater", "is_gt"),
    _alu("greater_equal", "is_ge"), _alu("less", "is_lt"), _alu("less_equal", "is_le"),
    _alu("logical_and", "logical_and"), _alu("logical_or", "logical_or"),
    _alu("logical_xor", "logical_xor"),
    # bitvec ALU ops
    _alu("bitwise_and", "bitwise_and"), _alu("bitwise_or", "bitwise_or"),
    _alu("bitwise_xor", "bitwise_xor"), _alu("invert", "bitwise_not", unary=True),
    _alu("left_shift", "logical_shift_left"), _alu("right_shift", "logical_shift_right"),
    # both an ALU op and an activation function
    Op("abs", alu="abs", act="abs", unary=True), Op("rsqrt", alu="rsqrt", act="rsqrt", unary=True),
    # activation functions
    *[_act(name) for name in [
        "exp", "log", "tanh", "sigmoid", "relu", "gelu", "gelu_apprx_tanh", "gelu_apprx_sigmoid",
        "gelu_dx", "gelu_apprx_sigmoid_dx", "silu", "silu_dx", "erf", "erf_dx", "mish",
        "softplus", "sqrt", "square", "sin", "arctan", "sign", "copy", "reciprocal"]],
]}
ALL_OPS["bitwise_not"] = ALL_OPS["invert"]
# max(|a|, |b|) / min(|a|, |b|): NKI operator names with no KLR AluOp (instructions refuse them)
ALL_OPS["abs_max"], ALL_OPS["abs_min"] = Op("abs_max"), Op("abs_min")

# nl.max / nl.min / nl.sum / nl.prod passed where an ALU operator is taken (op1=nl.max)
REDUCTION_ALU = {"max": "maximum", "min": "minimum", "sum": "add", "prod": "multiply"}

_NUMPY_OPS: dict[object, str] = {
    np.add: "add", np.subtract: "subtract", np.multiply: "multiply", np.divide: "divide",
    np.maximum: "maximum", np.minimum: "minimum", np.power: "power", np.fmod: "fmod",
    np.mod: "mod", np.equal: "equal", np.not_equal: "not_equal", np.greater: "greater",
    np.greater_equal: "greater_equal", np.less: "less", np.less_equal: "less_equal",
    np.logical_and: "logical_and", np.logical_or: "logical_or", np.logical_xor: "logical_xor",
    np.bitwise_and: "bitwise_and", np.bitwise_or: "bitwise_or", np.bitwise_xor: "bitwise_xor",
    np.invert: "invert", np.left_shift: "left_shift", np.right_shift: "right_shift",
    np.abs: "abs", np.exp: "exp", np.log: "log", np.tanh: "tanh", np.sqrt: "sqrt",
    np.square: "square", np.sin: "sin", np.arctan: "arctan", np.sign: "sign",
    np.reciprocal: "reciprocal",
    # the reductions kernels pass as a reduce_op / op1 (np.max, np.amax ...) are the ALU ops
    np.max: "maximum", np.amax: "maximum", np.min: "minimum", np.amin: "minimum",
    np.sum: "add", np.prod: "multiply",
}

# Bitvec ops act on raw integer bits (docs: "input/output data types must be integer types").
BITVEC_ALU = frozenset({"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
                        "arith_shift_left", "arith_shift_right", "logical_shift_left",
                        "logical_shift_right"})
# tensor_scalar_reduce: "reduce_op can be any of nl.add, nl.multiply, nl.max or nl.min".
SCALAR_REDUCE_OPS = frozenset({"add", "mult", "max", "min"})
# tensor_scalar_cumulative: "op1 is limited to add, subtract, mult, max, min".
CUMULATIVE_OPS = frozenset({"add", "subtract", "mult", "max", "min"})
# tensor_partition_reduce: "add, max, bitwise_or, bitwise_and" (+ average, klr-bir.md).
PARTITION_REDUCE_OPS = frozenset({"add", "max", "bitwise_or", "bitwise_and", "average"})
# activate2: the six supported (op0, op1) pairs of the tensor-scalar stage.
ACTIVATE2_PAIRS = frozenset({("mult", "add"), ("mult", "subtract"), ("mult", "bypass"),
                             ("add", "bypass"), ("subtract", "bypass"), ("bypass", "bypass")})
# activate2 reduce_op: add, maximum, minimum (abs_max / abs_min have no KLR AluOp).
ACTIVATE2_REDUCE_OPS = frozenset({"add", "max", "min"})


def resolve_op(value: object) -> Op | None:
    """The Op a kernel meant by `value` (an Op, a numpy ufunc, or an nl reduction such as
    nl.max, which published kernels pass as `op=` for the ALU op it folds with), or None."""
    if isinstance(value, Op):
        return value
    if isinstance(alias := getattr(value, "nki_op", None), str):   # nl.max as op1=nl.max
        return ALL_OPS[alias]
    try:
        name = _NUMPY_OPS.get(value)
    except TypeError:  # unhashable
        return None
    return ALL_OPS[name] if name is not None else None
