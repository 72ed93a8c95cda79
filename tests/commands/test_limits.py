"""Inputs that ask for unbounded work, memory or recursion: each is refused with one line
that names the place and the bound (tilecc/limits.py), before anything is allocated."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tilecc.cli import main
from tilecc.errors import ParseError, VerifyError
from tilecc.hlo.parser import parse_module
from tilecc.hlo.verifier import verify_module
from tilecc.limits import LIMITS

REPO = Path(__file__).resolve().parents[2]
KERNEL = REPO / "examples" / "kernels" / "softmax_row.py"
PASSES = "--passes=decompose-int-all-reduce,decompose-scalar-reduce"

LOOP = """HloModule m
cond {
  p = s32[] parameter(0)
  n = s32[] constant(%s)
  ROOT lt = pred[] compare(p, n), direction=LT
}
body {
  p = s32[] parameter(0)
  step = s32[] constant(%s)
  ROOT a = s32[] add(p, step)
}
ENTRY e {
  z = s32[] constant(0)
  ROOT w = s32[] while(z), condition=cond, body=body
}
"""


def fail(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 1
    err = capsys.readouterr().err
    # the error line, plus hlo-opt's per-pass lines and its --verify progress line
    assert "Traceback" not in err and 1 <= len(err.split("\n")) - 1 <= 4, err
    assert all(len(line) <= LIMITS["message"].default for line in err.split("\n")), err[:300]
    return err


def write(tmp_path: Path, name: str, text: str | bytes) -> str:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return str(path)


# --- sizes -------------------------------------------------------------------------------

def test_a_dimension_beyond_int64_is_a_parse_error_at_the_shape() -> None:
    with pytest.raises(ParseError) as info:
        parse_module("HloModule m\nENTRY e {\n  ROOT c = s32[100000000000000000000] constant(1)\n}\n")
    assert (info.value.line, info.value.col) == (3, 16)
    assert "beyond 9223372036854775807" in info.value.message


def test_a_constant_too_big_for_its_text_is_refused_before_building_it() -> None:
    dims = ",".join(["2"] * 64)
    with pytest.raises(ParseError) as info:
        parse_module(f"HloModule m\nENTRY e {{\n  ROOT c = s32[{dims}] constant(1)\n}}\n")
    assert "has 18446744073709551616 elements but the literal is only 1 characters" in str(info.value)


@pytest.mark.parametrize("header, argv, expected", [
    ("", ["--replicas", "99999999999999999999"],
     "module m on replicas x partitions = 99999999999999999999 devices"),
    (", replica_count=99999999999999999999", [],
     "module m on replicas x partitions = 99999999999999999999 devices"),
    (", num_partitions=4000000000", [], "module m on replicas x partitions = 4000000000 devices"),
])
def test_device_counts_beyond_the_element_bound(header, argv, expected, tmp_path, capsys):
    hlo = write(tmp_path, "m.hlo", f"HloModule m{header}\nENTRY e {{\n  ROOT c = s32[] constant(1)\n}}\n")
    err = fail(["run", hlo, *argv, "--out", str(tmp_path / "o")], capsys)
    assert err.startswith(f"error: {hlo}: {expected}: needs ") and "TILECC_MAX_ELEMENTS=N" in err
    assert not (tmp_path / "o").exists()


def test_a_value_beyond_the_element_bound_names_its_instruction(tmp_path, capsys):
    hlo = write(tmp_path, "m.hlo", "HloModule m\nENTRY e {\n  z = f32[] constant(0)\n"
                "  ROOT b = f32[100000,100000] broadcast(z), dimensions={}\n}\n")
    err = fail(["run", hlo, "--replicas", "1", "--out", str(tmp_path / "o")], capsys)
    assert err == (f"error: {hlo}: e/b (f32[100000,100000]{{1,0}} on 1 devices): needs 10000000000 elements of "
                   "one value (all devices together), more than the limit of 268435456; raise it "
                   "with TILECC_MAX_ELEMENTS=N\n")


def test_the_element_bound_is_raised_by_its_variable(tmp_path, capsys, monkeypatch):
    hlo = write(tmp_path, "m.hlo", "HloModule m\nENTRY e {\n  z = f32[] constant(0)\n"
                "  ROOT b = f32[64] broadcast(z), dimensions={}\n}\n")
    monkeypatch.setenv("TILECC_MAX_ELEMENTS", "63")
    assert "more than the limit of 63" in fail(["run", hlo, "--replicas", "1", "--out",
                                                 str(tmp_path / "o")], capsys)
    monkeypatch.setenv("TILECC_MAX_ELEMENTS", "64")
    assert main(["run", hlo, "--replicas", "1", "--out", str(tmp_path / "o")]) == 0
    assert np.load(tmp_path / "o" / "out0.npy").shape == (1, 64)
    monkeypatch.setenv("TILECC_MAX_ELEMENTS", "lots")
    assert "TILECC_MAX_ELEMENTS='lots': expected a positive integer" in \
        fail(["run", hlo, "--out", str(tmp_path / "p")], capsys)


@pytest.mark.parametrize("command", ["sim", "trace", "run"])
def test_a_ten_byte_npy_is_a_clean_error(command, tmp_path, capsys):
    bad = write(tmp_path, "a.npy", b"\x93NUMPY\x01\x00\x01\x00{")
    if command == "sim":
        bir = tmp_path / "k.bir.json"
        assert main(["codegen", str(REPO / "examples" / "klr" / "softmax_row.klr.json"),
                     "-o", str(bir)]) == 0
        argv = ["sim", str(bir), "--input", f"x={bad}", "--out", str(tmp_path / "o")]
    else:
        argv = [command, f"{KERNEL}:softmax_row", "--input", f"a={bad}",
                *(["--out", str(tmp_path / "o")] if command == "run" else [])]
    capsys.readouterr()
    assert "EOF in multi-line statement" in fail(argv, capsys)


@pytest.mark.parametrize("command", ["sim", "run"])
def test_an_npy_header_claiming_more_data_than_the_file_holds(command, tmp_path, capsys):
    header = b"{'descr': '<f4', 'fortran_order': False, 'shape': (100000000000, 100000000000), }"
    header += b" " * (118 - len(header)) + b"\n"
    bad = write(tmp_path, "a.npy", b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") +
                header + bytes(64))
    if command == "sim":
        bir = tmp_path / "k.bir.json"
        assert main(["codegen", str(REPO / "examples" / "klr" / "softmax_row.klr.json"),
                     "-o", str(bir)]) == 0
        argv = ["sim", str(bir), "--input", f"x={bad}", "--out", str(tmp_path / "o")]
    else:
        argv = ["run", f"{KERNEL}:softmax_row", "--input", f"a={bad}", "--out", str(tmp_path / "o")]
    capsys.readouterr()
    err = fail(argv, capsys)
    assert "the header declares float32[100000000000, 100000000000], 40000000000000000000000 " \
           "bytes of data, but the file holds 64" in err


def test_a_launch_grid_beyond_the_bound(tmp_path, capsys):
    np.save(tmp_path / "a.npy", np.zeros((128, 64), np.float32))
    err = fail(["trace", f"{KERNEL}:softmax_row[100000,100000]", "--input",
                f"a={tmp_path / 'a.npy'}"], capsys)
    assert err == (f"error: {KERNEL}:softmax_row[100000,100000]: needs 10000000000 programs in an "
                   "SPMD launch grid, more than the limit of 4096; raise it with TILECC_MAX_GRID=N\n")


# --- steps -------------------------------------------------------------------------------

@pytest.mark.parametrize("bound, step", [(2147483647, 1), (10, 0)])
def test_long_loops_stop_at_max_steps(bound, step, tmp_path, capsys):
    hlo = write(tmp_path, "loop.hlo", LOOP % (bound, step))
    err = fail(["run", hlo, "--max-steps", "3000", "--out", str(tmp_path / "o")], capsys)
    assert err == (f"error: {hlo}: computation body: needs 3002 HLO steps in one run (a step is 1024 "
                   "element operations on each device), more than the limit of 3000; raise "
                   "it with --max-steps or TILECC_MAX_STEPS=N\n")
    assert not (tmp_path / "o").exists()


def test_max_steps_lets_a_loop_that_fits_finish(tmp_path, capsys):
    hlo = write(tmp_path, "loop.hlo", LOOP % (1000, 1))
    assert main(["run", hlo, "--replicas", "1", "--max-steps", "5000", "--out", str(tmp_path / "o")]) == 0
    assert np.load(tmp_path / "o" / "out0.npy").tolist() == [1000]


def test_verify_on_a_loop_bounded_by_a_random_parameter_stops(tmp_path, capsys, monkeypatch):
    # a loop whose bound is an entry parameter: random values make it astronomically long
    hlo = write(tmp_path, "loop.hlo", """HloModule m
cond {
  p = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], s32[]) tuple(j, n)
}
ENTRY e {
  z = s32[] constant(0)
  n = s32[] parameter(0)
  t = (s32[], s32[]) tuple(z, n)
  ROOT w = (s32[], s32[]) while(t), condition=cond, body=body
}
""")
    monkeypatch.setenv("TILECC_MAX_STEPS", "2000")
    err = fail(["hlo-opt", hlo, PASSES, "--verify=2", "-o", str(tmp_path / "out.hlo")], capsys)
    assert "more than the limit of 2000; raise it with --max-steps or TILECC_MAX_STEPS=N" in err
    assert not (tmp_path / "out.hlo").exists()


def test_ctrl_c_ends_with_one_line_and_exit_130(tmp_path):
    hlo = write(tmp_path, "loop.hlo", LOOP % (2147483647, 1))
    # SIGINT back to its default in the child: a parent that ignores it (a test runner's
    # worker, nohup) would otherwise pass the ignoring on, and Python keeps it ignored
    proc = subprocess.Popen([sys.executable, "-m", "tilecc.cli", "run", hlo, "--max-steps",
                             "1000000000000", "--out", str(tmp_path / "o")],
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        time.sleep(3)   # imported and inside the loop (a kill before that also ends in 130)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert (proc.returncode, err) == (130, "tilecc: interrupted\n")
    assert not (tmp_path / "o").exists()


# --- call cycles -----------------------------------------------------------------------------

SELF_CALL = """HloModule m
f {
  p = s32[] parameter(0)
  ROOT c = s32[] call(p), to_apply=f
}
ENTRY e {
  z = s32[] constant(0)
  ROOT c = s32[] call(z), to_apply=f
}
"""

WHILE_IN_ITS_BODY = """HloModule m
cond {
  p = s32[] parameter(0)
  ROOT t = pred[] constant(true)
}
loop {
  p = s32[] parameter(0)
  ROOT w = s32[] while(p), condition=cond, body=loop
}
ENTRY e {
  z = s32[] constant(0)
  ROOT w = s32[] while(z), condition=cond, body=loop
}
"""


@pytest.mark.parametrize("text, expected", [
    (SELF_CALL, "f/c: calls f, a cycle of calls (f -> f)"),
    (WHILE_IN_ITS_BODY, "loop/w: calls loop, a cycle of calls (loop -> loop)"),
    (SELF_CALL.replace("to_apply=f\n}\nENTRY", "to_apply=g\n}\ng {\n  q = s32[] parameter(0)\n"
                       "  ROOT d = s32[] call(q), to_apply=f\n}\nENTRY"),
     "g/d: calls f, a cycle of calls (f -> g -> f)"),
])
def test_the_verifier_rejects_call_cycles(text, expected):
    with pytest.raises(VerifyError) as info:
        verify_module(parse_module(text))
    assert str(info.value).startswith(expected)


@pytest.mark.parametrize("command", ["run", "hlo-opt"])
def test_call_cycles_are_refused_by_run_and_hlo_opt(command, tmp_path, capsys):
    hlo = write(tmp_path, "m.hlo", SELF_CALL)
    argv = ["run", hlo, "--out", str(tmp_path / "o")] if command == "run" else \
        ["hlo-opt", hlo, PASSES, "-o", str(tmp_path / "o")]
    assert "f/c: calls f, a cycle of calls (f -> f)" in fail(argv, capsys)


def test_a_step_is_an_instruction_on_1024_elements():
    from tilecc.hlo.run_limits import step_cost
    from tilecc.hlo.types import PrimitiveType, Shape
    s32 = PrimitiveType.S32
    assert [step_cost(Shape.array(s32, dims)) for dims in [(), (1024,), (256, 64), (5000,)]] \
        == [1, 1, 16, 4]
    assert step_cost(Shape.tuple([Shape.array(s32, (4096,)), Shape.array(s32, ())])) == 4


def test_a_long_run_shows_its_progress_and_bound_on_a_terminal(monkeypatch, capsys):
    import sys as system

    from tilecc.limits import LimitError, StepBudget
    monkeypatch.setattr(StepBudget, "PROGRESS_SECONDS", 0.0)
    monkeypatch.setattr(system.stderr, "isatty", lambda: True)
    budget = StepBudget(100_000)
    for _ in range(6):
        budget.spend(10_000, "computation body")
    with pytest.raises(LimitError):
        budget.spend(50_000, "computation body")
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == ("... 20000 of at most 100000 HLO steps in one run (a step is 1024 element "
                        "operations on each device) (raise it with --max-steps or "
                        "TILECC_MAX_STEPS=N)")
    assert len(lines) == 3


def test_hlo_opt_verify_takes_max_steps_as_its_error_says(tmp_path, capsys):
    """The step-limit error of --verify names --max-steps; hlo-opt takes it."""
    hlo = write(tmp_path, "loop.hlo", LOOP % (5000, 1))
    argv = ["hlo-opt", hlo, "--passes=decompose-int-all-reduce", "--verify=1",
            "-o", str(tmp_path / "o.hlo")]
    err = fail([*argv, "--max-steps", "100"], capsys)
    assert "more than the limit of 100; raise it with --max-steps or TILECC_MAX_STEPS=N" in err
    assert main([*argv, "--max-steps", "100000"]) == 0
    assert "output 0: equal" in capsys.readouterr().err
