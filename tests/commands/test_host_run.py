"""`tilecc host-run` on threads: results of the bundled examples, and bad input as one line
with exit code 1 (the MPI launch is tests/host/test_mpi.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tilecc.cli import main

ROOT = Path(__file__).resolve().parents[2]
MESH = ROOT / "examples" / "host" / "allreduce_mesh.py"
FORMS = ROOT / "tests" / "host" / "programs" / "pypto_forms.py"


def test_mesh_example_sums_the_generated_inputs(tmp_path, capsys):
    inputs = np.arange(2 * 64, dtype=np.float32).reshape(2, 1, 64)
    np.save(tmp_path / "x.npy", inputs)
    assert main(["host-run", str(MESH), "--ranks", "2", "--input", f"inputs={tmp_path / 'x.npy'}",
                 "--out", str(tmp_path / "o")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("rank 0 out0: float32[2, 1, 64] sha256 ")
    out = np.load(tmp_path / "o" / "out0.npy")
    assert out.shape == (2, 2, 1, 64)
    np.testing.assert_array_equal(out[0, 1, 0], inputs[0, 0] + inputs[1, 0])


@pytest.mark.parametrize("argv, message", [
    (["--program", "Nope"], "no program `Nope` (found: MeshAllReduce)"),
    (["--function", "nope"], "no function `nope`"),
    (["--input", "bogus=1"], "--input bogus: `host_orch` has no parameter of that name"),
    (["--dim", "NR"], "--dim 'NR': expected NAME=INT"),
    (["--ranks", "0"], "expected a positive integer, got 0"),
    (["--timeout", "-1"], "expected a positive number of seconds"),
])
def test_bad_input_is_one_line(argv, message, capsys):
    try:
        code = main(["host-run", str(MESH), *argv])
    except SystemExit as exit_:   # argparse's own errors
        code = exit_.code
    assert code == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_a_dynamic_dimension_without_a_value_is_named(capsys):
    assert main(["host-run", str(FORMS)]) == 1
    assert "dimension NR is pl.dynamic; give --dim NR=VALUE" in capsys.readouterr().err
