"""`tilecc codegen`: output on success; one error line, exit 1 and no output on bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tilecc.bir.json import read_program_json
from tilecc.cli import main

K01 = str(Path(__file__).resolve().parents[1] / "fixtures" / "klr0012" / "k01_ts_basic_f32.klr.json")


def test_codegen_writes_verified_bir(tmp_path: Path) -> None:
    out = tmp_path / "k01.bir.json"
    assert main(["codegen", K01, "-o", str(out)]) == 0
    program = read_program_json(out.read_text())
    assert [i.name for i in program.instructions] == ["NcDmaCopy-0", "TensorScalar-1",
                                                      "NcDmaCopy-2"]
    assert [t.name for t in program.inputs] == ["a"]


def test_codegen_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["codegen", K01]) == 0
    assert json.loads(capsys.readouterr().out)["name"] == "k01_ts_basic_f32.kernel"


def move_to_psum(node: Any, name: str) -> None:
    """Every definition of tensor `name` becomes a PSUM tile too large for PSUM."""
    if isinstance(node, dict):
        if node.get("name") == name and "address" in node:
            node["address"].update(memory="psum", size=[128, 32768])
        for value in node.values():
            move_to_psum(value, name)
    elif isinstance(node, list):
        for value in node:
            move_to_psum(value, name)


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["body"][1]["store"]["op"]["tensorScalar"].update(op0="mul"),
     "body[1].store.op.tensorScalar.op0: error: unknown AluOp 'mul'"),
    (lambda d: move_to_psum(d, "tsc.3.6"),
     "bad.klr.json: memory location 'tsc.3.6': 32768 bytes per partition exceed the 16384 of PSUM"),
])
def test_bad_input_one_line_no_output(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      edit, message: str) -> None:  # type: ignore[no-untyped-def]
    doc = json.loads(Path(K01).read_text())
    edit(doc)
    src = tmp_path / "bad.klr.json"
    src.write_text(json.dumps(doc))
    out = tmp_path / "bad.bir.json"
    out.write_text("previous")
    assert main(["codegen", str(src), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert out.read_text() == "previous"


def test_missing_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["codegen", "/nonexistent.klr.json"]) == 1
    assert "cannot read" in capsys.readouterr().err
