"""Every HLO opcode XLA prints, with its text mnemonic and arity, and named opcode sets.

Contract: `HloOpcode` has one member per entry of XLA's HLO_OPCODE_LIST
(xla/hlo/ir/hlo_opcode.h, including ops newer than some XLA releases, such as scaled-dot and
scan), so any real dump parses. `.mnemonic` is the text spelling, `.arity` the fixed operand
count or None for variadic ops. `opcode_from_mnemonic` is the inverse of `.mnemonic`.
The sets below (ELEMENTWISE_UNARY, ELEMENTWISE_BINARY, SIDE_EFFECTING, ...) are what gates
and tables name instead of listing members again.
"""

from __future__ import annotations

from enum import Enum

VARIADIC = None


class HloOpcode(Enum):
    """Member value = (mnemonic, arity); arity None means variadic."""

    ABS = ("abs", 1)
    ACOS = ("acos", 1)
    ACOSH = ("acosh", 1)
    ADD = ("add", 2)
    ADD_DEPENDENCY = ("add-dependency", 2)
    AFTER_ALL = ("after-all", VARIADIC)
    ALL_GATHER = ("all-gather", VARIADIC)
    ALL_GATHER_DONE = ("all-gather-done", 1)
    ALL_GATHER_START = ("all-gather-start", VARIADIC)
    ALL_REDUCE = ("all-reduce", VARIADIC)
    ALL_REDUCE_DONE = ("all-reduce-done", 1)
    ALL_REDUCE_START = ("all-reduce-start", VARIADIC)
    ALL_TO_ALL = ("all-to-all", VARIADIC)
    AND = ("and", 2)
    ASIN = ("asin", 1)
    ASINH = ("asinh", 1)
    ASYNC_DONE = ("async-done", 1)
    ASYNC_START = ("async-start", VARIADIC)
    ASYNC_UPDATE = ("async-update", VARIADIC)
    ATAN = ("atan", 1)
    ATAN2 = ("atan2", 2)
    ATANH = ("atanh", 1)
    BATCH_NORM_GRAD = ("batch-norm-grad", 5)
    BATCH_NORM_INFERENCE = ("batch-norm-inference", 5)
    BATCH_NORM_TRAINING = ("batch-norm-training", 3)
    BITCAST = ("bitcast", 1)
    BITCAST_CONVERT = ("bitcast-convert", 1)
    BROADCAST = ("broadcast", 1)
    CALL = ("call", VARIADIC)
    CBRT = ("cbrt", 1)
    CEIL = ("ceil", 1)
    CHOLESKY = ("cholesky", 1)
    CLAMP = ("clamp", 3)
    CLZ = ("count-leading-zeros", 1)
    COLLECTIVE_BROADCAST = ("collective-broadcast", VARIADIC)
    COLLECTIVE_PERMUTE = ("collective-permute", VARIADIC)
    COLLECTIVE_PERMUTE_DONE = ("collective-permute-done", 1)
    COLLECTIVE_PERMUTE_START = ("collective-permute-start", VARIADIC)
    COLLECTIVE_REDUCE = ("collective-reduce", VARIADIC)
    COMPARE = ("compare", 2)
    COMPLEX = ("complex", 2)
    CONCATENATE = ("concatenate", VARIADIC)
    CONDITIONAL = ("conditional", VARIADIC)
    CONSTANT = ("constant", 0)
    CONVERT = ("convert", 1)
    CONVOLUTION = ("convolution", VARIADIC)
    COPY = ("copy", 1)
    COPY_DONE = ("copy-done", 1)
    COPY_START = ("copy-start", 1)
    COS = ("cosine", 1)
    COSH = ("cosh", 1)
    CUSTOM_CALL = ("custom-call", VARIADIC)
    DIVIDE = ("divide", 2)
    DOMAIN = ("domain", 1)
    DOT = ("dot", 2)
    DYNAMIC_RESHAPE = ("dynamic-reshape", VARIADIC)
    DYNAMIC_SLICE = ("dynamic-slice", VARIADIC)
    DYNAMIC_UPDATE_SLICE = ("dynamic-update-slice", VARIADIC)
    ERF = ("erf", 1)
    EXP = ("exponential", 1)
    EXPM1 = ("exponential-minus-one", 1)
    FFT = ("fft", 1)
    FLOOR = ("floor", 1)
    FUSION = ("fusion", VARIADIC)
    GATHER = ("gather", 2)
    GET_DIMENSION_SIZE = ("get-dimension-size", 1)
    GET_TUPLE_ELEMENT = ("get-tuple-element", 1)
    IMAG = ("imag", 1)
    INFEED = ("infeed", 1)
    IOTA = ("iota", 0)
    IS_FINITE = ("is-finite", 1)
    LOG = ("log", 1)
    LOG1P = ("log-plus-one", 1)
    LOGISTIC = ("logistic", 1)
    MAP = ("map", VARIADIC)
    MAXIMUM = ("maximum", 2)
    MINIMUM = ("minimum", 2)
    MULHI = ("mulhi", 2)
    MULTIPLY = ("multiply", 2)
    NEGATE = ("negate", 1)
    NOT = ("not", 1)
    OPTIMIZATION_BARRIER = ("opt-barrier", 1)
    OR = ("or", 2)
    OUTFEED = ("outfeed", 2)
    PAD = ("pad", 2)
    PARAMETER = ("parameter", 0)
    PARTITION_ID = ("partition-id", 0)
    POPULATION_COUNT = ("popcnt", 1)
    POWER = ("power", 2)
    RAGGED_ALL_TO_ALL = ("ragged-all-to-all", 6)
    RAGGED_DOT = ("ragged-dot", 3)
    REAL = ("real", 1)
    RECV = ("recv", 1)
    RECV_DONE = ("recv-done", 1)
    REDUCE = ("reduce", VARIADIC)
    REDUCE_PRECISION = ("reduce-precision", 1)
    REDUCE_SCATTER = ("reduce-scatter", VARIADIC)
    REDUCE_WINDOW = ("reduce-window", VARIADIC)
    REMAINDER = ("remainder", 2)
    REPLICA_ID = ("replica-id", 0)
    RESHAPE = ("reshape", 1)
    REVERSE = ("reverse", 1)
    RNG = ("rng", VARIADIC)
    RNG_BIT_GENERATOR = ("rng-bit-generator", 1)
    RNG_GET_AND_UPDATE_STATE = ("rng-get-and-update-state", 0)
    ROUND_NEAREST_AFZ = ("round-nearest-afz", 1)
    ROUND_NEAREST_EVEN = ("round-nearest-even", 1)
    RSQRT = ("rsqrt", 1)
    SCALED_DOT = ("scaled-dot", 4)
    SCAN = ("scan", VARIADIC)
    SCATTER = ("scatter", VARIADIC)
    SELECT = ("select", 3)
    SELECT_AND_SCATTER = ("select-and-scatter", 3)
    SEND = ("send", 2)
    SEND_DONE = ("send-done", 1)
    SET_DIMENSION_SIZE = ("set-dimension-size", 2)
    SHIFT_LEFT = ("shift-left", 2)
    SHIFT_RIGHT_ARITHMETIC = ("shift-right-arithmetic", 2)
    SHIFT_RIGHT_LOGICAL = ("shift-right-logical", 2)
    SHUFFLE = ("shuffle", 1)
    SIGN = ("sign", 1)
    SIN = ("sine", 1)
    SINH = ("sinh", 1)
    SLICE = ("slice", 1)
    SORT = ("sort", VARIADIC)
    SQRT = ("sqrt", 1)
    STOCHASTIC_CONVERT = ("stochastic-convert", 2)
    SUBTRACT = ("subtract", 2)
    TAN = ("tan", 1)
    TANH = ("tanh", 1)
    TOPK = ("topk", 1)
    TRANSPOSE = ("transpose", 1)
    TRIANGULAR_SOLVE = ("triangular-solve", 2)
    TUPLE = ("tuple", VARIADIC)
    WHILE = ("while", 1)
    XOR = ("xor", 2)

    # Members are singletons: identity hashing keeps opcode sets and tables fast (Enum's own
    # __hash__ is a Python-level call).
    __hash__ = object.__hash__

    def __init__(self, mnemonic: str, arity: int | None) -> None:
        self.mnemonic = mnemonic
        self.arity = arity

    def __str__(self) -> str:
        return self.mnemonic

    def __repr__(self) -> str:
        return f"HloOpcode.{self.name}"


_BY_MNEMONIC: dict[str, HloOpcode] = {op.mnemonic: op for op in HloOpcode}


def opcode_from_mnemonic(mnemonic: str) -> HloOpcode:
    """'all-reduce' -> HloOpcode.ALL_REDUCE; raises KeyError for an unknown mnemonic."""
    return _BY_MNEMONIC[mnemonic]


def lookup_opcode(mnemonic: str) -> HloOpcode | None:
    """Like opcode_from_mnemonic, but None for an unknown mnemonic."""
    return _BY_MNEMONIC.get(mnemonic)


O = HloOpcode

ELEMENTWISE_UNARY = frozenset({
    O.ABS, O.ACOS, O.ACOSH, O.ASIN, O.ASINH, O.ATAN, O.ATANH, O.CBRT, O.CEIL, O.CLZ,
    O.CONVERT, O.BITCAST_CONVERT, O.COPY, O.COS, O.COSH, O.ERF, O.EXP, O.EXPM1, O.FLOOR,
    O.IMAG, O.IS_FINITE, O.LOG, O.LOG1P, O.LOGISTIC, O.NEGATE, O.NOT, O.POPULATION_COUNT,
    O.REAL, O.REDUCE_PRECISION, O.ROUND_NEAREST_AFZ, O.ROUND_NEAREST_EVEN, O.RSQRT, O.SIGN,
    O.SIN, O.SINH, O.SQRT, O.TAN, O.TANH})
"""One operand, result has the operand's dims (element type may change for convert etc.)."""

ELEMENTWISE_BINARY = frozenset({
    O.ADD, O.ATAN2, O.AND, O.COMPARE, O.COMPLEX, O.DIVIDE, O.MAXIMUM, O.MINIMUM, O.MULHI,
    O.MULTIPLY, O.OR, O.POWER, O.REMAINDER, O.SHIFT_LEFT, O.SHIFT_RIGHT_ARITHMETIC,
    O.SHIFT_RIGHT_LOGICAL, O.STOCHASTIC_CONVERT, O.SUBTRACT, O.XOR})
"""Two operands of equal dims; result has those dims."""

TYPE_PRESERVING_UNARY = ELEMENTWISE_UNARY - {
    O.CONVERT, O.BITCAST_CONVERT, O.IMAG, O.REAL, O.IS_FINITE}
"""Unary elementwise ops whose result element type equals the operand's."""

TYPE_PRESERVING_BINARY = ELEMENTWISE_BINARY - {O.COMPARE, O.COMPLEX, O.STOCHASTIC_CONVERT}
"""Binary elementwise ops whose result element type equals the operands'."""

ASYNC = frozenset({O.ASYNC_START, O.ASYNC_UPDATE, O.ASYNC_DONE})

COLLECTIVES = frozenset({
    O.ALL_GATHER, O.ALL_GATHER_START, O.ALL_REDUCE, O.ALL_REDUCE_START, O.ALL_TO_ALL,
    O.COLLECTIVE_BROADCAST, O.COLLECTIVE_PERMUTE, O.COLLECTIVE_PERMUTE_START,
    O.COLLECTIVE_REDUCE, O.RAGGED_ALL_TO_ALL, O.REDUCE_SCATTER})
"""Ops that communicate between replicas / partitions (the graphs label them with their groups)."""

SIDE_EFFECTING = frozenset({
    O.SEND, O.SEND_DONE, O.RECV, O.RECV_DONE, O.INFEED, O.OUTFEED, O.RNG,
    O.RNG_GET_AND_UPDATE_STATE, O.ALL_REDUCE_START, O.ALL_REDUCE_DONE, O.ALL_GATHER_START,
    O.ALL_GATHER_DONE, O.COLLECTIVE_BROADCAST, O.COLLECTIVE_PERMUTE_START,
    O.COLLECTIVE_PERMUTE_DONE, O.AFTER_ALL, O.ADD_DEPENDENCY})
"""Opcodes that are side-effecting by themselves, whatever their attributes (XLA's
HasSideEffectNoRecurse). rng / rng-get-and-update-state (older XLA lists them: dropping a
draw shifts the random sequence) and after-all / add-dependency (they exist only to order
things) are kept here on purpose, so dead-code removal never drops them. The rest of
XLA's rule is per instruction (HloInstruction.has_side_effect): CHANNEL_SIDE_EFFECTING
opcodes with constrain_layout=true (not collective-permute, which has no such flag) or a
channel_id, custom-call with custom_call_has_side_effect=true, and any instruction that
calls a side-effecting computation."""

CHANNEL_SIDE_EFFECTING = frozenset({
    O.ALL_GATHER, O.ALL_REDUCE, O.ALL_TO_ALL, O.REDUCE_SCATTER, O.COLLECTIVE_PERMUTE})
"""Collectives whose side effect depends on constrain_layout / channel_id (see above)."""

del O
