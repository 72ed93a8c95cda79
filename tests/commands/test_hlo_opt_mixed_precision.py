"""`tilecc hlo-opt --allow-mixed-precision`: the verifier's XLA option allow_mixed_precision
(a reducer of another float precision than its data) from the command line."""

from __future__ import annotations

from pathlib import Path

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
