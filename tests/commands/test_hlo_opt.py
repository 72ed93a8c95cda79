"""`tilecc hlo-opt`: files and stdin/stdout, atomic output, errors, dumps, --verify."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tilecc.cli import main
from tilecc.hlo.builders import make_reshape
from tilecc.hlo.parser import parse_module
from tilecc.hlo.printer import print_module
from tilecc.passes.decompose_scalar_reduce import DecomposeScalarReduce

MODULE = """HloModule psum_and_max, replica_count=4

add_s32 {
  lhs = s32[] parameter(0)
  rhs = s32[] parameter(1)
  ROOT sum = s32[] add(lhs, rhs)
}

max_s32 {
  lhs = s32[] parameter(0)
  rhs = s32[] parameter(1)
  ROOT m = s32[] maximum(lhs, rhs)
}

ENTRY main {
  p0 = s32[] parameter(0)
  p1 = s32[8,32] parameter(1)
  psum = s32[] all-reduce(p0), replica_groups={{0,1,2,3}}, to_apply=add_s32
  low = s32[] constant(-2147483648)
  top = s32[] reduce(p1, low), dimensions={0,1}, to_apply=max_s32
  ROOT out = (s32[], s32[]) tuple(psum, top)
}
"""
BOTH = "--passes=decompose-int-all-reduce,aws_neuron_decompose_scalar_reduce"


@pytest.fixture
def module_file(tmp_path: Path) -> Path:
    path = tmp_path / "in.hlo"
    path.write_text(MODULE)
    return path


def test_rewrites_a_file_into_an_output_file(module_file: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out.hlo"
    assert main(["hlo-opt", str(module_file), BOTH, "-o", str(out)]) == 0
    text = out.read_text()
    module = parse_module(text)
    opcodes = [i.opcode.mnemonic for i in module.entry.instructions]
    assert "all-reduce" not in opcodes and "all-gather" in opcodes
    assert opcodes.count("reduce") == 2 and "maximum" in opcodes
    err = capsys.readouterr().err
    assert "decompose-int-all-reduce: changed" in err
    assert "decompose-scalar-reduce: changed" in err


def test_passes_run_in_the_order_given(module_file: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out.hlo"
    assert main(["hlo-opt", str(module_file), "--passes=decompose-scalar-reduce",
                 "-o", str(out)]) == 0
    opcodes = [i.opcode.mnemonic for i in parse_module(out.read_text()).entry.instructions]
    assert "all-reduce" in opcodes and "all-gather" not in opcodes
    assert capsys.readouterr().err.splitlines() == ["decompose-scalar-reduce: changed"]


def test_stdin_to_stdout() -> None:
    proc = subprocess.run([sys.executable, "-m", "tilecc.cli", "hlo-opt", "-", BOTH],
                          input=MODULE, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("HloModule psum_and_max, replica_count=4")
    assert "all-gather(" in proc.stdout


def test_list_passes(capsys) -> None:
    assert main(["hlo-opt", "--list-passes"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["order", "name", "alias", "(spec", "registry", "name)", "class"]
    assert lines[1].split() == ["88", "decompose-int-all-reduce",
                                "aws_neuron_decompose_int_all_reduce", "DecomposeIntAllReduce"]
    assert lines[2].split() == ["74", "decompose-scalar-reduce",
                                "aws_neuron_decompose_scalar_reduce", "DecomposeScalarReduce"]


def test_unknown_pass_lists_valid_ones_and_writes_nothing(module_file: Path, tmp_path: Path,
                                                          capsys) -> None:
    out = tmp_path / "out.hlo"
    assert main(["hlo-opt", str(module_file), "--passes=decompose-int-all-reduce,fold-all",
                 "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "unknown pass 'fold-all'" in err
    assert "decompose-scalar-reduce" in err and "aws_neuron_decompose_int_all_reduce" in err
    assert not out.exists()


def test_without_passes_the_module_is_printed_back(module_file: Path, capsys) -> None:
    assert main(["hlo-opt", str(module_file)]) == 0
    out = capsys.readouterr()
    assert out.out == print_module(parse_module(MODULE)) and out.err == ""


def test_parse_error_names_the_location_and_keeps_the_old_output(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.hlo"
    bad.write_text(MODULE.replace("p1 = s32[8,32] parameter(1)", "p1 = s32[8,32 parameter(1)"))
    out = tmp_path / "out.hlo"
    out.write_text("previous result\n")
    assert main(["hlo-opt", str(bad), BOTH, "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:17:" in err
    assert "Traceback" not in err
    assert out.read_text() == "previous result\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.hlo", "out.hlo"]


def test_invalid_module_is_rejected_before_any_pass(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.hlo"
    bad.write_text(MODULE.replace("psum = s32[] all-reduce", "psum = s32[2] all-reduce"))
    assert main(["hlo-opt", str(bad), BOTH]) == 1
    assert "input module" in capsys.readouterr().err


def test_control_dependent_all_reduce_is_left_alone_and_reported_unchanged(
        tmp_path: Path, capsys) -> None:
    """XLA skips replacing an instruction with control dependencies; hlo-opt keeps the
    module exactly as it was and reports no change (its expansion is dropped)."""
    src = tmp_path / "ctrl.hlo"
    src.write_text(MODULE.replace(
        "psum = s32[] all-reduce(p0), replica_groups={{0,1,2,3}}, to_apply=add_s32",
        "n = s32[] negate(p0)\n  psum = s32[] all-reduce(p0), replica_groups={{0,1,2,3}}, "
        "to_apply=add_s32, control-predecessors={n}"))
    out = tmp_path / "out.hlo"
    assert main(["hlo-opt", str(src), "--passes=decompose-int-all-reduce", "-o", str(out)]) == 0
    assert "decompose-int-all-reduce: no change" in capsys.readouterr().err
    text = out.read_text()
    assert "all-reduce(%p0), replica_groups={{0,1,2,3}}, to_apply=%add_s32, " \
           "control-predecessors={%n}" in text
    assert "all-gather" not in text


def test_module_with_a_rewritten_async_computation_is_rejected(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "async.hlo"
    bad.write_text(MODULE.replace("ENTRY main {", """wrapped {
  x = s32[] parameter(0)
  y = s32[] negate(x)
  ROOT z = s32[] negate(y)
}

ENTRY main {
  st = ((s32[]), s32[], s32[]) async-start(p0), calls=wrapped
  dn = s32[] async-done(st)""").replace("tuple(psum, top)", "tuple(dn, top)")
                   .replace("  p0 = s32[] parameter(0)\n", "").replace(
                       "ENTRY main {\n", "ENTRY main {\n  p0 = s32[] parameter(0)\n"))
    assert main(["hlo-opt", str(bad), BOTH]) == 1
    err = capsys.readouterr().err
    assert "input module" in err and "asynchronous computation wrapped expected to contain " \
        "only the root and parameter instructions" in err


def test_missing_input_file(tmp_path: Path, capsys) -> None:
    assert main(["hlo-opt", str(tmp_path / "nope.hlo"), BOTH]) == 1
    assert "nope.hlo: cannot read" in capsys.readouterr().err


def test_dump_dir(module_file: Path, tmp_path: Path) -> None:
    dump = tmp_path / "dumps"
    assert main(["hlo-opt", str(module_file), BOTH, "-o", str(tmp_path / "o.hlo"),
                 "--dump-dir", str(dump)]) == 0
    assert sorted(p.name for p in dump.iterdir()) == [
        "01-decompose-int-all-reduce.after.hlo", "01-decompose-int-all-reduce.before.hlo",
        "02-decompose-scalar-reduce.after.hlo", "02-decompose-scalar-reduce.before.hlo"]
    assert (dump / "02-decompose-scalar-reduce.after.hlo").read_text() == \
        (tmp_path / "o.hlo").read_text()


def test_verify_on_the_interpreter(module_file: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out.hlo"
    assert main(["hlo-opt", str(module_file), BOTH, "-o", str(out), "--verify"]) == 0
    err = capsys.readouterr().err
    assert "verify on interpreter: 4 replica(s) x 1 partition(s), seed 0" in err
    assert "output 0: equal" in err and "output 1: equal" in err
    assert out.exists()


def test_a_file_after_a_bare_verify_is_an_input_in_its_place(module_file: Path, tmp_path: Path,
                                                              capsys) -> None:
    """`--verify m.hlo` verifies m.hlo; `--verify 2 m.hlo` takes 2 as the replica count."""
    other = tmp_path / "other.hlo"
    other.write_text(module_file.read_text().replace("HloModule psum_and_max", "HloModule second"))
    assert main(["hlo-opt", BOTH, "-o", str(tmp_path / "o.hlo"), "--verify",
                 str(module_file), str(other)]) == 0
    err = capsys.readouterr().err
    assert "verify on interpreter: 4 replica(s)" in err
    written = (tmp_path / "o.hlo").read_text()
    assert written.index("HloModule psum_and_max") < written.index("HloModule second")
    assert main(["hlo-opt", BOTH, "-o", str(tmp_path / "o.hlo"), "--verify", "2",
                 str(module_file)]) == 1   # 2 replicas do not fit groups {{0,1,2,3}}
    assert "error:" in capsys.readouterr().err


def test_verify_with_a_replica_count(module_file: Path, tmp_path: Path, capsys) -> None:
    """8 replicas do not fit replica groups {{0,1,2,3}}: the interpreter says so (exit 1)."""
    assert main(["hlo-opt", str(module_file), BOTH, "-o", str(tmp_path / "o.hlo"),
                 "--verify=8"]) == 1
    assert "error:" in capsys.readouterr().err


def _wrong_expansion(self, inst):
    """A valid but wrong rewrite: the reduce's init value instead of the reduction."""
    return make_reshape(inst.shape, inst.operands[1])


def test_verify_mismatch_exits_2_and_writes_nothing(module_file: Path, tmp_path: Path,
                                                   monkeypatch, capsys) -> None:
    monkeypatch.setattr(DecomposeScalarReduce, "expand_instruction", _wrong_expansion)
    out = tmp_path / "out.hlo"
    assert main(["hlo-opt", str(module_file), BOTH, "-o", str(out), "--verify=4",
                 "--seed=3"]) == 2
    err = capsys.readouterr().err
    assert "output 0: equal" in err
    assert "output 1: mismatch at device 0, index []: before" in err
    assert "after np.int32(-2147483648)" in err
    assert not out.exists()


@pytest.mark.oracle
def test_verify_on_xla(module_file: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out.hlo"
    assert main(["hlo-opt", str(module_file), BOTH, "-o", str(out), "--oracle=xla"]) == 0
    err = capsys.readouterr().err
    assert "verify on xla: 4 replica(s) x 1 partition(s), seed 0" in err
    assert "output 0: equal" in err and "output 1: equal" in err


@pytest.mark.oracle
def test_verify_mismatch_on_xla(module_file: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(DecomposeScalarReduce, "expand_instruction", _wrong_expansion)
    assert main(["hlo-opt", str(module_file), BOTH, "-o", str(tmp_path / "o.hlo"),
                 "--oracle=xla"]) == 2
    assert "output 1: mismatch" in capsys.readouterr().err


def test_a_dump_dir_that_cannot_be_made_is_one_line(module_file: Path, tmp_path: Path,
                                                    capsys) -> None:
    (tmp_path / "taken").write_text("a file")
    assert main(["hlo-opt", str(module_file), BOTH, "-o", str(tmp_path / "o.hlo"),
                 "--dump-dir", str(tmp_path / "taken" / "dumps")]) == 1
    err = capsys.readouterr().err
    assert err.endswith(f"error: {tmp_path / 'taken' / 'dumps'}: cannot create dump directory: "
                        "Not a directory\n")
    assert not (tmp_path / "o.hlo").exists()
