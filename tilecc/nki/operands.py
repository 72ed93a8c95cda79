"""Operand checks shared by the nki.isa instructions; each failure names the instruction,
the argument and what was expected, located at the kernel's line (KernelError).

Contract: `tile` returns an on-chip view (SBUF / PSUM) or raises; `alu_op` / `act_func`
return KLR enum members for what a kernel passed as an op; `scalar_operand` turns a number
or a [P, 1] tile into a KLR Operand. The rules are those of the public NKI docstrings
(nki/api/nki/isa/__init__.py): partition sizes must agree, "number of elements per
partition" must agree, bitvec ops need integer dtypes, scalars of arithmetic ops are float32.
"""

from __future__ import annotations

from collections.abc import Collection

from tilecc.klr import ast
from tilecc.nki.dtypes import is_float, plain_number
from tilecc.nki.errors import kernel_error
from tilecc.nki.ops import BITVEC_ALU, Op, resolve_op
from tilecc.nki.tensor import NkiTensor
from tilecc.nki.tracer import active_trace


def describe(value: object) -> str:
    if isinstance(value, NkiTensor):
        return f"a {list(value.shape)} {value.buffer} {value.dtype} tensor"
    return repr(value)


def tensor(fn: str, arg: str, value: object) -> NkiTensor:
    if not isinstance(value, NkiTensor):
        raise kernel_error(f"nisa.{fn}: {arg} must be a tensor, got {describe(value)}")
    return value


def tile(fn: str, arg: str, value: object, buffers: Collection[str] = ("sbuf", "psum")) -> NkiTensor:
    """An on-chip tile in one of `buffers`."""
    if not isinstance(value, NkiTensor) or value.buffer not in buffers:
        where = " or ".join(b.upper() for b in buffers)
        raise kernel_error(f"nisa.{fn}: {arg} must be a tile in {where}, got {describe(value)}")
    return value


def same_partitions(fn: str, *named: tuple[str, NkiTensor]) -> None:
    first_name, first = named[0]
    for name, other in named[1:]:
        if other.partitions != first.partitions:
            raise kernel_error(f"nisa.{fn}: {name} has {other.partitions} partitions but "
                               f"{first_name} has {first.partitions} (shapes {list(other.shape)} "
                               f"and {list(first.shape)})")


def same_elements(fn: str, *named: tuple[str, NkiTensor]) -> None:
    """Same partition count and same number of elements per partition."""
    same_partitions(fn, *named)
    first_name, first = named[0]
    for name, other in named[1:]:
        if other.free_elements != first.free_elements:
            raise kernel_error(f"nisa.{fn}: shape mismatch: {name} {list(other.shape)} and "
                               f"{first_name} {list(first.shape)} must have the same number of "
                               f"elements per partition")


def not_both_psum(fn: str, a: tuple[str, NkiTensor], b: tuple[str, NkiTensor]) -> None:
    if a[1].buffer == "psum" and b[1].buffer == "psum":
        raise kernel_error(f"nisa.{fn}: {a[0]} and {b[0]} cannot both be in PSUM")


def op_of(fn: str, arg: str, value: object) -> Op:
    if (op := resolve_op(value)) is None:
        raise kernel_error(f"nisa.{fn}: {arg} must be an NKI operator such as nl.add, got {value!r}")
    return op


def alu_op(fn: str, arg: str, value: object, allowed: Collection[str] | None = None,
           arithmetic: bool = False, binary: bool = False) -> ast.AluOp:
    """The KLR AluOp of an ALU op argument, checked against an instruction's restrictions."""
    op = op_of(fn, arg, value)
    if op.alu is None and op.act is None:
        raise kernel_error(f"nisa.{fn}: {arg}={op!r} has no KLR ALU operator, so tilecc cannot "
                           f"trace it")
    if op.alu is None:
        raise kernel_error(f"nisa.{fn}: {arg}={op!r} is an activation function, not an ALU operator")
    name = op.alu
    if allowed is not None and name not in allowed:
        names = ", ".join(sorted(allowed))
        raise kernel_error(f"nisa.{fn}: {arg}={op!r} is not allowed; {fn} supports {names}")
    if arithmetic and name in BITVEC_ALU:
        raise kernel_error(f"nisa.{fn}: {arg}={op!r} is a bitvec operator; {fn} takes arithmetic "
                           f"operators only")
    if binary and op.unary:
        raise kernel_error(f"nisa.{fn}: {arg}={op!r} is unary; {fn} needs a binary operator")
    return ast.AluOp[name]


def act_func(fn: str, arg: str, value: object) -> ast.ActivationFunc:
    op = op_of(fn, arg, value)
    if op.act is None:
        raise kernel_error(f"nisa.{fn}: {arg}={op!r} is not an activation function "
                           f"(nl.exp, nl.gelu, nl.copy ...)")
    return ast.ActivationFunc[op.act]


def integer_dtypes(fn: str, op: ast.AluOp, *named: tuple[str, NkiTensor]) -> None:
    """Bitvec ops read raw bits: every tile must hold an integer dtype."""
    if op not in ast.BITWISE_ALU_OPS:
        return
    for name, value in named:
        if is_float(value.dtype):
            raise kernel_error(f"nisa.{fn}: bitvec operator {op.name} needs integer dtypes, but "
                               f"{name} is {value.dtype}")


def scalar_operand(fn: str, arg: str, value: object, data: NkiTensor, integer: bool = False,
                   allow_tile: bool = True, float32_tile: bool = True) -> ast.Operand:
    """A compile-time scalar (float32, or int for bitvec ops) or a [P, 1] tile on chip; a tile
    operand of an arithmetic op must be float32 where the docs say so (`float32_tile`), of a
    bitvec op an integer dtype."""
    value = plain_number(value)
    if isinstance(value, NkiTensor):
        if not allow_tile:
            raise kernel_error(f"nisa.{fn}: {arg} must be a compile-time scalar, got {describe(value)}")
        if value.buffer == "hbm" or value.partitions != data.partitions or value.free_elements != 1:
            raise kernel_error(f"nisa.{fn}: {arg} must be a scalar or a [{data.partitions}, 1] tile "
                               f"in SBUF/PSUM, got {describe(value)}")
        if integer and is_float(value.dtype):
            raise kernel_error(f"nisa.{fn}: {arg} tile of a bitvec operator must hold integers, got "
                               f"{value.dtype}")
        if not integer and float32_tile and value.dtype != "float32":
            raise kernel_error(f"nisa.{fn}: {arg} tile must be float32, got {value.dtype}")
        return active_trace().access(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        kind = "a scalar" if not allow_tile else f"a scalar or a [{data.partitions}, 1] tile"
        raise kernel_error(f"nisa.{fn}: {arg} must be {kind}, got {describe(value)}")
    if integer:
        if isinstance(value, float) and not value.is_integer():
            raise kernel_error(f"nisa.{fn}: {arg}={value} must be an integer for a bitvec operator")
        return ast.Immediate(int(value))
    return ast.Immediate(float(value))


def reverse_ops(reverse0: bool, reverse1: bool) -> ast.TensorScalarReverseOps:
    return ast.TensorScalarReverseOps(int(bool(reverse0)) + 2 * int(bool(reverse1)))


def reduce_tile(fn: str, arg: str, value: object, data: NkiTensor) -> NkiTensor:
    """A [P, 1] result tile (reduce_res)."""
    res = tile(fn, arg, value)
    if res.partitions != data.partitions or res.free_elements != 1:
        raise kernel_error(f"nisa.{fn}: {arg} must be a [{data.partitions}, 1] tile, got "
                           f"{describe(res)}")
    return res
