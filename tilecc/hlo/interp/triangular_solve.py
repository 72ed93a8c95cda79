"""The triangular-solve step, as XLA CPU computes it (attributes and shapes:
tilecc.hlo.op_configs.triangular_solve_config).

Contract: `triangular-solve(a, b)` gives x with op(a) x = b (left_side=true) or
x op(a) = b (left_side=false), op(a) = a, a^T or conj(a)^T for transpose_a = NO_TRANSPOSE,
TRANSPOSE, ADJOINT, batch dimensions in front. Only the triangle that `lower` names is read
(the other is taken as zero); with unit_diagonal=true the diagonal is not read either and is
taken as ones. A singular a gives what the arithmetic gives (inf / NaN), never an error.
XLA CPU has no kernel for it: TriangularSolveExpander rewrites it, and this step follows
that expansion (xla/service/triangular_solve_expander.cc, block size 128) so that rounding
happens where XLA's does:
- b without elements: b; n = 1: b * (1 / a) (b with unit_diagonal);
- more than 8 matrices in the batch and n < 32: row by row substitution (SolveDirectly):
  x_j = (b_j - a_j,<j . x_<j) / a_jj in the order the triangle allows;
- else the diagonal n-blocks (the last padded with the identity) are inverted, scaled to a
  unit diagonal by dividing column j by a_jj, one row at a time
  (row_j <- -row_j . inverse), then rows divided by a_jj; the blocks of x follow by
  x_j = inv_jj (b_j - a_j,<j x_<j), a block at a time.
Each dot accumulates its products one after another in index order with one f32 (c64)
rounding per step (a fused multiply-add: XLA CPU's loop emitter), emulated in double, and
rounds to the element type at the end; f64 / c128 dots use numpy's matmul. Elementwise steps
round to the element type. The divisions by a broadcast diagonal are multiplications by
its reciprocal where XLA's algebraic simplifier makes them so (n = 1, the direct solve, the
inversion of a single block). Measured on jaxlib 0.10.2: the block inversion of f32 and the
f16 solves agree bit for bit (on a CPU with AVX512-FP16, XLA's code for batches of more than
8 f16 solves rounds each step to f16: one or two f16 units apart there); the direct solve, c64 and f64 within a few units in the last
place (times the condition number of a); bf16 within a few of its units (XLA CPU keeps some
bf16 steps in f32).
"""

from __future__ import annotations

import numpy as np

from tilecc.errors import InterpError
from tilecc.hlo.interp.values import Lanes, Operands, Runner, Step, Value
from tilecc.hlo.ir import HloInstruction
from tilecc.hlo.op_configs import TriangularSolveConfig, triangular_solve_config
from tilecc.hlo.types import numpy_dtype

BLOCK_SIZE = 128
"""TriangularSolveExpander's block size on XLA CPU (its default)."""
Array = np.ndarray


def triangular_solve_step(runner: Runner, inst: HloInstruction) -> Step:
    try:
        config = triangular_solve_config(inst)
    except ValueError as err:
        raise InterpError(f"{inst.name} (triangular-solve): {err}") from None
    a = inst.operands[0].shape
    n, batch = a.dims[-1], int(np.prod(a.dims[:-2], dtype=np.int64))
    dtype = numpy_dtype(a.element_type)
    direct = batch > BLOCK_SIZE // 16 and n < BLOCK_SIZE // 4

    def step(ops: Operands, d: Lanes) -> Value:
        x, y = ops
        if y.size == 0:
            return ops[1]
        if n == 1:
            return ops[1] if config.unit_diagonal else \
                (y * _reciprocal(_op(x, config))).astype(dtype)
        solve = _solve_directly if direct else _solve_by_inverting_blocks
        return solve(x, y, config, batch).astype(dtype)
    return step


def _dot(x: Array, y: Array) -> Array:
    """x @ y over the last two axes, products summed in index order, one rounding each."""
    if x.dtype.itemsize >= 16 or x.dtype == np.float64:  # double: numpy's own matmul
        return x @ y
    wide, step = (np.complex128, np.complex64) if x.dtype.kind == "c" else \
        (np.float64, np.float32)
    acc = np.zeros(np.broadcast_shapes(x.shape[:-1] + (1,), y.shape[:-2] + (1, y.shape[-1])),
                   wide)
    for k in range(x.shape[-1]):
        acc = (acc + x[..., :, k:k + 1].astype(wide) * y[..., k:k + 1, :].astype(wide)) \
            .astype(step)
    return acc.astype(x.dtype)


def _op(m: Array, config: TriangularSolveConfig) -> Array:
    """op(m) of transpose_a."""
    if config.transpose_a == "NO_TRANSPOSE":
        return m
    m = np.swapaxes(m, -1, -2)
    return np.conj(m) if config.transpose_a == "ADJOINT" else m


def _reciprocal(d: Array) -> Array:
    return np.ones((), d.dtype) / d


def _solve_directly(a: Array, b: Array, config: TriangularSolveConfig, batch: int) -> Array:
    """SolveDirectly: one row (left side) or column (right side) of x after another."""
    left, size = config.left_side, a.shape[-1]
    opa = _op(a, config)  # op(a) is lower triangular iff this is
    lower = config.lower != (config.transpose_a != "NO_TRANSPOSE")
    inverse_diagonal = None if config.unit_diagonal else \
        _reciprocal(np.diagonal(opa, axis1=-2, axis2=-1))
    x = b.copy()
    # left: op(a) x = b, row j needs the rows op(a) reaches from it; right: x op(a) = b,
    # column j needs the columns of x that op(a)'s column j reaches
    forward = lower if left else not lower
    for j in (range(size) if forward else range(size - 1, -1, -1)):
        known = slice(0, j) if forward else slice(j + 1, size)
        if left:
            row = x[..., j:j + 1, :] - _dot(opa[..., j:j + 1, known], x[..., known, :])
            if inverse_diagonal is not None:
                row = row * inverse_diagonal[..., j:j + 1, None]
            x[..., j:j + 1, :] = row
        else:
            col = x[..., :, j:j + 1] - _dot(x[..., :, known], opa[..., known, j:j + 1])
            if inverse_diagonal is not None:
                col = col * inverse_diagonal[..., None, j:j + 1]
            x[..., :, j:j + 1] = col
    return x


def _invert_blocks(blocks: Array, lower: bool, reciprocal: bool) -> Array:
    """InvertDiagonalBlocks: the inverses of lower (upper) triangular blocks [..., s, s]."""
    size = blocks.shape[-1]
    diagonal = np.diagonal(blocks, axis1=-2, axis2=-1)
    scale = _reciprocal(diagonal) if reciprocal else None
    unit = blocks * scale[..., None, :] if scale is not None else blocks / diagonal[..., None, :]
    inverse = np.broadcast_to(-np.eye(size, dtype=blocks.dtype), blocks.shape).copy()
    first = 0 if lower else size - 1
    inverse[..., first, first] = 1
    for i in range(1, size):
        j = i if lower else size - 1 - i
        inverse[..., j:j + 1, :] = -_dot(unit[..., j:j + 1, :], inverse)
    return inverse * scale[..., :, None] if scale is not None else inverse / diagonal[..., :, None]


def _solve_by_inverting_blocks(a: Array, b: Array, config: TriangularSolveConfig,
                               batch: int) -> Array:
    """SolveByInvertingDiagonalBlocks: invert the diagonal blocks, then solve block-wise."""
    n, lower, left = a.shape[-1], config.lower, config.left_side
    if config.unit_diagonal:
        a = (np.tril(a, -1) if lower else np.triu(a, 1)) + np.eye(n, dtype=a.dtype)
    else:
        a = np.tril(a) if lower else np.triu(a)
    size = min(BLOCK_SIZE, n)
    count = -(-n // size)
    blocks = np.broadcast_to(np.eye(size, dtype=a.dtype), a.shape[:-2] + (count, size, size))
    blocks = blocks.copy()  # the last block padded with the identity
    for k in range(count):
        span = min(size, n - k * size)
        blocks[..., k, :span, :span] = a[..., k * size:k * size + span, k * size:k * size + span]
    inverses = _invert_blocks(blocks, lower, reciprocal=batch * count == 1)
    transposed = config.transpose_a != "NO_TRANSPOSE"
    backward = left ^ lower ^ transposed
    x: Array | None = None
    for i in range(count):
        j = count - 1 - i if backward else i
        end = min((j + 1) * size, n)
        inverse = _op(inverses[..., j, :end - j * size, :end - j * size], config)
        rows = slice(j * size, end)
        remainder = b[..., rows, :] if left else b[..., :, rows]
        if x is not None:  # subtract what the solved blocks contribute
            done = slice(max(0, (count - i) * size), n) if backward else slice(0, min(i * size, n))
            coupling = a[..., rows, done] if left != transposed else a[..., done, rows]
            remainder = remainder - (_dot(_op(coupling, config), x) if left
                                     else _dot(x, _op(coupling, config)))
        update = _dot(inverse, remainder) if left else _dot(remainder, inverse)
        if x is None:
            x = update
        else:
            parts = [update, x] if backward else [x, update]
            x = np.concatenate(parts, axis=-2 if left else -1)
    assert x is not None
    return x
