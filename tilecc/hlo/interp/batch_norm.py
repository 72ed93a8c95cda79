"""batch-norm-training / -inference / -grad, computed as XLA CPU computes them.

XLA CPU has no kernel for them: its BatchNormExpander (xla/service/batchnorm_expander.cc)
rewrites each into elementwise ops, add-reduces over every dimension but feature_index and
broadcasts of the per-feature vectors, in the operand's element type, and its later passes
change that graph in three ways the steps replay (measured on jaxlib 0.10.2):
- a division by the element count N becomes a multiplication by the constant 1 / N, rounded
  to the type (sums that are exact match x * (1 / N), not x / N);
- a multiply feeding an add or subtract in one fused loop is one fused multiply-add, rounded
  once (f32; f16 computes it in f32, where its product is exact). f64 is not fused here: no
  wider numpy type holds its product, so f64 results may differ in the last bits; in f16
  a multiply feeding a reduce along one axis of at most 32 elements joins its loop too
  (`total_of_products`);
- a bf16 batch norm runs in f32 entirely (operands converted, results rounded once): bit for
  bit XLA CPU's results, where rounding to bf16 after every op is not.
Otherwise the steps use the interpreter's own elementwise ops (subnormals flushed) and
reduces (XLA CPU's order and init rule, interp.reduce); epsilon is the f32 attribute
rounded to the compute type. Measured against XLA CPU (test_interpreter_batch_norm): bf16
and f16 inference agree bit for bit; f32 / f64 agree to the last bits (their sums and
rsqrt round differently from XLA CPU's); f16 training and grad bit for bit when one axis
is reduced, else to a few f16 ulps (interp.reduce does not replay XLA CPU's f16 order over
several axes).

Contract (operands and results as XLA defines them; x is (lanes, *dims), a per-feature
vector (lanes, C) with C = dims[feature_index]):
- training(x, scale, offset) -> (y, mean, var): mean = E[x], var = E[x^2] - mean^2 (no
  Bessel correction; it can come out slightly negative), y = (x - mean) *
  rsqrt(var + epsilon) * scale + offset;
- inference(x, scale, offset, mean, var) -> y = x * k + (offset - mean * k) with
  k = scale * rsqrt(var + epsilon);
- grad(x, scale, mean, var, dy) -> (dx, dscale, doffset): doffset = sum(dy), dscale =
  sum(dy * (x - mean)) * rsqrt(var + epsilon), dx = scale * rsqrt(var + epsilon) / N *
  (dy * N - doffset - (x - mean) * sum(dy * (x - mean)) / (var + epsilon)).
NaN and inf stay in their feature. A builder raises InterpError for a feature_index outside
the operand's rank, a missing epsilon or feature_index, or a non-float element type.
"""

from __future__ import annotations

import numpy as np

from tilecc.errors import InterpError
from tilecc.hlo.interp import elementwise as ew
from tilecc.hlo.interp.complex_math import fused_multiply_add
from tilecc.hlo.interp.reduce import TREE_REDUCTION_WINDOW, reduce_with_init
from tilecc.hlo.interp.values import Array, Lanes, Operands, Runner, Step, Value
from tilecc.hlo.ir import HloInstruction
from tilecc.hlo.opcodes import HloOpcode as Op
from tilecc.hlo.types import PrimitiveType, is_floating, numpy_dtype, primitive_type_name


class _Graph:
    """The expander's pieces for one instruction: ops of its type, its constants, and how
    a per-feature vector broadcasts and a full array reduces."""

    def __init__(self, inst: HloInstruction) -> None:
        shape = inst.operands[0].shape
        t = self.t = shape.element_type
        where = f"{inst.name} ({inst.opcode.mnemonic})"
        if not is_floating(t):
            raise InterpError(f"{where}: needs a floating-point operand, got "
                              f"{primitive_type_name(t)}")
        try:
            feature = int(inst.attributes["feature_index"])
            epsilon = np.float32(inst.attributes["epsilon"])
        except (KeyError, ValueError):
            raise InterpError(f"{where}: needs the attributes epsilon=<float> and "
                              "feature_index=<int>") from None
        if not 0 <= feature < shape.rank:
            raise InterpError(f"{where}: feature_index={feature} is outside the operand's "
                              f"rank {shape.rank}")
        self.axis = 1 + feature  # the lane axis comes first
        self.reduced = tuple(1 + d for d in range(shape.rank) if d != feature)
        # a bf16 batch norm runs in f32 (its operands converted, its results rounded)
        c = self.compute = PrimitiveType.F32 if t == PrimitiveType.BF16 else t
        self.mul, self.add, self.sub, self.div = (
            ew.binary_op(op, c) for op in (Op.MULTIPLY, Op.ADD, Op.SUBTRACT, Op.DIVIDE))
        self.rsqrt = ew.unary_op(Op.RSQRT, c)
        count = int(np.prod([shape.dims[d - 1] for d in self.reduced], dtype=np.int64))
        # the count is an s32 product converted to the type (f16 overflows past 65504)
        self.count = ew.convert(np.array(count, np.int32), PrimitiveType.S32, c)
        self.epsilon = ew.convert(np.array(epsilon), PrimitiveType.F32, c)
        self.inverse_count = self.div(np.ones((), numpy_dtype(c)), self.count)

    def widen(self, operands: Operands) -> list[Array]:
        return [x.astype(np.float32) for x in operands] if self.compute != self.t \
            else list(operands)

    def narrow(self, x: Array) -> Array:
        return ew.convert(x, self.compute, self.t) if self.compute != self.t else x

    def mul_add(self, a: Array, b: Array, c: Array, product_sign: int = 1) -> Array:
        """product_sign * a * b + c as XLA CPU's fused loop computes it: rounded once, a
        fused multiply-add (see the module docstring)."""
        if self.compute == PrimitiveType.F64:  # no wider type here: the product rounds first
            product = self.mul(a, b)
            return self.add(product, c) if product_sign > 0 else self.sub(c, product)
        wa, wb, wc = (ew.widen_flushed(self.compute, v) for v in (a, b, c))
        if self.compute == PrimitiveType.F32:
            fused = fused_multiply_add(product_sign * wa, wb, wc)
        else:  # f16 computes in f32, where its products are exact: one rounding of the sum
            fused = np.add(product_sign * np.multiply(wa, wb), wc)
        return ew.flush_subnormals(fused).astype(numpy_dtype(self.compute))

    def per_count(self, x: Array) -> Array:
        """x / N as XLA CPU computes it: x * (1 / N) (see the module docstring)."""
        return self.mul(x, self.inverse_count)

    def spread(self, v: Array, like: Array) -> Array:
        """The (lanes, C) vector v broadcast along the feature axis of `like`."""
        shape = [v.shape[0]] + [1] * (like.ndim - 1)
        shape[self.axis] = v.shape[1]
        return np.broadcast_to(v.reshape(shape), like.shape)

    def total(self, x: Array) -> Array:
        """The add-reduce of x over every axis but the feature's: (lanes, C)."""
        zero = np.zeros(x.shape[0], x.dtype)
        return reduce_with_init(Op.ADD, self.compute, x, zero, self.reduced,
                                TREE_REDUCTION_WINDOW)

    def total_of_products(self, a: Array, b: Array) -> Array:
        """total(a * b); in f16 over one axis of 2 to 32 elements (no tree rewrite), XLA
        CPU fuses the multiply into the reduce's loop: each step adds the exact f32
        product to the f16 sum and rounds once."""
        long_axes = [axis for axis in self.reduced if a.shape[axis] > 1]
        if self.compute != PrimitiveType.F16 or len(long_axes) != 1 or \
                a.shape[long_axes[0]] > TREE_REDUCTION_WINDOW:
            return self.total(self.mul(a, b))
        kept = (a.shape[0], a.shape[self.axis])
        products = np.multiply(*(np.moveaxis(ew.widen_flushed(self.t, v), long_axes[0], -1)
                                 for v in (a, b)))
        acc = np.zeros(kept, np.float16)
        for product in products.reshape(kept + (a.shape[long_axes[0]],)).transpose(2, 0, 1):
            acc = ew.flush_subnormals(acc.astype(np.float32) + product).astype(np.float16)
        return acc


def batch_norm_training_step(runner: Runner, inst: HloInstruction) -> Step:
    g = _Graph(inst)

    def step(a: Operands, d: Lanes) -> Value:
        x, scale, offset = g.widen(a)
        mean = g.per_count(g.total(x))
        square_mean = g.per_count(g.total_of_products(x, x))
        var = g.mul_add(mean, mean, square_mean, -1)
        rsqrt = g.rsqrt(g.add(var, g.epsilon))
        normalized = g.mul(g.sub(x, g.spread(mean, x)), g.spread(rsqrt, x))
        y = g.mul_add(normalized, g.spread(scale, x), g.spread(offset, x))
        return (g.narrow(y), g.narrow(mean), g.narrow(var))
    return step


def batch_norm_inference_step(runner: Runner, inst: HloInstruction) -> Step:
    g = _Graph(inst)

    def step(a: Operands, d: Lanes) -> Value:
        x, scale, offset, mean, var = g.widen(a)
        true_scale = g.mul(scale, g.rsqrt(g.add(var, g.epsilon)))
        true_shift = g.mul_add(mean, true_scale, offset, -1)
        return g.narrow(g.mul_add(x, g.spread(true_scale, x), g.spread(true_shift, x)))
    return step


def batch_norm_grad_step(runner: Runner, inst: HloInstruction) -> Step:
    g = _Graph(inst)

    def step(a: Operands, d: Lanes) -> Value:
        x, scale, mean, var, dy = g.widen(a)
        var_epsilon = g.add(var, g.epsilon)
        rsqrt = g.rsqrt(var_epsilon)
        centered = g.sub(x, g.spread(mean, x))
        dy_centered = g.total_of_products(dy, centered)
        doffset = g.total(dy)
        dscale = g.mul(dy_centered, rsqrt)
        i5 = g.div(g.mul(g.spread(dy_centered, x), centered), g.spread(var_epsilon, x))
        factor = g.per_count(g.mul(scale, rsqrt))
        i6 = g.sub(g.mul_add(dy, g.count, -g.spread(doffset, x)), i5)
        return (g.narrow(g.mul(g.spread(factor, x), i6)), g.narrow(dscale), g.narrow(doffset))
    return step
