"""The KLR kernels behind the golden BIR files in tests/fixtures/klr (one per leaf variant).

`python tests/codegen/codegen_golden_kernels.py` rewrites every `<case>.klr.json` from the
builders below and its `<case>.bir.json` (or `<case>.err` for a kernel the codegen or the
verifier rejects) from the codegen; review the diff before committing. The tests check
that the inputs are what the builders make and that the codegen still produces the
committed outputs.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable

from tilecc.klr import ast as k

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "klr"
F32, I32, BF16 = k.Dtype.float32, k.Dtype.int32, k.Dtype.bfloat16


def hbm(name: str, shape: tuple[int, ...] = (128, 64), dtype: k.Dtype = F32) -> k.TensorName:
    return k.make_tensor(name, dtype, shape, k.Memory.hbm)


def sb(name: str, shape: tuple[int, ...] = (128, 64), dtype: k.Dtype = F32) -> k.TensorName:
    return k.make_tensor(name, dtype, shape, k.Memory.sbuf)


def imm(v: float | int) -> k.Immediate:
    return k.Immediate(v)


def kernel(name: str, body: list[k.Operator], shape: tuple[int, ...] = (128, 64),
           dtype: k.Dtype = F32) -> k.Kernel:
    """a (HBM) -> x (SB) ... body ... y (SB) -> out (HBM)."""
    a, out = hbm("a", shape, dtype), hbm("out", shape, dtype)
    return k.Kernel(name, [a], [out],
                    [k.NcDmaCopy(sb("x", shape, dtype), a), *body,
                     k.NcDmaCopy(out, sb("y", shape, dtype))])


def tensor_tensor_all_ops() -> k.Kernel:
    x, y = sb("x", dtype=I32), sb("y", dtype=I32)
    return kernel("tensor_tensor_all_ops", [
        k.TensorTensor(y, x, x, op, engine=k.Engine.dve) for op in k.AluOp], dtype=I32)


def activation_all_funcs() -> k.Kernel:
    """Every ActivationFunc, bias-less: all share the one zero-bias tensor."""
    x, y = sb("x"), sb("y")
    return kernel("activation_all_funcs", [
        k.NcActivate(y, x, k.AccumCmd.Idle, f, imm(1.0)) for f in k.ActivationFunc])


def activation_bias_scale() -> k.Kernel:
    x, y, col = sb("x"), sb("y"), sb("col", (128, 1))
    return kernel("activation_bias_scale", [
        k.NcActivate(y, x, k.AccumCmd.Idle, k.ActivationFunc.exp, imm(0.5)),
        k.NcActivate(y, x, k.AccumCmd.Idle, k.ActivationFunc.tanh, imm(2.0), bias=col),
        k.NcActivate(y, x, k.AccumCmd.Idle, k.ActivationFunc.relu, col, bias=col),
        k.NcActivate(y, x, k.AccumCmd.Idle, k.ActivationFunc.sigmoid, imm(-1.0)),
    ])


def activation_accumulate() -> k.Kernel:
    """Every AccumCmd, with and without an accumulator tile; ActivationReduce too."""
    x, y, acc = sb("x"), sb("y"), sb("acc", (128, 1))
    body: list[k.Operator] = [
        k.NcActivate(y, x, cmd, k.ActivationFunc.copy, imm(1.0), reduce_op=k.AluOp.add,
                     reduce_res=acc) for cmd in k.AccumCmd]
    body.append(k.NcActivate(y, x, k.AccumCmd.ZeroAccumulate, k.ActivationFunc.exp,
                             imm(1.0), reduce_op=k.AluOp.add))
    body.append(k.ActivationReduce(y, x, k.AccumCmd.ZeroAccumulate, k.ActivationFunc.square,
                                   imm(1.0), reduce_op=k.AluOp.add, reduce_res=acc))
    return kernel("activation_accumulate", body)


def activate2() -> k.Kernel:
    x, y, acc, col = sb("x"), sb("y"), sb("acc", (128, 1)), sb("col", (128, 1))
    return kernel("activate2", [
        k.Activate2(y, x, k.AluOp.mult, k.AluOp.add, imm(2.0), imm(1.0), k.ActivationFunc.relu,
                    imm(0.0), k.AluOp.bypass, None, k.AccumCmd.Idle, False, False),
        k.Activate2(y, x, k.AluOp.subtract, k.AluOp.divide, col, imm(3.0),
                    k.ActivationFunc.exp, imm(0.0), k.AluOp.max, acc,
                    k.AccumCmd.ZeroAccumulate, True, True),
    ])


def exponential() -> k.Kernel:
    x, y, acc, col = sb("x"), sb("y"), sb("acc", (128, 1)), sb("col", (128, 1))
    return kernel("exponential", [
        k.Exponential(y, x, imm(0.0), None, k.AccumCmd.Idle, imm(0.0)),
        k.Exponential(y, x, col, acc, k.AccumCmd.ZeroAccumulate, imm(0.0)),
        k.Exponential(y, x, imm(1.5), acc, k.AccumCmd.LoadAccumulate, imm(4.0)),
    ])


def reciprocal() -> k.Kernel:
    return kernel("reciprocal", [k.Reciprocal(sb("y"), sb("x"))])


def tensor_scalar_variants() -> k.Kernel:
    """All reverse combinations; immediate vs tile scalars; one and two stages; engines."""
    x, y, col = sb("x"), sb("y"), sb("col", (128, 1))
    R = k.TensorScalarReverseOps
    body: list[k.Operator] = [
        k.TensorScalar(y, x, imm(2.0), k.AluOp.subtract, imm(3.0), k.AluOp.divide, rev,
                       k.Engine.dve) for rev in R]
    body += [
        k.TensorScalar(y, x, imm(1.0), k.AluOp.add),
        k.TensorScalar(y, x, col, k.AluOp.mult, engine=k.Engine.pool),
        k.TensorScalar(y, x, imm(0.0), k.AluOp.max, col, k.AluOp.min, engine=k.Engine.act),
        k.TensorScalar(y, x, imm(7), k.AluOp.bitwise_and, engine=k.Engine.sp),
    ]
    return kernel("tensor_scalar_variants", body)


def tensor_scalar_reduce() -> k.Kernel:
    x, y, acc, col = sb("x"), sb("y"), sb("acc", (128, 1)), sb("col", (128, 1))
    return kernel("tensor_scalar_reduce", [
        k.TensorScalarReduce(y, x, imm(2.0), k.AluOp.mult, False, None, k.AluOp.add, acc),
        k.TensorScalarReduce(y, x, col, k.AluOp.subtract, True, None, k.AluOp.max, acc),
    ])


def tensor_scalar_cumulative() -> k.Kernel:
    x, y = sb("x"), sb("y")
    R = k.TensorScalarReverseOps
    return kernel("tensor_scalar_cumulative", [
        k.TensorScalarCumulative(y, x, k.AluOp.mult, k.AluOp.add, imm(1.0), None,
                                 k.AccumCmd.ZeroAccumulate),
        k.TensorScalarCumulative(y, x, k.AluOp.bypass, k.AluOp.max, imm(0.0), imm(-5.0),
                                 k.AccumCmd.LoadAccumulate, R.second),
        k.TensorScalarCumulative(y, x, k.AluOp.add, k.AluOp.mult, imm(1.0), None,
                                 k.AccumCmd.Accumulate, R.both),
        *(k.TensorScalarCumulative(y, x, k.AluOp.subtract, k.AluOp.add, imm(2.0), None, cmd,
                                   R.first) for cmd in (k.AccumCmd.Idle, k.AccumCmd.Zero)),
    ])


def scalar_tensor_tensor() -> k.Kernel:
    x, y, z, col = sb("x"), sb("y"), sb("z"), sb("col", (128, 1))
    R = k.TensorScalarReverseOps
    return kernel("scalar_tensor_tensor", [
        k.NcScalarTensorTensor(y, x, imm(2.0), z, k.AluOp.mult, k.AluOp.add),
        k.NcScalarTensorTensor(y, x, col, z, k.AluOp.subtract, k.AluOp.max, R.first),
        *(k.NcScalarTensorTensor(y, x, imm(3.0), z, k.AluOp.divide, k.AluOp.subtract, rev)
          for rev in R),
    ])


def tensor_tensor_scan() -> k.Kernel:
    x, y, z, col = sb("x"), sb("y"), sb("z"), sb("col", (128, 1))
    R = k.TensorScalarReverseOps
    return kernel("tensor_tensor_scan", [
        k.TensorTensorScan(y, x, z, k.AluOp.mult, k.AluOp.add, R.none, imm(0.0),
                           k.AccumCmd.Idle),
        k.TensorTensorScan(y, x, z, k.AluOp.add, k.AluOp.subtract, R.both, col,
                           k.AccumCmd.ZeroAccumulate),
        *(k.TensorTensorScan(y, x, z, k.AluOp.subtract, k.AluOp.divide, rev, imm(1.0), cmd)
          for rev in R for cmd in (k.AccumCmd.Idle, k.AccumCmd.Accumulate)),
    ])


def tensor_reduce() -> k.Kernel:
    """Every TensorSubDim (on a 4-free-dim tile), negate, and a partition reduce."""
    x4 = sb("x4", (128, 2, 2, 4, 4))
    kept = {k.TensorSubDim.X: (128, 2, 2, 4), k.TensorSubDim.XY: (128, 2, 2),
            k.TensorSubDim.XYZ: (128, 2), k.TensorSubDim.XYZW: (128, 1)}
    part_in, part_out = sb("pin", (128, 32)), sb("pout", (1, 32))
    body: list[k.Operator] = [
        k.TensorReduce(sb(f"r{dim.name}", kept[dim]), x4, k.AluOp.add, dim,
                       negated=(dim == k.TensorSubDim.XY)) for dim in k.TensorSubDim]
    body += [k.TensorReduce(sb("rX", kept[k.TensorSubDim.X]), x4, k.AluOp.max,
                            k.TensorSubDim.X),
             k.TensorPartitionReduce(part_out, k.AluOp.add, part_in),
             k.TensorPartitionReduce(part_out, k.AluOp.max, part_in)]
    return kernel("tensor_reduce", body)


def data_movement() -> k.Kernel:
    """Slicing (basic and pattern accesses), copies, memset, iota, bf16."""
    x, y = sb("x", dtype=BF16), sb("y", dtype=BF16)
    half = k.AccessBasic(x, (k.Slice(0, 64), k.Slice(0, 64, 2)))
    upper = k.AccessPattern(y, 64, (k.APPair(2, 32),), 64, 1)
    return kernel("data_movement", [
        k.MemSet(y, imm(0.0), BF16, k.Engine.pool),
        k.NcCopy(upper, half, engine=k.Engine.act),
        k.Iota(sb("idx", (128, 8), I32), k.DataPattern(3, (k.APPair(1, 8),), 8)),
    ], dtype=BF16)


def error_activation_int_scale() -> k.Kernel:
    return kernel("error_activation_int_scale", [
        k.NcActivate(sb("y"), sb("x"), k.AccumCmd.Idle, k.ActivationFunc.exp, imm(2))])


def error_activation_reduce_max() -> k.Kernel:
    return kernel("error_activation_reduce_max", [
        k.NcActivate(sb("y"), sb("x"), k.AccumCmd.ZeroAccumulate, k.ActivationFunc.exp,
                     imm(1.0), reduce_op=k.AluOp.max, reduce_res=sb("acc", (128, 1)))])


def error_tensor_tensor_unassigned() -> k.Kernel:
    x, y = sb("x"), sb("y")
    return kernel("error_tensor_tensor_unassigned", [k.TensorTensor(y, x, x, k.AluOp.add)])


def error_partition_reduce_not_32() -> k.Kernel:
    return kernel("error_partition_reduce_not_32", [
        k.TensorPartitionReduce(sb("pout", (1, 16)), k.AluOp.add, sb("pin", (128, 16)))])


def error_partition_start() -> k.Kernel:
    x, y = sb("x"), sb("y")
    rows = k.AccessBasic(x, (k.Slice(16, 80), k.Slice(0, 64)))
    return kernel("error_partition_start", [k.NcCopy(rows, y, engine=k.Engine.act)])


CASES: dict[str, Callable[[], k.Kernel]] = {f.__name__: f for f in (
    tensor_tensor_all_ops, activation_all_funcs, activation_bias_scale, activation_accumulate,
    activate2, exponential, reciprocal, tensor_scalar_variants, tensor_scalar_reduce,
    tensor_scalar_cumulative, scalar_tensor_tensor, tensor_tensor_scan, tensor_reduce,
    data_movement)}
# kernels the codegen or the verifier rejects: `<case>.err` holds the one-line message
ERROR_CASES: dict[str, Callable[[], k.Kernel]] = {f.__name__: f for f in (
    error_activation_int_scale, error_activation_reduce_max, error_tensor_tensor_unassigned,
    error_partition_reduce_not_32, error_partition_start)}


def lower_to_text(kern: k.Kernel) -> str:
    from tilecc.bir.json import write_program_json
    from tilecc.bir.verifier import verify_program
    from tilecc.codegen.klr_to_bir import KlirToBirCodegen
    program = KlirToBirCodegen().codegen_kernel(kern)
    verify_program(program)
    return write_program_json(program, pretty=True) + "\n"


def error_text(kern: k.Kernel) -> str:
    from tilecc.errors import TileccError
    try:
        lower_to_text(kern)
    except TileccError as err:
        return f"{type(err).__name__}: {err}\n"
    raise AssertionError(f"{kern.name} was accepted")


def regenerate() -> None:
    from tilecc.klr.read import write_kernel_json
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for name, build in CASES.items():
        kern = build()
        (FIXTURES / f"{name}.klr.json").write_text(write_kernel_json(kern) + "\n")
        (FIXTURES / f"{name}.bir.json").write_text(lower_to_text(kern))
    for name, build in ERROR_CASES.items():
        kern = build()
        (FIXTURES / f"{name}.klr.json").write_text(write_kernel_json(kern) + "\n")
        (FIXTURES / f"{name}.err").write_text(error_text(kern))


if __name__ == "__main__":
    sys.exit(regenerate())
