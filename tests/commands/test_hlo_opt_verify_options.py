"""`tilecc hlo-opt` options for XLA's test modules: `--allow-mixed-precision` (the verifier's
XLA option allow_mixed_precision: a reducer of another float precision than its data), and
the hint naming the parameter that bounds a while loop when random inputs run it too long."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tilecc.cli import main

MODULE = """HloModule m, replica_count=2

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p = bf16[8] parameter(0)
  ROOT r = bf16[8] all-reduce(p), replica_groups={}, to_apply=add
}
"""


def test_a_reducer_of_another_precision_needs_the_option(tmp_path: Path, capsys) -> None:
    src = tmp_path / "m.hlo"
    src.write_text(MODULE)
    out = tmp_path / "out.hlo"
    assert main(["hlo-opt", str(src), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.strip() == ("error: input module: e/r (all-reduce): reducer add parameter 0 is "
                           "f32[], expected a bf16 scalar")
    assert not out.exists()
    assert main(["hlo-opt", str(src), "--allow-mixed-precision", "-o", str(out),
                 "--passes=decompose-int-all-reduce", "--verify"]) == 0
    assert "to_apply=%add" in out.read_text()
    assert "output 0: equal" in capsys.readouterr().err


def test_the_option_does_not_allow_integer_reducers_for_floats(tmp_path: Path, capsys) -> None:
    src = tmp_path / "m.hlo"
    src.write_text(MODULE.replace("f32[]", "s32[]"))
    assert main(["hlo-opt", str(src), "--allow-mixed-precision"]) == 1
    assert "expected a bf16 scalar" in capsys.readouterr().err


LOOP = """HloModule m

cond {
  s = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  s = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], s32[]) tuple(j, n)
}

ENTRY e {
  n = s32[] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], s32[]) tuple(zero, n)
  w = (s32[], s32[]) while(init), condition=cond, body=body
  ROOT r = s32[] get-tuple-element(w), index=0
}
"""


def test_a_loop_bounded_by_a_parameter_names_the_input_to_give(tmp_path: Path, capsys) -> None:
    src = tmp_path / "loop.hlo"
    src.write_text(LOOP)
    assert main(["hlo-opt", str(src), "--verify=1", "-o", str(tmp_path / "o.hlo")]) == 1
    err = capsys.readouterr().err.splitlines()[-1]
    assert err.endswith("a while loop may be bounded by parameter p0 (random inputs make it "
                        "run long): give its value with --input p0=FILE.npy"), err
    np.save(tmp_path / "n.npy", np.array([5], np.int32))
    assert main(["hlo-opt", str(src), "--verify=1", "--input", f"p0={tmp_path / 'n.npy'}",
                 "-o", str(tmp_path / "o.hlo")]) == 0
    assert "output 0: equal" in capsys.readouterr().err
