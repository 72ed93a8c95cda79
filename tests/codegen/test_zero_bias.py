"""The zero-bias tensor of bias-less activations never takes a kernel tensor's name.

A kernel tile named like the compiler's zero-bias tensor, used before or after the first
bias-less activation, keeps its own location and data (checked by simulation on negative
values); the zero-bias tensor takes the first free `COMPILER-GENERATED-zero_bias_act_<n>`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import codegen_golden_kernels as golden
from tilecc.bir import inst as b
from tilecc.bir.verifier import verify_program
from tilecc.cli import main
from tilecc.codegen.klr_to_bir import (ZERO_BIAS_MEMSET_PREFIX, ZERO_BIAS_NAME,
                                       ZERO_BIAS_PREFIX, KlirToBirCodegen, codegen_kernel)
from tilecc.errors import CodegenError
from tilecc.klr import ast as k
from tilecc.klr.read import write_kernel_json
from tilecc.sim.execute import simulate

sb, imm = golden.sb, golden.imm
ADD, COPY, IDLE = k.AluOp.add, k.ActivationFunc.copy, k.AccumCmd.Idle


def negate_twice(y: k.TensorName, x: k.TensorName) -> k.NcActivate:
    """y = copy(x * -2), bias-less: exact in float32."""
    return k.NcActivate(y, x, IDLE, COPY, imm(-2.0))


def run(kern: k.Kernel) -> tuple[b.Program, np.ndarray, np.ndarray]:
    program = codegen_kernel(kern)
    verify_program(program)
    a = np.random.default_rng(7).uniform(-100, 100, (128, 64)).astype(np.float32)
    return program, a, simulate(program, {"a": a})["out"]


def zero_bias_of(program: b.Program) -> str:
    acts = [i for i in program.instructions if isinstance(i, b.InstActivation)]
    (name,) = {a.ins[1].memref for a in acts}
    return name


def test_kernel_tile_with_the_name_before_the_first_activation() -> None:
    """zb = x; y = -2x (bias-less); y = y + zb: the memset must not clobber zb."""
    x, y, zb = sb("x"), sb("y"), sb(ZERO_BIAS_NAME)
    program, a, out = run(golden.kernel("before", [
        k.NcCopy(zb, x), negate_twice(y, x), k.TensorTensor(y, y, zb, ADD, engine=k.Engine.dve)]))
    assert zero_bias_of(program) == ZERO_BIAS_PREFIX + "1"
    locs = {loc.name: loc for loc in program.memory_locations}
    assert locs[ZERO_BIAS_NAME].bytes_per_partition == 64 * 4  # the user's tile, untouched
    assert locs[ZERO_BIAS_PREFIX + "1"].bytes_per_partition == 4
    memsets = [i for i in program.instructions if isinstance(i, b.InstMemset)]
    assert [(m.name, m.outs[0].memref) for m in memsets] == [
        (ZERO_BIAS_MEMSET_PREFIX + "1", ZERO_BIAS_PREFIX + "1")]
    np.testing.assert_array_equal(out, -a)


def test_kernel_tile_with_the_name_after_the_first_activation() -> None:
    """y = -2x (bias-less); zb = y; y = zb + x: no KeyError, zb is the user's tile."""
    x, y, zb = sb("x"), sb("y"), sb(ZERO_BIAS_NAME)
    program, a, out = run(golden.kernel("after", [
        negate_twice(y, x), k.NcCopy(zb, y), k.TensorTensor(y, zb, x, ADD, engine=k.Engine.dve)]))
    assert zero_bias_of(program) == ZERO_BIAS_PREFIX + "1"
    np.testing.assert_array_equal(out, -a)


def test_first_free_number_is_taken() -> None:
    """The kernel uses _0 (a whole-tile copy) and _1 (a sliced access): the bias is _2."""
    x, y = sb("x"), sb("y")
    z0, z1 = sb(ZERO_BIAS_PREFIX + "0"), sb(ZERO_BIAS_PREFIX + "1", (128, 1))
    col = k.AccessBasic(x, (k.Slice(0, 128, 1), k.Slice(5, 6, 1)))
    program, a, out = run(golden.kernel("taken", [
        k.NcCopy(z0, x), k.NcCopy(z1, col), negate_twice(y, z0),
        k.NcActivate(y, y, IDLE, COPY, imm(1.0), bias=z1)]))
    acts = [i for i in program.instructions if isinstance(i, b.InstActivation)]
    assert [act.ins[1].memref for act in acts] == [ZERO_BIAS_PREFIX + "2", ZERO_BIAS_PREFIX + "1"]
    np.testing.assert_array_equal(out, -2 * a + a[:, 5:6])


def test_without_a_clash_the_name_is_zero() -> None:
    program, a, out = run(golden.kernel("plain", [negate_twice(sb("y"), sb("x"))]))
    assert zero_bias_of(program) == ZERO_BIAS_NAME
    np.testing.assert_array_equal(out, -2 * a)


def test_registered_zero_bias_clashes_with_a_later_tensor_definition() -> None:
    """On a reused codegen instance the zero-bias tensor stays registered: a later tensor of
    its name with another definition is a CodegenError, not a replaced location."""
    gen = KlirToBirCodegen()
    gen.codegen_kernel(golden.kernel("first", [negate_twice(sb("y"), sb("x"))]))
    clash = golden.kernel("second", [k.NcCopy(sb(ZERO_BIAS_NAME), sb("x"))])
    with pytest.raises(CodegenError, match=f"tensor '{ZERO_BIAS_NAME}' is used with two "
                                           "different definitions"):
        gen.codegen_kernel(clash)


def test_cli_lowers_a_kernel_using_the_name(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    x, y, zb = sb("x"), sb("y"), sb(ZERO_BIAS_NAME)
    kern = golden.kernel("after", [negate_twice(y, x), k.NcCopy(zb, y),
                                   k.TensorTensor(y, zb, x, ADD, engine=k.Engine.dve)])
    src, out = tmp_path / "after.klr.json", tmp_path / "after.bir.json"
    src.write_text(write_kernel_json(kern) + "\n")
    assert main(["codegen", str(src), "-o", str(out)]) == 0
    assert f'"{ZERO_BIAS_PREFIX}1"' in out.read_text()
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("where", ["before", "after", "none"])
def test_name_is_fixed_once_every_tensor_is_seen(where: str) -> None:
    """The zero-bias tensor is named after the whole body is lowered, wherever a kernel
    tensor of the name appears: ids from 0, each location once and the zero-bias location
    in its first use's place, one memset, every activation rewritten."""
    x, y, zb = sb("x"), sb("y"), sb(ZERO_BIAS_NAME if where != "none" else "w")
    copy, neg = k.NcCopy(zb, x), negate_twice(y, x)
    kern = golden.kernel(where, [copy, neg] if where == "before" else [neg, copy])
    program = KlirToBirCodegen().codegen_kernel(kern)
    bias = ZERO_BIAS_NAME if where == "none" else ZERO_BIAS_PREFIX + "1"
    assert zero_bias_of(program) == bias
    names = [loc.name for loc in program.memory_locations]
    assert len(names) == len(set(names))
    kernel_order = [n for n in names if n != bias]
    seen = {"x", "y"} | ({zb.name} if where == "before" else set())  # at the activation
    assert names.index(bias) == 1 + max(kernel_order.index(n) for n in seen)
    memsets = [i for i in program.instructions if isinstance(i, b.InstMemset)]
    assert [(m.name, m.outs[0].memref) for m in memsets] == [
        (ZERO_BIAS_MEMSET_PREFIX + bias[len(ZERO_BIAS_PREFIX):], bias)]
    assert [i.name.rsplit("-", 1)[-1] for i in program.instructions
            if not isinstance(i, b.InstMemset)][:1] == ["0"]


def test_bias_less_activations_share_one_access_per_partition_count() -> None:
    """Every bias-less activation of one partition count reads one access object (named
    once the body is lowered, on a reused instance too), as tensor_ref's results are
    shared; the BIR writer and verifier remember work per argument object."""
    x, y = sb("x"), sb("y")
    half = k.AccessBasic(x, (k.Slice(0, 64), k.Slice(0, 64)))
    half_y = k.AccessBasic(y, (k.Slice(0, 64), k.Slice(0, 64)))
    kern = golden.kernel("share", [negate_twice(y, x), negate_twice(half_y, half),
                                   negate_twice(y, x), negate_twice(half_y, half)])
    cg = KlirToBirCodegen()
    for program in (cg.codegen_kernel(kern), cg.codegen_kernel(kern)):
        verify_program(program)
        acts = [i for i in program.instructions if isinstance(i, b.InstActivation)]
        biases = [a.ins[1] for a in acts]
        assert biases[0] is biases[2] and biases[1] is biases[3] and biases[0] != biases[1]
        assert {(a.memref, a.ap) for a in biases} == {
            (ZERO_BIAS_NAME, ((1, 128), (1, 1))), (ZERO_BIAS_NAME, ((1, 64), (1, 1)))}
