"""Work that grows faster than any one value: the steps of a dot, a convolution or a window
(tilecc.hlo.run_limits.instruction_cost), an entry too costly for its devices refused before
its inputs are made, and a pass rewrite that grows with the device count ("rewrite" bound)."""

from __future__ import annotations

import numpy as np
import pytest
from test_limits import PASSES, fail, write

from tilecc.cli import main
from tilecc.hlo.parser import parse_module
from tilecc.hlo.run_limits import computation_cost, instruction_cost

STEP_WORDS = "HLO steps in one run (a step is 1024 element operations on each device)"

WORK = """HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  x = f32[64,4096] parameter(0)
  y = f32[4096,64] parameter(1)
  d = f32[64,64] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  img = f32[1,64,64,8] parameter(2)
  k = f32[3,3,8,16] parameter(3)
  cv = f32[1,64,64,16] convolution(img, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  z = f32[] constant(0)
  rw = f32[64,64] reduce-window(d, z), window={size=32x32 pad=16_15x16_15}, to_apply=add
  ROOT t = (f32[64,64], f32[1,64,64,16], f32[64,64]) tuple(d, cv, rw)
}
"""


def test_a_step_counts_the_operand_elements_each_result_element_combines():
    entry = parse_module(WORK, "w.hlo").entry
    assert entry is not None
    cost = {inst.name: instruction_cost(inst) for inst in entry.instructions}
    # dot: 64*64 results of 4096 products each; conv: 65536 results of 3*3*8 products each;
    # reduce-window: 4096 results of a 32x32 window; the tuple: its largest leaf; the constant: one step
    assert (cost["d"], cost["cv"], cost["rw"], cost["t"], cost["z"]) == (16384, 4608, 4096, 64, 1)
    assert computation_cost(entry) == 16384 + 4608 + 4096 + 64 + 1


def test_attributes_that_do_not_parse_cost_only_the_result():
    # a contracting dimension beyond the rank, a window without a size: the run refuses them
    text = WORK.replace("lhs_contracting_dims={1}", "lhs_contracting_dims={7}") \
        .replace("window={size=32x32 pad=16_15x16_15}", "window={pad=16_15x16_15}")
    entry = parse_module(text, "w.hlo").entry
    assert entry is not None
    cost = {inst.name: instruction_cost(inst) for inst in entry.instructions}
    assert (cost["d"], cost["rw"]) == (4, 4)


def test_a_dot_whose_products_exceed_the_bound_is_refused_before_its_inputs(tmp_path, capsys):
    hlo = write(tmp_path, "w.hlo", WORK)
    saved = tmp_path / "inputs"
    err = fail(["run", hlo, "--replicas", "1", "--max-steps", "20000", "--save-inputs",
                str(saved), "--out", str(tmp_path / "o")], capsys)
    assert err == (f"error: {hlo}: computation e: needs 25153 {STEP_WORDS}, more than the limit "
                   "of 20000; raise it with --max-steps or TILECC_MAX_STEPS=N\n")
    assert not saved.exists() and not (tmp_path / "o").exists()


SQUARE = """HloModule m
ENTRY e {
  x = f32[32,32] parameter(0)
  ROOT d = f32[32,32] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""


def test_many_replicas_multiply_the_entrys_steps_before_any_input_is_made(tmp_path, capsys):
    # 32 steps a device, on 100000 devices (each value within the elements bound)
    hlo = write(tmp_path, "w.hlo", SQUARE)
    saved = tmp_path / "inputs"
    err = fail(["run", hlo, "--replicas", "100000", "--save-inputs", str(saved),
                "--out", str(tmp_path / "o")], capsys)
    assert err == (f"error: {hlo}: computation e: needs 3200000 {STEP_WORDS}, more than the "
                   "limit of 1000000; raise it with --max-steps or TILECC_MAX_STEPS=N\n")
    assert not saved.exists()


def test_hlo_opt_verify_refuses_the_entrys_steps_before_the_passes(tmp_path, capsys):
    hlo = write(tmp_path, "w.hlo", WORK)
    err = fail(["hlo-opt", hlo, PASSES, "--verify=2", "--max-steps", "30000",
                "-o", str(tmp_path / "out.hlo")], capsys)
    assert err == (f"error: {hlo}: --verify=2: computation e: needs 50306 {STEP_WORDS}, more "
                   "than the limit of 30000; raise it with --max-steps or TILECC_MAX_STEPS=N\n")
    assert not (tmp_path / "out.hlo").exists()


INT_ALL_REDUCE = """HloModule m, num_partitions=%d
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = s32[] add(a, b)
}
ENTRY e {
  p = s32[] parameter(0)
  ROOT r = s32[] all-reduce(p), channel_id=1, to_apply=add
}
"""


@pytest.mark.parametrize("partitions", [9223372036854775807, 8192])
def test_an_all_reduce_over_too_many_devices_is_not_unrolled(partitions, tmp_path, capsys):
    hlo = write(tmp_path, "ar.hlo", INT_ALL_REDUCE % partitions)
    err = fail(["hlo-opt", hlo, PASSES, "-o", str(tmp_path / "out.hlo")], capsys)
    assert err == (f"error: {hlo}: r (all-reduce over {partitions} devices per replica group): "
                   f"needs {2 * partitions + 3} instructions an HLO pass adds to rewrite one "
                   "instruction, more than the limit of 16384; raise it with "
                   "TILECC_MAX_REWRITE=N\n")
    assert not (tmp_path / "out.hlo").exists()


def test_the_rewrite_bound_is_raised_by_its_variable(tmp_path, capsys, monkeypatch):
    hlo = write(tmp_path, "ar.hlo", INT_ALL_REDUCE % 4)
    monkeypatch.setenv("TILECC_MAX_REWRITE", "10")
    err = fail(["hlo-opt", hlo, PASSES, "-o", str(tmp_path / "out.hlo")], capsys)
    assert "needs 11 instructions an HLO pass adds" in err and "limit of 10;" in err
    monkeypatch.setenv("TILECC_MAX_REWRITE", "11")
    assert main(["hlo-opt", hlo, PASSES, "-o", str(tmp_path / "out.hlo")]) == 0
    assert (tmp_path / "out.hlo").read_text().count(" add(") == 4   # the reducer's and 3 chained


def test_a_run_needing_exactly_the_bound_finishes_with_the_products(tmp_path, capsys):
    hlo = write(tmp_path, "w.hlo", SQUARE)
    x = np.arange(1024, dtype=np.float32).reshape(32, 32) / 1024
    np.save(tmp_path / "x.npy", x)
    argv = ["run", hlo, "--replicas", "2", "--input", f"x={tmp_path / 'x.npy'}",
            "--out", str(tmp_path / "o")]
    assert "limit of 63;" in fail([*argv, "--max-steps", "63"], capsys)
    assert main([*argv, "--max-steps", "64"]) == 0
    out = np.load(tmp_path / "o" / "out0.npy")
    assert out.shape == (2, 32, 32)
    np.testing.assert_allclose(out[1], x @ x, rtol=1e-5)


RANK = ",".join(["1"] * 65)


def test_a_constant_of_more_dimensions_than_an_array_holds_is_a_parse_error(tmp_path, capsys):
    hlo = write(tmp_path, "r.hlo", f"HloModule m\nENTRY e {{\n  ROOT c = s32[{RANK}] constant(1)\n}}\n")
    err = fail(["run", hlo, "--out", str(tmp_path / "o")], capsys)
    assert err.startswith(f"{hlo}:3:") and "65 dimensions, more than the 64 an array holds" in err


def test_a_parameter_of_more_dimensions_than_an_array_holds_is_refused_before_the_run(
        tmp_path, capsys):
    hlo = write(tmp_path, "r.hlo", f"HloModule m\nENTRY e {{\n  ROOT p = s32[{RANK}] parameter(0)\n}}\n")
    err = fail(["run", hlo, "--out", str(tmp_path / "o")], capsys)
    assert err == (f"error: {hlo}: e/p: a value of 65 dimensions, more than the 64 an array "
                   "holds\n")
    assert not (tmp_path / "o").exists()


def test_a_dimension_spanning_lines_is_quoted_on_one_line(tmp_path, capsys):
    hlo = write(tmp_path, "d.hlo", "HloModule m\nENTRY e {\n  ROOT p = f32[1\n6] parameter(0)\n}\n")
    err = fail(["run", hlo, "--out", str(tmp_path / "o")], capsys)
    assert err.split("\n")[0] == f"{hlo}:3:16: error: bad dimension '1\\n6' in shape f32[1\\n6]"


def test_an_all_reduce_without_operands_is_a_verifier_error(tmp_path, capsys):
    text = INT_ALL_REDUCE.replace("all-reduce(p)", "all-reduce()") % 1
    hlo = write(tmp_path, "ar.hlo", text)
    err = fail(["hlo-opt", hlo, PASSES, "--verify=2", "-o", str(tmp_path / "out.hlo")], capsys)
    assert err.endswith("e/r (all-reduce): takes at least one operand\n"), err
