"""`tilecc sim PROGRAM.bir.json --input NAME=FILE.npy ... --out DIR`."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from bir_builders import ProgramBuilder, imm
from tilecc.bir.enums import AluOpType, BirDtype, EngineType
from tilecc.bir.inst import InstTensorScalarPtr
from tilecc.bir.json import write_program_json
from tilecc.cli import main

BF16 = BirDtype.bfloat16


@pytest.fixture()
def program_file(tmp_path: Path) -> Path:
    """out = a * 0.5 + 1 in bf16, and acc (in/out) whose first column is overwritten."""
    pb = ProgramBuilder()
    pb.arg_in("a", (128, 16), BF16)
    pb.arg_in("acc", (128, 4))
    pb.tile("x", (128, 16), BF16)
    pb.tile("y", (128, 16), BF16)
    pb.tile("z", (128, 1))
    pb.arg_out("out", (128, 16), BF16)
    pb.arg_out("acc", (128, 4))
    pb.load("x", "a")
    pb.add(InstTensorScalarPtr("ts", EngineType.DVE, [pb.ap("x"), imm(0.5), imm(1.0)], [pb.ap("y")],
                               op0=AluOpType.mult, op1=AluOpType.add))
    pb.add(InstTensorScalarPtr("col", EngineType.DVE, [pb.ap("x", [(1, 1)]), imm(0.0)], [pb.ap("z")],
                               op0=AluOpType.bypass))
    pb.store("out", "y")
    pb.add(InstTensorScalarPtr("st", EngineType.DVE, [pb.ap("z"), imm(0.0)],
                               [pb.ap("acc", [(1, 1)])], op0=AluOpType.add))
    path = tmp_path / "prog.bir.json"
    path.write_text(write_program_json(pb.program()))
    return path


def save(path: Path, value: np.ndarray) -> str:
    np.save(path, value)
    return str(path)


def test_runs_and_writes_outputs_in_their_dtype(program_file, tmp_path, capsys):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((128, 16)).astype(ml_dtypes.bfloat16)
    acc = rng.standard_normal((128, 4)).astype(np.float32)
    out_dir = tmp_path / "results"
    code = main(["sim", str(program_file), "--input", f"a={save(tmp_path / 'a.npy', a)}",
                 "--input", f"acc={save(tmp_path / 'acc.npy', acc)}", "--out", str(out_dir)])
    assert code == 0
    out = np.load(out_dir / "out.npy").view(ml_dtypes.bfloat16)
    want = (a.astype(np.float32) * 0.5 + 1).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(out.astype(np.float32), want.astype(np.float32))
    got_acc = np.load(out_dir / "acc.npy")
    assert got_acc.dtype == np.float32
    np.testing.assert_array_equal(got_acc[:, 1:], acc[:, 1:])  # untouched values are kept
    np.testing.assert_array_equal(got_acc[:, 0], a[:, 0].astype(np.float32))
    assert "out.npy: bfloat16[128, 16]" in capsys.readouterr().out


@pytest.mark.parametrize("make_args, message", [
    (lambda d: ["--input", f"b={d / 'f.npy'}"], "--input b: the kernel has no input of that name (inputs: a, acc, out)"),
    (lambda d: ["--input", f"a={d / 'f.npy'}", "--input", f"acc={d / 'f.npy'}"],
     "f.npy holds float32[128, 4]; the kernel's input a is bfloat16[128, 16]"),
    (lambda d: ["--input", f"a={d / 'missing.npy'}"], "--input a: cannot read "),
    (lambda d: ["--input", f"a={d / 'junk.npy'}"], "junk.npy is not a .npy file (no NUMPY header)"),
    (lambda d: ["--input", f"a={d / 'obj.npy'}"], "obj.npy holds Python objects (dtype object); tilecc reads numeric arrays only"),
    (lambda d: ["--input", "a"], "expected NAME=FILE.npy"),
    (lambda d: ["--input", f"acc={d / 'f.npy'}"], "missing input 'a'"),
])
def test_bad_inputs_are_one_line_errors(program_file, tmp_path, capsys, make_args, message):
    np.save(tmp_path / "f.npy", np.zeros((128, 4), np.float32))
    (tmp_path / "junk.npy").write_bytes(b"not numpy")
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    code = main(["sim", str(program_file), *make_args(tmp_path), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 1
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "o" / "out.npy").exists()


def test_malformed_program_is_a_parse_error(tmp_path, capsys):
    path = tmp_path / "bad.bir.json"
    path.write_text('{"name": "k", "instructions": [')
    assert main(["sim", str(path), "--out", str(tmp_path)]) == 1
    assert "bad.bir.json:1:" in capsys.readouterr().err


def test_codegen_then_sim_on_a_bundled_kernel(tmp_path, capsys):
    kernel = Path(__file__).resolve().parents[2] / "examples" / "klr" / "softmax_row.klr.json"
    bir = tmp_path / "softmax.bir.json"
    assert main(["codegen", str(kernel), "-o", str(bir)]) == 0
    x = np.random.default_rng(1).normal(size=(128, 512)).astype(np.float32)
    assert main(["sim", str(bir), "--input", f"x={save(tmp_path / 'x.npy', x)}",
                 "--out", str(tmp_path / "o")]) == 0
    got = np.load(tmp_path / "o" / "out.npy")
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


def _edited(program_file: Path, edit) -> Path:
    import json
    doc = json.loads(program_file.read_text())
    edit(doc)
    program_file.write_text(json.dumps(doc))
    return program_file


def _empty_rows(doc: dict) -> None:
    next(loc for loc in doc["memory_locations"] if loc["name"] == "y")["bytes_per_partition"] = 0


def _numpy_refuses_shapes(m, inst) -> None:   # what a mutated TensorTensorScan met
    raise ValueError("operands could not be broadcast together with shapes (64,) (128,) ")


@pytest.mark.parametrize("edit, executor, message", [
    (_empty_rows, None, "(ts): ts (TensorScalarPtr): access to 'y': the location holds no "
                        "element per partition"),
    (lambda doc: None, _numpy_refuses_shapes,
     "instructions[0] (load-x): its operands' shapes do not fit one another: operands could "
     "not be broadcast together with shapes (64,) (128,)\n"),
])
def test_a_program_the_verifier_would_refuse_is_one_located_line(program_file, tmp_path, capsys,
                                                                 monkeypatch, edit, executor,
                                                                 message):
    import tilecc.sim.execute as execute
    from tilecc.bir.inst import InstDMACopy
    if executor is not None:
        monkeypatch.setitem(execute.EXECUTORS, InstDMACopy, executor)
    path = _edited(program_file, edit)
    a = save(tmp_path / "a.npy", np.zeros((128, 16), ml_dtypes.bfloat16))
    acc = save(tmp_path / "acc.npy", np.zeros((128, 4), np.float32))
    code = main(["sim", str(path), "--input", f"a={a}", "--input", f"acc={acc}",
                 "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 1 and message in err and err.count("\n") == 1, err
    assert not (tmp_path / "o").exists()
