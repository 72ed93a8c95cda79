"""`tilecc run IN.hlo`: inputs by name / number, per-replica vs broadcast, errors, outputs."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from tilecc.cli import main
from tilecc.hlo.parser import parse_module
from tilecc.hlo.random_inputs import random_inputs

MODULE = """HloModule m, replica_count=4
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = s32[] add(a, b)
}
ENTRY e {
  x = s32[3] parameter(0)
  h = bf16[2] parameter(1)
  ar = s32[3] all-reduce(x), replica_groups={{0,1},{2,3}}, to_apply=add
  ROOT t = (s32[3], bf16[2]) tuple(ar, h)
}
"""


@pytest.fixture()
def hlo(tmp_path: Path) -> Path:
    path = tmp_path / "m.hlo"
    path.write_text(MODULE)
    return path


def save(tmp_path: Path, name: str, array: np.ndarray) -> str:
    path = tmp_path / name
    np.save(path, array)
    return str(path)


def test_per_replica_input_by_name_and_broadcast_by_number(hlo: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture) -> None:
    x = np.array([[1, 2, 3], [10, 20, 30], [2**31 - 1, 0, -5], [1, 0, -(2**31)]], np.int32)
    h = np.array([1.5, -np.inf], ml_dtypes.bfloat16)
    out = tmp_path / "out"
    args = ["run", str(hlo), "--input", f"x={save(tmp_path, 'x.npy', x)}",
            "--input", f"p1={save(tmp_path, 'h.npy', h)}", "--out", str(out)]
    assert main(args) == 0
    ar, passthrough = np.load(out / "out0.npy"), np.load(out / "out1.npy")
    np.testing.assert_array_equal(ar, [[11, 22, 33], [11, 22, 33],
                                       [-(2**31), 0, 2**31 - 5], [-(2**31), 0, 2**31 - 5]])
    assert passthrough.view(ml_dtypes.bfloat16).tolist() == [[1.5, -np.inf]] * 4
    assert "out0.npy: int32[4, 3]" in capsys.readouterr().out


def test_replicas_option_and_seeded_random_inputs(hlo: Path, tmp_path: Path) -> None:
    text = MODULE.replace("replica_groups={{0,1},{2,3}}", "replica_groups={}")
    hlo.write_text(text)
    out = tmp_path / "out"
    assert main(["run", str(hlo), "--replicas", "2", "--seed", "7", "--out", str(out)]) == 0
    x, h = random_inputs(parse_module(text), 2, 7)
    np.testing.assert_array_equal(np.load(out / "out0.npy"),
                                  np.broadcast_to(x[0] + x[1], (2, 3)))
    assert np.load(out / "out1.npy").view(ml_dtypes.bfloat16).tobytes() == h.tobytes()


@pytest.mark.parametrize("name, array, message", [
    ("y", np.zeros(3, np.int32), "--input y: no parameter of that name or number"),
    ("p2", np.zeros(3, np.int32), "--input p2: no parameter"),
    ("x", np.zeros(3, np.int64), "dtype int64, but parameter x"),
    ("x", np.zeros((2, 3), np.int32), "shape [2, 3], but parameter x"),
])
def test_bad_inputs_are_one_line_errors(hlo: Path, tmp_path: Path, capsys: pytest.CaptureFixture,
                                        name: str, array: np.ndarray, message: str) -> None:
    out = tmp_path / "out"
    args = ["run", str(hlo), "--input", f"{name}={save(tmp_path, 'a.npy', array)}",
            "--out", str(out)]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not out.exists()


def test_not_an_npy_file(hlo: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    junk = tmp_path / "junk.npy"
    junk.write_text("not numpy")
    assert main(["run", str(hlo), "--input", f"x={junk}", "--out", str(tmp_path / "o")]) == 1
    assert "not a .npy file" in capsys.readouterr().err


def test_unsupported_opcode_names_it(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "cc.hlo"
    path.write_text("HloModule s\nENTRY e {\n  p = s32[4] parameter(0)\n"
                    "  ROOT c = s32[4] custom-call(p), custom_call_target=\"lapack\"\n}\n")
    assert main(["run", str(path), "--out", str(tmp_path / "o")]) == 1
    assert "c: opcode custom-call is not supported by the interpreter" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
