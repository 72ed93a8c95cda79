"""Error messages: user text quoted in them is cut, and each names its place (the file,
the instruction, the input)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tilecc.cli import main
from tilecc.limits import LIMITS, cut, cut_lines

REPO = Path(__file__).resolve().parents[2]
HOST = REPO / "examples" / "host" / "allreduce_mesh.py"
PASSES = "--passes=decompose-int-all-reduce,decompose-scalar-reduce"


def fail(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and 1 <= len(err.split("\n")) - 1 <= 3, err
    assert all(len(line) <= LIMITS["message"].default for line in err.split("\n")), err[:300]
    return err


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_cut_keeps_both_ends():
    assert cut("abc", 4) == "abc"
    assert cut("a" * 25 + "b" * 30 + "c" * 25, 40) == "a" * 7 + "...(66 more characters)..." + "c" * 7
    assert all(len(cut("x" * n, 40)) <= 40 for n in range(30, 2000, 7))
    assert cut_lines("x" * 3000 + "\nshort") == cut("x" * 3000, 1000) + "\nshort"


def test_a_deep_dump_path_leaves_the_whole_explanation(tmp_path, capsys):
    # XLA's dumps often sit a hundred characters or more deep; the line keeps the path and
    # every word of what to do (the 400-character bound once cut the hint's middle out)
    folder = tmp_path.joinpath(*["xla_dump_of_a_jax_program"] * 8)
    folder.mkdir(parents=True)
    path = write(folder, "module_0001.jit_f.before_optimizations.txt",
                 "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT c = f32[4] "
                 'custom-call(p), custom_call_target="xla.sdy.GlobalToLocalShape"\n}\n')
    assert len(path) > 200
    last = fail(["hlo-opt", "--verify", path], capsys).strip().split("\n")[-1]
    assert last.startswith(f"error: {path}: c: opcode custom-call is not supported")
    assert last.endswith("after its SPMD partitioner, *.spmd-partitioner.*.txt under "
                         "--xla_dump_to)")


def test_a_huge_operand_name_is_cut_in_the_message(tmp_path, capsys):
    name = "n" * 100_000
    hlo = write(tmp_path, "m.hlo", f"HloModule m\nENTRY e {{\n  ROOT r = s32[] add({name}, {name})\n}}\n")
    err = fail(["hlo-opt", hlo, PASSES], capsys)
    assert err.startswith(f"{hlo}:3:22: error: use of undefined instruction 'nnnn")
    assert "more characters)..." in err


def test_a_huge_bir_dtype_is_cut_in_the_message(tmp_path, capsys):
    bir = tmp_path / "k.bir.json"
    assert main(["codegen", str(REPO / "examples" / "klr" / "softmax_row.klr.json"), "-o", str(bir)]) == 0
    text = bir.read_text().replace('"float32"', '"' + "f" * 100_000 + '"', 1)
    bir.write_text(text)
    capsys.readouterr()
    err = fail(["sim", str(bir), "--out", str(tmp_path / "o")], capsys)
    assert "more characters)..." in err


def test_a_huge_host_name_is_cut_in_the_message(tmp_path, capsys):
    text = HOST.read_text().replace("import pypto.language as pl", "import pypto.language as p" +
                                    "l" * 100_000, 1)
    source = write(tmp_path, "p.py", text)
    err = fail(["host-opt", source, "-o", str(tmp_path / "out.py")], capsys)
    assert err.startswith(f"{source}:") and "more characters)..." in err


def test_limits_name_their_variables():
    assert {entry.env for entry in LIMITS.values()} == {
        "TILECC_MAX_STEPS", "TILECC_MAX_ELEMENTS", "TILECC_MAX_DEPTH", "TILECC_MAX_GRID",
        "TILECC_MAX_MESSAGE", "TILECC_MAX_TRACE_STEPS", "TILECC_MAX_INT_BITS",
        "TILECC_MAX_REWRITE"}


def test_out_of_memory_names_the_input(tmp_path, capsys, monkeypatch):
    import tilecc.commands.codegen as codegen

    def exhausted(self, kernel):
        raise MemoryError()
    monkeypatch.setattr(codegen.KlirToBirCodegen, "codegen_kernel", exhausted)
    klr = str(REPO / "examples" / "klr" / "softmax_row.klr.json")
    assert fail(["codegen", klr], capsys) == f"error: {klr}: out of memory\n"


def test_a_simulator_fault_names_the_file_and_the_instruction(tmp_path, capsys, monkeypatch):
    import tilecc.sim.execute as execute
    from tilecc.errors import SimError
    bir = tmp_path / "k.bir.json"
    assert main(["codegen", str(REPO / "examples" / "klr" / "softmax_row.klr.json"), "-o", str(bir)]) == 0
    np.save(tmp_path / "x.npy", np.zeros((128, 512), np.float32))
    calls: list[str] = []

    def faulty(real):
        def run(machine, inst):
            calls.append(f"{inst.name}): {inst.name} ({type(inst).__name__[4:]}")
            if len(calls) == 2:
                raise SimError("access out of bounds")
            real(machine, inst)
        return run
    for kind, real in list(execute.EXECUTORS.items()):
        monkeypatch.setitem(execute.EXECUTORS, kind, faulty(real))
    capsys.readouterr()
    err = fail(["sim", str(bir), "--input", f"x={tmp_path / 'x.npy'}", "--out", str(tmp_path / "o")],
               capsys)
    # a BIR file without kernel lines: the instruction's index, name and opcode
    assert err == f"error: {bir}:instructions[1] ({calls[1]}): access out of bounds\n"
    assert not (tmp_path / "o").exists()


def test_an_output_name_too_long_for_a_file_is_refused_before_any_is_written(tmp_path):
    from tilecc.errors import TileccError
    from tilecc.fileio import write_npy_outputs
    arrays = [("short", np.zeros(2)), ("n" * 300, np.zeros(2))]
    with pytest.raises(TileccError, match=r"^output 'n{40}'\.\.\.: 300 characters, too long for "
                       r"a file name \(255 bytes with \.npy\)$"):
        write_npy_outputs(str(tmp_path / "o"), arrays)
    assert not (tmp_path / "o").exists()
