"""Every command on bad and awkward input: one located line, exit code 1, no traceback, no
partial output, the input untouched."""

from __future__ import annotations

import io
import random
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from tilecc.cli import main
from tilecc.errors import SOURCE_WINDOW, ParseError

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
HLO = EXAMPLES / "hlo" / "psum_max.hlo"
KLR = EXAMPLES / "klr" / "softmax_row.klr.json"
HOST = EXAMPLES / "host" / "allreduce_mesh.py"
KERNEL = EXAMPLES / "kernels" / "softmax_row.py"
PREVIOUS = b"previous output\n"


def fail(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run the CLI expecting a user error; its stderr (checked to be short and traceback-free)."""
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert 1 <= len(err.splitlines()) <= 3, err   # the message, maybe a source line and caret
    assert len(err) < 1000, err[:300]
    return err


def usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1, err
    return err


def copy(src: Path, tmp_path: Path, name: str | None = None) -> Path:
    return Path(shutil.copy(src, tmp_path / (name or src.name)))


def bir_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    out = tmp_path / "k.bir.json"
    assert main(["codegen", str(KLR), "-o", str(out)]) == 0
    capsys.readouterr()
    return out


# --- files that are not what the command reads ---------------------------------------------

@pytest.mark.parametrize("command", ["hlo-opt", "codegen", "host-opt", "sim", "run"])
def test_invalid_utf8_is_located_at_the_bad_byte(command, tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"line one\nab\xffcd\n")
    extra = {"hlo-opt": ["--passes=decompose-int-all-reduce"], "sim": ["--out", str(tmp_path / "o")],
             "run": ["--out", str(tmp_path / "o")]}.get(command, [])
    err = fail([command, str(bad), *extra], capsys)
    assert err.startswith(f"{bad}:2:3: error: not UTF-8 text") and "byte 0xff" in err


def test_invalid_utf8_on_stdin_is_an_error_not_a_surrogate(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"HloModule \xff\n")))
    err = fail(["hlo-opt", "-", "--passes=decompose-int-all-reduce"], capsys)
    assert err.startswith("<stdin>:1:11: error: not UTF-8 text: byte 0xff")


@pytest.mark.parametrize("command", ["codegen", "sim"])
def test_stdin_is_named_stdin(command, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"{\n  oops\n}\n")))
    extra = ["--out", str(tmp_path / "o")] if command == "sim" else []
    err = fail([command, "-", *extra], capsys)
    assert err.startswith("<stdin>:2:3: error: invalid JSON")


def test_host_opt_locates_a_bad_byte_after_a_byte_order_mark(tmp_path, capsys):
    bad = tmp_path / "bom.py"
    bad.write_bytes(b"\xef\xbb\xbfx = 1\ny = '\xff'\n")
    assert fail(["host-opt", str(bad)], capsys).startswith(f"{bad}:2:6: error: not UTF-8 text")


def test_host_opt_locates_a_bad_byte_in_the_first_lines(tmp_path, capsys):
    bad = tmp_path / "p.py"
    bad.write_bytes(b"x = '\xe9'\n")
    err = fail(["host-opt", str(bad)], capsys)
    assert err.startswith(f"{bad}:1:6: error: not UTF-8 text, and no `# -*- coding")


def test_a_huge_line_is_shown_around_the_column_only(tmp_path, capsys):
    huge = tmp_path / "min.klr.json"
    huge.write_text('{"a": [' + "1," * 500_000 + "}")   # one 1 MB line, bad at its end
    err = fail(["codegen", str(huge)], capsys)
    message, shown, caret = err.splitlines()
    assert message.startswith(f"{huge}:1:1000008: error: invalid JSON")
    assert shown.startswith("...") and shown.endswith("1,}") and len(shown) == SOURCE_WINDOW + 3
    assert shown[len(caret) - 1] == "}"


@pytest.mark.parametrize("line, col, shown, caret", [
    ("short line", 3, "short line", 2),
    ("a" * 100 + "X" + "b" * 400, 101, "..." + "a" * 80 + "X" + "b" * 79 + "...", 83),
    ("X" + "b" * 400, 1, "X" + "b" * (SOURCE_WINDOW - 1) + "...", 0),
    ("a" * 400 + "X", 401, "..." + "a" * (SOURCE_WINDOW - 1) + "X", SOURCE_WINDOW + 2),
    ("a" * 400, 401, "..." + "a" * SOURCE_WINDOW, SOURCE_WINDOW + 3),   # past the end
])
def test_render_cuts_long_lines_keeping_the_caret_on_the_column(line, col, shown, caret):
    text = ParseError("f", 1, col, "m", source_line=line + "\n").render()
    assert text.splitlines()[1:] == [shown, " " * caret + "^"]


@pytest.mark.parametrize("command, wrong", [
    ("hlo-opt", KLR), ("codegen", HLO), ("codegen", HOST), ("sim", KLR), ("run", KLR),
])
def test_a_file_of_another_format_is_a_located_error(command, wrong, tmp_path, capsys):
    extra = {"hlo-opt": ["--passes=decompose-int-all-reduce"], "sim": ["--out", str(tmp_path / "o")],
             "run": ["--out", str(tmp_path / "o")]}.get(command, [])
    err = fail([command, str(wrong), *extra], capsys)
    assert err.startswith(f"{wrong}:") and "error:" in err.splitlines()[0]
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("kind", ["hlo", "klr", "bir", "host"])
def test_truncated_files_fail_located_and_leave_the_output_alone(kind, tmp_path, capsys):
    source = {"hlo": HLO, "klr": KLR, "host": HOST}.get(kind) or bir_file(tmp_path, capsys)
    data = source.read_bytes()
    out = tmp_path / "out.txt"
    command = {"hlo": ["hlo-opt", "--passes=decompose-int-all-reduce"], "klr": ["codegen"],
               "bir": ["sim", "--out", str(tmp_path / "o")], "host": ["host-opt"]}[kind]
    for cut in sorted(random.Random(7).sample(range(1, len(data) - 2), 10)):
        cut_file = tmp_path / f"cut{cut}{source.suffix}"
        cut_file.write_bytes(data[:cut])
        out.write_bytes(PREVIOUS)
        result = main([command[0], str(cut_file), *command[1:], "-o" if kind != "bir" else "--out",
                       str(out) if kind != "bir" else str(tmp_path / "o")])
        err = capsys.readouterr().err
        if kind == "host" and result == 0:   # a cut between statements is a valid program
            continue
        assert result == 1 and "Traceback" not in err
        assert err.startswith(f"{cut_file}:") and ": error: " in err.splitlines()[0], err
        assert cut_file.read_bytes() == data[:cut] and out.read_bytes() == PREVIOUS
        assert not (tmp_path / "o").exists()


# --- outputs -------------------------------------------------------------------------------

@pytest.mark.parametrize("command", ["hlo-opt", "codegen", "host-opt"])
def test_an_output_that_is_a_directory_is_an_error(command, tmp_path, capsys):
    source = {"hlo-opt": HLO, "codegen": KLR, "host-opt": HOST}[command]
    extra = ["--passes=decompose-int-all-reduce"] if command == "hlo-opt" else []
    err = fail([command, str(source), *extra, "-o", str(tmp_path)], capsys)
    # (hlo-opt reports each pass on stderr first)
    assert err.splitlines()[-1] == f"error: {tmp_path}: cannot write: is a directory (expected a file name)"
    assert list(tmp_path.iterdir()) == []


def test_an_output_in_a_missing_directory_is_an_error(tmp_path, capsys):
    err = fail(["codegen", str(KLR), "-o", str(tmp_path / "no" / "o.json")], capsys)
    assert err == f"error: {tmp_path / 'no' / 'o.json'}: cannot write: No such file or directory\n"


@pytest.mark.parametrize("command", ["run", "sim"])
def test_an_output_folder_that_is_a_file_is_an_error(command, tmp_path, capsys):
    out = tmp_path / "out"
    out.write_bytes(PREVIOUS)
    source = str(HLO) if command == "run" else str(bir_file(tmp_path, capsys))
    np.save(tmp_path / "x.npy", np.zeros((128, 512), np.float32))
    extra = ["--input", f"x={tmp_path / 'x.npy'}"] if command == "sim" else []
    err = fail([command, source, *extra, "--out", str(out)], capsys)
    assert err == f"error: {out}: is a file (expected a folder for the .npy outputs)\n"
    assert out.read_bytes() == PREVIOUS


def test_an_existing_output_is_replaced_only_on_success(tmp_path, capsys):
    out = tmp_path / "o.bir.json"
    out.write_bytes(PREVIOUS)
    bad = tmp_path / "bad.klr.json"
    bad.write_text('{"name": 3}')
    fail(["codegen", str(bad), "-o", str(out)], capsys)
    assert out.read_bytes() == PREVIOUS and sorted(tmp_path.iterdir()) == [bad, out]
    assert main(["codegen", str(KLR), "-o", str(out)]) == 0
    assert out.read_bytes().startswith(b"{")


def test_codegen_refuses_to_write_bir_over_its_klr_input(tmp_path, capsys):
    klr = copy(KLR, tmp_path)
    err = fail(["codegen", str(klr), "-o", str(klr)], capsys)
    assert err.startswith(f"error: {klr}: is the input KLR kernel; writing the output there")
    assert klr.read_bytes() == KLR.read_bytes()


def test_trace_refuses_to_write_klr_over_the_kernel_file(tmp_path, capsys):
    kernel = copy(KERNEL, tmp_path)
    np.save(tmp_path / "a.npy", np.zeros((128, 64), np.float32))
    err = fail(["trace", f"{kernel}:softmax_row", "--input", f"a={tmp_path / 'a.npy'}",
                "-o", str(tmp_path / "." / kernel.name)], capsys)
    assert "is the input kernel file" in err and kernel.read_bytes() == KERNEL.read_bytes()


def test_hlo_opt_may_rewrite_its_input_in_place(tmp_path, capsys):
    hlo = copy(HLO, tmp_path)
    assert main(["hlo-opt", str(hlo), "--passes=decompose-int-all-reduce", "-o", str(hlo)]) == 0
    assert hlo.read_bytes() != HLO.read_bytes() and b"HloModule" in hlo.read_bytes()


# --- command line flags --------------------------------------------------------------------

@pytest.mark.parametrize("argv, expected", [
    (["run", str(HLO), "--seed=x", "--out", "o"],
     "tilecc run: error: argument --seed: expected a non-negative integer seed, got 'x'"),
    (["hlo-opt", str(HLO), "--passes=x", "--verify", "--seed=-1"],
     "argument --seed: expected a non-negative integer seed, got -1"),   # numpy's rngs need >= 0
    (["run", str(HLO), "--replicas=x", "--out", "o"], "argument --replicas: invalid int value: 'x'"),
    (["run", str(HLO)], "the following arguments are required: --out"),
    (["hlo-opt", str(HLO), "--passes=x", "--verify=0"], "argument --verify: replica count must be >= 1, got 0"),
    (["hlo-opt", str(HLO), "--passes=x", "--verify=-1"], "argument --verify: replica count must be >= 1, got -1"),
    (["hlo-opt", str(HLO), "--passes=x", "--oracle=tpu"], "argument --oracle: invalid choice: 'tpu'"),
    (["codegen", str(KLR), "--bogus"], "tilecc: error: unrecognized arguments: --bogus"),
    (["nosuchcommand"], "argument COMMAND: invalid choice: 'nosuchcommand'"),
    (["demo", "--stage", "zz"], "argument --stage: invalid choice: 'zz'"),
])
def test_bad_flags_are_one_line_and_exit_code_1(argv, expected, capsys):
    # exit code 2 is reserved: hlo-opt --verify's "mismatch"
    assert expected in usage_error(argv, capsys)


@pytest.mark.parametrize("argv, expected", [
    (["run", str(HLO), "--replicas=0", "--out", "o"], "error: --replicas must be at least 1, got 0"),
    (["hlo-opt", str(HLO), "--passes=nonexistent"], "error: unknown pass 'nonexistent'"),
    (["host-opt", str(HOST), "--passes=nonexistent"], "error: unknown host pass `nonexistent`"),
])
def test_bad_flag_values_checked_by_the_commands(argv, expected, capsys):
    assert fail(argv, capsys).startswith(expected)


@pytest.mark.parametrize("examples", ["missing", "file"])
def test_demo_needs_an_examples_folder(examples, tmp_path, capsys):
    path = tmp_path / "x"
    if examples == "file":
        path.write_text("")
    err = fail(["demo", "--examples", str(path)], capsys)
    assert err.startswith(f"error: {path}: not a folder (expected the examples folder")
    assert capsys.readouterr().out == ""


# --- kernels and .npy inputs ---------------------------------------------------------------

@pytest.fixture()
def npys(tmp_path: Path) -> Path:
    np.save(tmp_path / "a.npy", np.zeros((128, 64), np.float32))
    np.save(tmp_path / "obj.npy", np.array([{"x": 1}, None], dtype=object), allow_pickle=True)
    (tmp_path / "text.npy").write_text("1 2 3\n")
    return tmp_path


@pytest.mark.parametrize("command", ["trace", "run"])
@pytest.mark.parametrize("file, expected", [
    ("text.npy", "text.npy is not a .npy file (no NUMPY header)"),
    ("obj.npy", "obj.npy holds Python objects (dtype object); tilecc reads numeric arrays only"),
    ("none.npy", "cannot read {dir}/none.npy: No such file or directory"),
])
def test_kernel_inputs_that_are_not_npy_arrays(command, file, expected, npys, capsys):
    out = ["-o", str(npys / "t.json")] if command == "trace" else ["--out", str(npys / "o")]
    err = fail([command, f"{KERNEL}:softmax_row", "--input", f"a={npys / file}", *out], capsys)
    assert err.startswith("error: --input a: ") and expected.format(dir=npys) in err
    assert not (npys / "t.json").exists() and not (npys / "o").exists()


@pytest.mark.parametrize("command", ["trace", "run"])
def test_a_npy_header_with_a_negative_dimension_is_refused(command, npys, capsys):
    """campaign-8 trace #9923: numpy's header reader accepts `(100, -1)` and its memory map
    then raised OverflowError."""
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (100, -1), }".ljust(117) + "\n"
    (npys / "neg.npy").write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little")
                                   + header.encode() + b"\0" * 16)
    out = ["-o", str(npys / "t.json")] if command == "trace" else ["--out", str(npys / "o")]
    err = fail([command, f"{KERNEL}:softmax_row", "--input", f"a={npys / 'neg.npy'}", *out], capsys)
    assert err.startswith(f"error: {npys / 'neg.npy'}: --input a: the header declares the "
                          f"shape [100, -1]; a dimension is never negative")
    assert not (npys / "t.json").exists() and not (npys / "o").exists()


def test_kernel_file_not_utf8_is_located(npys, capsys):
    kernel = npys / "k.py"
    kernel.write_bytes(b"import numpy\n\ndef f(a):\n    return '\xff'\n")   # past the first 2 lines
    err = fail(["trace", f"{kernel}:f", "--input", f"a={npys / 'a.npy'}"], capsys)
    assert err.startswith(f"{kernel}:4:13: error: not UTF-8 text: byte 0xff")


def test_a_kernel_file_python_cannot_compile_is_blamed_on_the_file(npys, capsys):
    kernel = npys / "deep.py"
    kernel.write_text("x = " + "(" * 5000 + ")" * 5000 + "\n")   # too deep for the compiler
    err = fail(["trace", f"{kernel}:f", "--input", f"a={npys / 'a.npy'}"], capsys)
    assert err.startswith(f"{kernel}:") and "frozen" not in err


@pytest.mark.parametrize("source, expected", [
    ("def f(a):\n    return a +\n", "{k}:2:15: error: syntax error"),
    ("def f(a):\n    n = a.shape[0]\n    raise ValueError('boom')\n",
     "{k}:3:5: error: the kernel raised ValueError: boom"),
    ("raise RuntimeError('at import')\n", "{k}:1:1: error: importing {k} failed RuntimeError"),
    ("def g(a):\n    pass\n", "error: {k}: no function 'f'"),
    # a fault inside numpy is at the kernel's line, numpy's message of several lines cut to one
    ("import numpy as np\ndef f(a):\n    return np.int(a)\n",
     "{k}:3:12: error: the kernel raised AttributeError: module 'numpy' has no attribute 'int'.\n"),
])
def test_kernel_failures_are_located(source, expected, npys, capsys):
    kernel = npys / "k.py"
    kernel.write_text(source)
    err = fail(["run", f"{kernel}:f", "--input", f"a={npys / 'a.npy'}", "--out", str(npys / "o")],
               capsys)
    assert err.startswith(expected.format(k=kernel)), err
    assert not (npys / "o").exists()


@pytest.mark.parametrize("grid", ["[0]", "[x]", "[2,", "[]"])
def test_bad_launch_grids(grid, npys, capsys):
    err = fail(["trace", f"{KERNEL}:softmax_row{grid}", "--input", f"a={npys / 'a.npy'}"], capsys)
    assert "expected FILE.py:FUNCTION or FILE.py:FUNCTION[GX,GY]" in err


@pytest.mark.parametrize("argv, expected", [
    # 1e15 devices: 16 PB, refused before anything is allocated
    (["run", str(HLO), "--replicas=1000000000000000"],
     f"error: {HLO}: module jit_psum_max on replicas x partitions = 4000000000000000 devices: needs "
     "4000000000000000 elements of one value (all devices together), more than the limit of "
     "268435456; raise it with TILECC_MAX_ELEMENTS=N"),
    (["run", f"{KERNEL}:softmax_row[99999999999]", "--input"],   # a launch grid of 1e11 programs
     f"error: {KERNEL}:softmax_row[99999999999]: needs 99999999999 programs in an SPMD launch "
     "grid, more than the limit of 4096; raise it with TILECC_MAX_GRID=N"),
])
def test_sizes_beyond_the_limits_are_one_line(argv, expected, npys, capsys):
    if argv[-1] == "--input":
        argv = [*argv, f"a={npys / 'a.npy'}"]
    assert fail([*argv, "--out", str(npys / "o")], capsys) == expected + "\n"
    assert not (npys / "o").exists()


def test_more_dimensions_than_numpy_holds_is_one_line(tmp_path, capsys):
    hlo = tmp_path / "m.hlo"
    hlo.write_text("HloModule m\nENTRY e {\n  ROOT p = f32[" + ",".join(["1"] * 64) +
                   "] parameter(0)\n}\n")
    err = fail(["run", str(hlo), "--out", str(tmp_path / "o")], capsys)
    assert err == (f"error: {hlo}: p: f32 array of 64 dimensions; numpy arrays (with the device axis) "
                   "have at most 64\n")


def _pairs(doc: object):
    """Every [step, num] pair of every access pattern in a BIR JSON document."""
    if isinstance(doc, dict):
        for key, value in doc.items():
            if key == "ap" and isinstance(value, list):
                yield from value
            else:
                yield from _pairs(value)
    elif isinstance(doc, list):
        for value in doc:
            yield from _pairs(value)


@pytest.mark.parametrize("num, huge", [(1, -2**63), (1, 2**63 - 1), (2, 2**62)])
def test_sim_access_steps_beyond_numpy_strides(num, huge, tmp_path, capsys):
    import json
    doc = json.loads(bir_file(tmp_path, capsys).read_text())
    pair = next(p for p in _pairs(doc) if (p[1] == 1) == (num == 1))
    pair[0] = huge
    program = tmp_path / "p.bir.json"
    program.write_text(json.dumps(doc))
    np.save(tmp_path / "x.npy", np.random.default_rng(3).standard_normal((128, 512), np.float32))
    argv = ["sim", str(program), "--input", f"x={tmp_path / 'x.npy'}", "--out"]
    if num == 1:   # a one-element pair never moves: its step does not matter
        assert main([*argv, str(tmp_path / "a")]) == 0
        assert main(["sim", str(tmp_path / "k.bir.json"), *argv[2:], str(tmp_path / "b")]) == 0
        assert np.array_equal(np.load(tmp_path / "a" / "out.npy"), np.load(tmp_path / "b" / "out.npy"))
    else:
        assert "reaches" in fail([*argv, str(tmp_path / "a")], capsys)


@pytest.mark.parametrize("name", ["../escaped", "a/b", ""])
def test_sim_output_names_cannot_leave_the_out_folder(name, tmp_path, capsys):
    program = tmp_path / "p.bir.json"
    program.write_text(bir_file(tmp_path, capsys).read_text().replace('"out"', f'"{name}"'))
    np.save(tmp_path / "x.npy", np.zeros((128, 512), np.float32))
    (tmp_path / "od").mkdir()
    err = fail(["sim", str(program), "--input", f"x={tmp_path / 'x.npy'}", "--out",
                str(tmp_path / "od")], capsys)
    assert err == (f"error: output {name!r}: not usable as a file name (it is written as "
                   f"{tmp_path / 'od'}/<name>.npy)\n")
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["k.bir.json", "od", "p.bir.json", "x.npy"]


def test_a_nul_byte_in_a_kernel_file_is_located(npys, capsys):
    kernel = npys / "k.py"
    kernel.write_bytes(b"def f(a):\n    x = 1\0\n")
    err = fail(["trace", f"{kernel}:f", "--input", f"a={npys / 'a.npy'}"], capsys)
    assert err == f"{kernel}:2:10: error: a NUL byte: not Python source\n"


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_crlf_and_cr_line_ends_read_as_lf(newline, tmp_path, capsys):
    hlo = tmp_path / "m.hlo"
    hlo.write_bytes(HLO.read_bytes().replace(b"\n", newline.encode()))
    for path in (HLO, hlo):
        assert main(["hlo-opt", str(path), "--passes=decompose-int-all-reduce",
                     "-o", str(tmp_path / f"{path.parent.name}.out")]) == 0
    assert (tmp_path / f"{tmp_path.name}.out").read_bytes() == (tmp_path / "hlo.out").read_bytes()
