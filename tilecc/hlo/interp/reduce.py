"""Reductions for the interpreter: a numpy fast path for XLA's standard reducers and a
generic path that runs any `to_apply` computation vectorized.

Contract: `reducer_opcode(comp)` returns the binary opcode of a computation whose root is
`op(parameter(0), parameter(1))` (either order) on scalars, else None -- XLA's
MatchReductionComputation plus and / or / xor on integers. `fast_reduce` reduces axes of an
array with that opcode's exact semantics (integers wrap, PRED and / or are logical, narrow
floats accumulate in f32 and round once, subnormals flushed as XLA CPU does).
`reduce_with_init` applies the init value as often as XLA CPU does (`init_uses`) and, for
f16 / bf16 add and multiply along one axis, follows XLA CPU's window split and step-by-step
rounding bit for bit (`narrow_fold`); f32 / f64 sums and multi-axis narrow sums may differ
from XLA CPU's order in the last bits.

A non-identity init value (XLA requires an identity, jax's lax.reduce does not check):
XLA CPU's result is deterministic and explained by two rewrites (measured on jaxlib 0.10.2
with add / multiply / xor / max reducers over s8 / u8 / s32 / s64 / f16 / bf16 / f32 / f64,
1-d to 3-d operands, any reduced axes, either layout; layouts do not matter):
- a reduce of one element (every reduced axis of size <= 1, at least one element) becomes
  a reshape: the init value is not used at all (max(x, 5) over one element gives x);
- TreeReductionRewriter: while a reduced axis is longer than 32, the reduce becomes a
  reduce-window with window min(size, 32) on every reduced axis (SAME padding, padding
  skipped) and a reduce of its ceil(size / 32) partial results; every window starts from
  the init value, and so does the final reduce. Over n elements of one axis the init is
  applied ceil(n/32) + ... + 1 times: 3 for n = 33, 33 for 1024, 36 for 1025, 1293 for
  40000; over (40, 50) reduced whole, 2 * 2 + 1 = 5 times;
- except that an f32 / f64 add reduce whose operand has at least 4096 elements
  (FLOAT_SINGLE_INIT_ELEMENTS; 4095 still goes through the windows) applies the init once,
  whatever the reduced axes ((64, 64) summed along one axis: once); multiply keeps the
  window count there (1.01 * the product of 4096 ones gives 1.01^133).
The count makes integer results exact (init added k times with wrap-around, multiplied
k times, xor-ed k times, max / min / and / or applied once when k >= 1); for f32 / f64
the k-fold init is added in one rounding, within the last-bits tolerance of those sums.
Reducers other than the standard ones apply the init as interp.reduce_order says.
`tree_reduce` combines columns of (M, K) arrays pairwise with a callable that evaluates the
reducer computation on whole lanes, so a reduction of K elements costs log2(K) vectorized
calls; XLA requires reducers to be associative and commutative, which makes the pairing
order irrelevant for them. `collective_reduce` reduces the members of a collective group
as XLA CPU's collectives do (see its docstring for where that differs from reduce).
Reducers that are computations reduce in XLA CPU's order (interp.reduce_order).
`parse_window` / `window_dilations` read a window attribute (reduce-window itself:
interp.reduce_window).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from tilecc.errors import InterpError
from tilecc.hlo.interp import sub_byte as sb
from tilecc.hlo.interp.elementwise import binary, binary_op, flush_subnormals
from tilecc.hlo.ir import HloComputation
from tilecc.hlo.opcodes import HloOpcode as Op
from tilecc.hlo.interp.values import Array, LaneCombiner
from tilecc.hlo.types import PrimitiveType, is_complex, is_floating, numpy_dtype

_FAST_REDUCERS = frozenset({Op.ADD, Op.MULTIPLY, Op.MAXIMUM, Op.MINIMUM, Op.AND, Op.OR, Op.XOR})

_INT_UFUNCS = {Op.ADD: np.add, Op.MULTIPLY: np.multiply, Op.MAXIMUM: np.maximum,
               Op.MINIMUM: np.minimum, Op.AND: np.bitwise_and, Op.OR: np.bitwise_or,
               Op.XOR: np.bitwise_xor}
_PRED_UFUNCS = {Op.ADD: np.logical_or, Op.MULTIPLY: np.logical_and, Op.MAXIMUM: np.logical_or,
                Op.MINIMUM: np.logical_and, Op.AND: np.logical_and, Op.OR: np.logical_or,
                Op.XOR: np.logical_xor}
_FLOAT_UFUNCS = {Op.ADD: np.add, Op.MULTIPLY: np.multiply, Op.MAXIMUM: np.maximum,
                 Op.MINIMUM: np.minimum}
# complex values have no order: add / multiply are their only standard reducers
_COMPLEX_UFUNCS = {Op.ADD: np.add, Op.MULTIPLY: np.multiply}


def reducer_opcode(comp: HloComputation) -> Op | None:
    """The opcode of a standard two-parameter scalar reducer, or None."""
    root = comp.root
    if root is None or root.opcode not in _FAST_REDUCERS or len(comp.parameters) != 2:
        return None
    if root.shape.dims or not root.shape.is_array:
        return None
    if {id(op) for op in root.operands} != {id(p) for p in comp.parameters}:
        return None
    t = root.shape.element_type
    if is_floating(t) and root.opcode not in _FLOAT_UFUNCS or \
            is_complex(t) and root.opcode not in _COMPLEX_UFUNCS:
        return None
    if any(p.shape.element_type != t or p.shape.dims for p in comp.parameters):
        return None
    return root.opcode


def fast_reduce(opcode: Op, t: PrimitiveType, x: Array, axes: tuple[int, ...]) -> Array:
    """Reduce `axes` of x (no init value); every reduced axis must be non-empty."""
    if t == PrimitiveType.PRED:
        return _PRED_UFUNCS[opcode].reduce(x, axis=axes)
    if is_complex(t):
        return _COMPLEX_UFUNCS[opcode].reduce(x, axis=axes)
    if is_floating(t):
        wide = np.float64 if t == PrimitiveType.F64 else np.float32
        reduced = _FLOAT_UFUNCS[opcode].reduce(flush_subnormals(x.astype(wide, copy=False)),
                                               axis=axes)
        return flush_subnormals(reduced).astype(numpy_dtype(t))
    return _INT_UFUNCS[opcode].reduce(x, axis=axes, dtype=x.dtype)


def collective_reduce(opcode: Op, t: PrimitiveType, stack: Array,
                      out: Array | None = None) -> Array:
    """Reduce the members' values (axis 0) as XLA CPU's collectives do, into `out` (returned)
    when given: like fast_reduce, except that float max / min start from the identity
    (-inf / +inf) and skip NaN, so all-NaN members give -inf / +inf (fmax / fmin; one
    member is its own result, NaN included), and f16
    add / multiply go member by member in the stack's order rounding to f16 at every step
    (XLA CPU reduces f16 natively there, so an intermediate sum can overflow to inf; bf16
    still accumulates in f32 and rounds once). All measured on jaxlib 0.10.2."""
    if sb.is_sub_byte(t):
        how = sb.reading(opcode, t)
        reduced = sb.narrow(collective_reduce(opcode, sb.carrier_type(how),
                                              sb.carried(stack, t, how)), t)
        if out is None:
            return reduced
        out[...] = reduced
        return out
    if not is_floating(t) and stack.shape[0] > 1:
        # Integer and pred reducers are associative and commutative (integers wrap), so a
        # running op over the members equals ufunc.reduce, without reduce's initial copy.
        ufunc = (_PRED_UFUNCS if t == PrimitiveType.PRED else _INT_UFUNCS)[opcode]
        acc = ufunc(stack[0], stack[1], out=out)
        for k in range(2, stack.shape[0]):
            ufunc(acc, stack[k], out=acc)
        return acc
    if t == PrimitiveType.F16 and opcode in (Op.ADD, Op.MULTIPLY):
        ufunc = _FLOAT_UFUNCS[opcode]
        # f16 (+|*) f16 in f32 then rounded is exactly the f16 op (f32 has 2 * 11 + 2 bits).
        reduced = stack[0]
        for k in range(1, stack.shape[0]):
            reduced = ufunc(reduced.astype(np.float32),
                            stack[k].astype(np.float32)).astype(np.float16)
    elif is_floating(t) and opcode in (Op.MAXIMUM, Op.MINIMUM) and stack.shape[0] == 1:
        reduced = stack[0].copy()  # one member: XLA CPU copies it, NaN included
    elif is_floating(t) and opcode in (Op.MAXIMUM, Op.MINIMUM):
        wide = np.float64 if t == PrimitiveType.F64 else np.float32
        ufunc, identity = (np.fmax, -np.inf) if opcode is Op.MAXIMUM else (np.fmin, np.inf)
        reduced = ufunc.reduce(stack.astype(wide, copy=False), axis=0, initial=identity)
        reduced = reduced.astype(numpy_dtype(t))
    else:
        reduced = fast_reduce(opcode, t, stack, (0,))
    if out is None:
        return reduced
    out[...] = reduced
    return out


def reduce_with_init(opcode: Op, t: PrimitiveType, x: Array, init: Array,
                     axes: tuple[int, ...], tree_window: int | None = None) -> Array:
    """XLA reduce with a standard reducer: op(init, reduction of x over axes).

    x is (B, *dims), init is (B,), axes count from 1. With `tree_window` (reduce, not
    reduce-window), the init is applied as often as XLA CPU does (`init_uses`: never for a
    single element, once per window of the tree rewrite), and f16 / bf16 add and multiply
    over one axis longer than 1 (the others of size 1) follow XLA CPU's order and rounding
    (see `narrow_fold`). Without it (reduce-window), op(init, reduction) once.
    """
    if sb.is_sub_byte(t):  # on the 8-bit carrier: its wrap-around keeps the low n bits right
        how = sb.reading(opcode, t)
        return sb.narrow(reduce_with_init(opcode, sb.carrier_type(how), sb.carried(x, t, how),
                                          sb.carried(init, t, how), axes, tree_window), t)
    kept = tuple(size for axis, size in enumerate(x.shape) if axis not in axes)
    init_b = np.broadcast_to(init.reshape((init.shape[0],) + (1,) * (len(kept) - 1)), kept)
    if any(x.shape[axis] == 0 for axis in axes):
        return np.array(init_b)
    if tree_window is None:
        return binary(opcode, t, init_b, fast_reduce(opcode, t, x, axes))
    if all(x.shape[axis] == 1 for axis in axes):
        return np.array(x.reshape(kept))  # XLA CPU reshapes: the init is not used
    if t in _NARROW_FOLDED and opcode in (Op.ADD, Op.MULTIPLY):
        long_axes = [axis for axis in axes if x.shape[axis] > 1]
        if len(long_axes) == 1:
            n = x.shape[long_axes[0]]
            rows = np.moveaxis(x, long_axes[0], -1).reshape(kept + (n,))
            return narrow_fold(binary_op(opcode, t), rows, init_b, tree_window)
    elements = int(np.prod(x.shape[1:], dtype=np.int64))
    uses = init_uses(opcode, t, [x.shape[axis] for axis in axes], elements, tree_window)
    return binary(opcode, t, repeated_init(opcode, t, init_b, uses),
                  fast_reduce(opcode, t, x, axes))


FLOAT_SINGLE_INIT_ELEMENTS = 4096
"""f32 / f64 add reduces of operands with at least this many elements apply the init value
once on XLA CPU (measured on jaxlib 0.10.2: 4095 elements still go through the windows)."""


def init_uses(opcode: Op, t: PrimitiveType, reduced: list[int], elements: int,
              window: int) -> int:
    """How many times XLA CPU applies a reduce's init value (see the module docstring):
    `reduced` are the reduced axes' sizes (at least one element, more than one in all),
    `elements` the operand's element count."""
    if opcode is Op.ADD and t in (PrimitiveType.F32, PrimitiveType.F64) and \
            elements >= FLOAT_SINGLE_INIT_ELEMENTS:
        return 1
    sizes = [size for size in reduced if size > 1]
    uses = 0
    while any(size > window for size in sizes):
        sizes = [-(-size // window) for size in sizes]
        uses += int(np.prod(sizes, dtype=np.int64))
        sizes = [size for size in sizes if size > 1]
    return uses + (1 if sizes else 0)


def repeated_init(opcode: Op, t: PrimitiveType, init: Array, uses: int) -> Array:
    """One value equal to applying `init` `uses` (>= 1) times with the reducer."""
    if uses == 1 or opcode in (Op.MAXIMUM, Op.MINIMUM, Op.AND, Op.OR):
        return init
    if opcode is Op.XOR:
        return init if uses % 2 else np.zeros_like(init)
    if t == PrimitiveType.PRED:  # or / and: idempotent like max / min
        return init
    if is_floating(t) or is_complex(t):
        wide = init.astype(np.float64 if is_floating(t) else np.complex128)
        scaled = wide * uses if opcode is Op.ADD else wide ** uses
        return scaled.astype(init.dtype)
    if opcode is Op.ADD:  # wrap-around: uses * init modulo 2^bits
        return np.multiply(init, np.array(uses).astype(init.dtype), dtype=init.dtype)
    result, square = np.ones_like(init), np.array(init)
    while uses:  # init ** uses by squaring, wrapping like XLA's multiplies
        if uses & 1:
            result = np.multiply(result, square, dtype=init.dtype)
        square = np.multiply(square, square, dtype=init.dtype)
        uses >>= 1
    return result


TREE_REDUCTION_WINDOW = 32
"""XLA CPU's TreeReductionRewriter window: a reduce with a reduced dimension longer than
this becomes a reduce-window (window and stride min(dim, 32), SAME padding) followed by a
reduce of the partial results (xla/hlo/transforms/simplifiers/tree_reduction_rewriter.cc)."""
_NARROW_FOLDED = frozenset({PrimitiveType.F16, PrimitiveType.BF16})


def narrow_fold(op: Callable[[Array, Array], Array], rows: Array, start: Array,
                tree_window: int) -> Array:
    """Reduce the last axis of `rows` as XLA CPU does for f16 / bf16 (measured on jaxlib
    0.10.2, bit-exact): one element after another from `start`, rounding to the type at
    every step (`op` is the elementwise op, which does that). With more elements than
    `tree_window`, first each window of the SAME-padded axis folds from `start` --
    padded positions are skipped, not added -- then the partial results fold the same way
    (so a non-identity init counts once per window, as on XLA CPU)."""
    n = rows.shape[-1]
    if n <= tree_window:
        acc = start
        for k in range(n):
            acc = op(acc, rows[..., k])
        return acc
    count = -(-n // tree_window)
    low = (count * tree_window - n) // 2
    padded = np.zeros(rows.shape[:-1] + (count * tree_window,), rows.dtype)
    padded[..., low:low + n] = rows
    windows = padded.reshape(rows.shape[:-1] + (count, tree_window))
    first = np.arange(count) * tree_window
    acc = np.broadcast_to(start[..., None], rows.shape[:-1] + (count,))
    for k in range(tree_window):
        inside = (first + k >= low) & (first + k < low + n)
        step = op(acc, windows[..., k])
        acc = step if inside.all() else np.where(inside, step, acc)
    return narrow_fold(op, acc, start, tree_window)


def tree_reduce(columns: list[Array], combine: LaneCombiner) -> list[Array]:
    """Reduce the K columns of each (M, K) array (K >= 1) to (M,) by combining neighbours
    (0 with 1, 2 with 3, ...; an odd last column waits for the next round), so every combine
    keeps the lower-indexed values on the left: for any associative reducer -- commutative or
    not, like jnp.argmax's, which keeps its left operand when both are NaN -- the result is
    that of XLA CPU's left-to-right loop (the first NaN's index for argmax)."""
    while columns[0].shape[1] > 1:
        count = columns[0].shape[1]
        half = count // 2
        lanes = columns[0].shape[0]
        left = [c[:, 0:2 * half:2].reshape(-1) for c in columns]
        right = [c[:, 1:2 * half:2].reshape(-1) for c in columns]
        merged = [m.reshape(lanes, half) for m in combine(left, right)]
        if count % 2:
            merged = [np.concatenate([m, c[:, 2 * half:]], axis=1)
                      for m, c in zip(merged, columns)]
        columns = merged
    return [c[:, 0] for c in columns]


def parse_window(text: str | None, rank: int, where: str, dilations: bool = False
                 ) -> tuple[list[int], list[int], list[tuple[int, int]]]:
    """`window={size=2x2 stride=2x1 pad=0_1x0_0}` -> (sizes, strides, pads). Dilations other
    than 1 raise InterpError (not supported) unless `dilations` (then read them with
    `window_dilations`)."""
    if text is None and rank == 0:
        return [], [], []  # a scalar's window is empty: XLA prints no window attribute
    if text is None:
        raise InterpError(f"{where}: reduce-window needs the window attribute")
    fields = _window_fields(text)
    sizes = [int(v) for v in fields.get("size", "").split("x") if v]
    if len(sizes) != rank:
        raise InterpError(f"{where}: window {text} does not have {rank} sizes")
    strides = [int(v) for v in fields["stride"].split("x")] if "stride" in fields else [1] * rank
    pads = [(int(lo), int(hi)) for lo, hi in (p.split("_") for p in fields["pad"].split("x"))] \
        if "pad" in fields else [(0, 0)] * rank
    for key in ("lhs_dilate", "rhs_dilate"):
        if not dilations and key in fields and any(int(v) != 1 for v in fields[key].split("x")):
            raise InterpError(f"{where}: reduce-window with {key} is not supported by the "
                              "interpreter")
    return sizes, strides, pads


def window_dilations(text: str, rank: int) -> tuple[list[int], list[int]]:
    """(base dilation `lhs_dilate`, window dilation `rhs_dilate`) of a window, 1 when absent."""
    fields = _window_fields(text)

    def ints(key: str) -> list[int]:
        return [int(v) for v in fields[key].split("x")] if key in fields else [1] * rank
    return ints("lhs_dilate"), ints("rhs_dilate")


def _window_fields(text: str) -> dict[str, str]:
    return dict(item.split("=", 1) for item in text.strip("{} ").split() if "=" in item)
