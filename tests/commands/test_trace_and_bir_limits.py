"""The bounds on tracing a kernel and on the sizes a BIR program declares, and the three
findings of fuzzing campaign 3 they close: a BIR memory location bigger than numpy can
allocate (sim #240), a kernel loop bound of `10**120**120**12` (trace #785), a kernel whose
compile-time SyntaxWarning ran its error over three lines (run kernel #2195)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from tilecc.cli import main
from tilecc.limits import LIMITS, limit, raised
from tilecc.nki.kernel_source import compile_kernel, guarded_pow

REPO = Path(__file__).resolve().parents[2]
PREFIX_SUM = REPO / "examples" / "kernels" / "prefix_sum.py"
BIR = REPO / "tests" / "fixtures" / "klr" / "tensor_scalar_cumulative.bir.json"


def fail(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(argv) == 1
    err = capsys.readouterr().err
    lines = err.split("\n")[:-1]
    assert "Traceback" not in err and 1 <= len(lines) <= 3, err
    assert all(len(line) <= LIMITS["message"].default for line in lines), err[:300]
    return err


def prefix_sum(tmp_path: Path, loop: str) -> str:
    """prefix_sum.py with its chunk loop bound replaced by `loop`, and its input."""
    text = PREFIX_SUM.read_text()
    assert "nl.sequential_range(n // CHUNK)" in text
    path = tmp_path / "k.py"
    path.write_text(text.replace("nl.sequential_range(n // CHUNK)", f"nl.sequential_range({loop})"))
    np.save(tmp_path / "x.npy", np.zeros((128, 384), np.float32))
    return str(path)


# --- trace steps ---------------------------------------------------------------------------

@pytest.mark.parametrize("command", ["trace", "run"])
def test_a_loop_of_a_trillion_iterations_is_refused_at_its_line(command, tmp_path, capsys):
    kernel = prefix_sum(tmp_path, "10**12")
    out = ["-o", str(tmp_path / "k.klr.json")] if command == "trace" else \
        ["--out", str(tmp_path / "o")]
    err = fail([command, f"{kernel}:prefix_sum", "--input", f"x={tmp_path / 'x.npy'}", *out],
               capsys)
    assert err.startswith(f"{kernel}:27:14: error: needs 1000000000002 trace steps ")
    assert "more than the limit of 1000000; raise it with --max-trace-steps or " \
           "TILECC_MAX_TRACE_STEPS=N\n    for c in nl.sequential_range(10**12):\n" in err
    assert not (tmp_path / "k.klr.json").exists() and not (tmp_path / "o").exists()


def test_max_trace_steps_counts_instructions_and_iterations(tmp_path, capsys):
    # prefix_sum on 384 columns: dma_copy, memset, a loop of 3 (3 steps), 3 scans, dma_copy
    argv = ["trace", f"{PREFIX_SUM}:prefix_sum", "--input", "x=f32[128,384]",
            "-o", str(tmp_path / "k.klr.json")]
    err = fail([*argv, "--max-trace-steps", "8"], capsys)
    assert f"{PREFIX_SUM}:32:5: error: needs 9 trace steps" in err and "limit of 8;" in err
    assert main([*argv, "--max-trace-steps", "9"]) == 0
    assert len(json.loads((tmp_path / "k.klr.json").read_text())["body"][0]["body"]) == 6


def test_the_trace_bound_is_raised_by_its_variable_and_the_option_wins(tmp_path, capsys,
                                                                        monkeypatch):
    argv = ["trace", f"{PREFIX_SUM}:prefix_sum", "--input", "x=f32[128,384]",
            "-o", str(tmp_path / "k.klr.json")]
    monkeypatch.setenv("TILECC_MAX_TRACE_STEPS", "8")
    assert "limit of 8;" in fail(argv, capsys)
    assert main([*argv, "--max-trace-steps", "9"]) == 0
    monkeypatch.setenv("TILECC_MAX_TRACE_STEPS", "0")
    assert "TILECC_MAX_TRACE_STEPS='0': expected a positive integer" in fail(argv, capsys)


@pytest.mark.parametrize("argv, expected", [
    (["examples/hlo/psum_max.hlo", "--max-trace-steps", "5"],
     "error: --max-trace-steps applies to kernels (kernel.py:fn); an HLO run is bounded by "
     "--max-steps\n"),
    ([f"{PREFIX_SUM}:prefix_sum", "--max-steps", "5"],
     "error: --max-steps applies to HLO modules; a kernel's tracing is bounded by "
     "--max-trace-steps\n"),
])
def test_each_bound_belongs_to_its_kind_of_run(argv, expected, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    assert fail(["run", *argv, "--out", str(tmp_path / "o")], capsys) == expected


def test_raised_sets_a_bound_for_one_command_only(monkeypatch):
    monkeypatch.delenv("TILECC_MAX_TRACE_STEPS", raising=False)
    with raised("trace-steps", 7):
        assert limit("trace-steps") == 7
        with raised("trace-steps", None):
            assert limit("trace-steps") == 7
    assert limit("trace-steps") == LIMITS["trace-steps"].default


# --- integer powers in kernel code ---------------------------------------------------------

@pytest.mark.parametrize("command", ["trace", "run"])
def test_an_integer_power_of_astronomic_size_is_refused_before_it_runs(command, tmp_path,
                                                                        capsys):
    kernel = prefix_sum(tmp_path, "10**120**120**12")
    out = ["-o", str(tmp_path / "k.klr.json")] if command == "trace" else \
        ["--out", str(tmp_path / "o")]
    err = fail([command, f"{kernel}:prefix_sum", "--input", f"x={tmp_path / 'x.npy'}", *out],
               capsys)
    assert err == (f"{kernel}:27:38: error: this ** makes an integer of about 6.16e+25 bits, "
                   "more than the limit of 1048576 bits of an integer a kernel computes with "
                   "**; raise it with TILECC_MAX_INT_BITS=N\n"
                   "    for c in nl.sequential_range(10**120**120**12):\n"
                   "                                     ^\n")


@pytest.mark.parametrize("base, exponent, expected", [
    (2, 10, 1024), (-3, 3, -27), (1, 10**30, 1), (-1, 10**30 + 1, -1), (0, 10**30, 0),
    (2, -2, 0.25), (2.0, 10, 1024.0), (10, 300, 10**300), (True, 5, 1),
])
def test_guarded_pow_is_pow_within_the_bound(base, exponent, expected):
    assert guarded_pow(base, exponent) == expected
    assert type(guarded_pow(base, exponent)) is type(base ** exponent)


def test_guarded_pow_keeps_operator_overloads():
    arr = np.arange(4, dtype=np.int64)
    assert guarded_pow(arr, 2).tolist() == [0, 1, 4, 9]
    assert guarded_pow(2, arr).tolist() == [1, 2, 4, 8]
    assert guarded_pow(np.int64(3), 2) == 9


@pytest.mark.parametrize("exponent", [10**6, 10**400])
def test_guarded_pow_refuses_beyond_the_bound(exponent, monkeypatch):
    from tilecc.nki.errors import KernelError
    with pytest.raises(KernelError, match="raise it with TILECC_MAX_INT_BITS=N"):
        guarded_pow(3, exponent)
    monkeypatch.setenv("TILECC_MAX_INT_BITS", str(2 * 10**6))
    if exponent == 10**6:
        assert guarded_pow(3, exponent).bit_length() == 1584963


def test_every_power_in_a_kernel_file_is_guarded(monkeypatch):
    from tilecc.nki.kernel_source import GUARD
    calls = []
    scope = {GUARD: lambda a, b: calls.append((a, b)) or a ** b}
    code = compile_kernel(b"x = 2 ** 3\ny = 3\ny **= 2\nz = [i ** 2 for i in (1, 2)]\n", "k.py")
    exec(code, scope)
    assert (scope["x"], scope["y"], scope["z"]) == (8, 9, [1, 4])
    assert calls == [(2, 3), (3, 2), (1, 2), (2, 2)]


# --- kernel files: compile-time warnings, no .pyc --------------------------------------------

def test_a_syntax_warning_does_not_run_the_error_over_three_lines(tmp_path, capsys,
                                                                  monkeypatch):
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    monkeypatch.setattr("sys.dont_write_bytecode", False)
    text = (REPO / "examples" / "kernels" / "softmax_row.py").read_text()
    kernel = tmp_path / "k.py"
    # `None(...)` is a SyntaxWarning at compile time; `nl.ndarr` fails when the kernel runs
    kernel.write_text(text.replace("    return out\n", "    y = nl.ndarr\n    None(dst=out)\n", 1))
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        err = fail(["run", f"{kernel}:softmax_row", "--out", str(tmp_path / "o")], capsys)
    assert not shown and "SyntaxWarning" not in err
    assert "error: the kernel raised AttributeError: module 'tilecc.nki.language' has no " \
           "attribute 'ndarr'" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.py"]   # no __pycache__


# --- BIR sizes -----------------------------------------------------------------------------

def bir_with(tmp_path: Path, edit) -> tuple[str, str]:
    doc = json.loads(BIR.read_text())
    edit(doc)
    path = tmp_path / "p.bir.json"
    path.write_text(json.dumps(doc))
    np.save(tmp_path / "a.npy", np.zeros((128, 64), np.float32))
    return str(path), f"a={tmp_path / 'a.npy'}"


def test_an_hbm_location_beyond_the_element_bound_names_its_field(tmp_path, capsys):
    def huge(doc):
        doc["memory_locations"][1]["bytes_per_partition"] = 2 ** 63
    program, given = bir_with(tmp_path, huge)
    err = fail(["sim", program, "--input", given, "--out", str(tmp_path / "o")], capsys)
    assert err == (f"{program}:memory_locations[1].bytes_per_partition: error: needs "
                   "295147905179352825856 elements of one value (all devices together), more "
                   "than the limit of 268435456; raise it with TILECC_MAX_ELEMENTS=N\n")


def test_an_accumulating_write_past_the_partitions_is_a_sim_error(tmp_path, capsys):
    """A cumulative instruction's accumulator lanes come from its output access, checked
    before the registers are set (campaign-4 sim #1873: a traceback before)."""
    def far(doc):
        inst = next(i for i in doc["instructions"] if i["opcode"] == "TensorScalarCache")
        inst["outs"][0]["offset"] = 2147483647
    program, given = bir_with(tmp_path, far)
    err = fail(["sim", program, "--input", given, "--out", str(tmp_path / "o")], capsys)
    assert err.startswith(f"error: {program}:instructions[") and len(err.splitlines()) == 1
    assert "access of 'y' at offset 2147483647 covers partitions 33554431..33554558, past " \
           "the 128 accumulator lanes" in err


@pytest.mark.parametrize("shape, expected", [
    ([1] * 33, "outputs[0].shape: error: 33 dimensions, more than the 32 a tensor may have"),
    ([2 ** 40, 2 ** 40], "outputs[0].shape: error: needs 1208925819614629174706176 elements"),
])
def test_a_kernel_tensor_beyond_the_bounds_names_its_field(shape, expected, tmp_path, capsys):
    def edit(doc):
        doc["outputs"][0]["shape"] = shape
    program, given = bir_with(tmp_path, edit)
    err = fail(["sim", program, "--input", given, "--out", str(tmp_path / "o")], capsys)
    assert err.startswith(f"{program}:{expected}")


# --- errors about an argument name its --input ------------------------------------------------

@pytest.mark.parametrize("command", ["trace", "run"])
@pytest.mark.parametrize("dtype", ["complex64", "uint64", "<U3"])
def test_a_kernel_argument_of_no_nki_dtype_names_its_input_file(command, dtype, tmp_path, capsys):
    np.save(tmp_path / "x.npy", np.zeros((128, 384), np.dtype(dtype)))
    out = ["-o", str(tmp_path / "k.klr.json")] if command == "trace" else \
        ["--out", str(tmp_path / "o")]
    err = fail([command, f"{PREFIX_SUM}:prefix_sum", "--input", f"x={tmp_path / 'x.npy'}", *out],
               capsys)
    assert err.startswith(f"error: --input x: {tmp_path / 'x.npy'}: {np.dtype(dtype)} is not an "
                          f"NKI dtype (expected one of float32, ")


def test_a_shape_of_no_nki_dtype_names_its_input(tmp_path, capsys):
    err = fail(["trace", f"{PREFIX_SUM}:prefix_sum", "--input", "x=c64[128,384]"], capsys)
    assert err.startswith("error: --input x: c64[128,384]: complex64 is not an NKI dtype")


def test_a_bool_array_runs_as_the_simulate_api_passes_it(tmp_path, capsys):
    x = np.zeros((128, 384), bool)
    x[:, ::3] = True
    np.save(tmp_path / "x.npy", x)
    assert main(["run", f"{PREFIX_SUM}:prefix_sum", "--input", f"x={tmp_path / 'x.npy'}",
                 "--out", str(tmp_path / "o")]) == 0
    out = np.load(tmp_path / "o" / "out.npy")
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out[0, :7], [1, 1, 1, 2, 2, 2, 3])


@pytest.mark.parametrize("array, held", [
    (np.zeros((128, 64), np.float64), "float64[128, 64]"),
    (np.zeros((128, 65), np.float32), "float32[128, 65]"),
])
def test_a_sim_input_of_another_dtype_or_shape_names_its_file(array, held, tmp_path, capsys):
    np.save(tmp_path / "a.npy", array)
    err = fail(["sim", str(BIR), "--input", f"a={tmp_path / 'a.npy'}", "--out",
                str(tmp_path / "o")], capsys)
    assert err == (f"error: --input a: {tmp_path / 'a.npy'} holds {held}; the kernel's input a "
                   "is float32[128, 64]\n")


def test_hlo_opt_refuses_a_verify_count_too_big_before_the_passes_run(tmp_path, capsys):
    hlo = REPO / "examples" / "hlo" / "psum_max.hlo"
    err = fail(["hlo-opt", str(hlo), "--passes=decompose-int-all-reduce",
                "--verify=99999999999999999999", "-o", str(tmp_path / "o.hlo")], capsys)
    assert err == (f"error: {hlo}: --verify=99999999999999999999: module jit_psum_max on replicas "
                   "x partitions = 399999999999999999996 devices: needs 399999999999999999996 "
                   "elements of one value (all devices together), more than the limit of "
                   "268435456; raise it with TILECC_MAX_ELEMENTS=N\n")


def test_a_fault_of_an_hlo_run_names_the_module_file(tmp_path, capsys):
    hlo = tmp_path / "t.hlo"
    hlo.write_text("HloModule m\nENTRY e {\n  p = s32[2] parameter(0)\n"
                   '  ROOT t = s32[2] custom-call(p), custom_call_target="my_kernel"\n}\n')
    err = fail(["run", str(hlo), "--out", str(tmp_path / "o")], capsys)
    assert err == (f"error: {hlo}: t: opcode custom-call is not supported by the interpreter "
                   "(custom_call_target=my_kernel)\n")


def test_a_kernel_nested_too_deeply_to_compile_names_its_file(tmp_path, capsys):
    kernel = tmp_path / "k.py"
    kernel.write_text("X = " + "+".join(["1"] * 20_000) + "\n\ndef f(a):\n    return a\n")
    err = fail(["trace", f"{kernel}:f", "--input", "a=f32[128,4]"], capsys)
    assert err == f"error: {kernel}: nested too deeply for Python to compile (RecursionError)\n"


def test_a_kernel_nested_deeper_than_a_recursive_visitor_allows_still_compiles():
    # 800 unary minus signs: CPython compiles them; ast.NodeTransformer recurses too deep
    code = compile_kernel(("X = " + "-" * 800 + "2 ** 3\n").encode(), "k.py")
    from tilecc.nki.kernel_source import GUARD
    scope = {GUARD: guarded_pow}
    exec(code, scope)
    assert scope["X"] == 8


def test_a_bad_dimension_of_a_shape_spanning_lines_is_quoted_on_one_line():
    # fuzzing campaign 4, run-hlo #4365 / #4623: the shape's newline ran the message over
    from tilecc.errors import ParseError
    from tilecc.hlo.parser import parse_module
    with pytest.raises(ParseError) as info:
        parse_module("HloModule m\nENTRY e {\n  ROOT c = f32[3,\n]{1,0} constant({1,2,3})\n}\n")
    assert "\n" not in info.value.message
    assert "bad dimension '' in shape f32[3,\\n]{1,0}" in info.value.message
