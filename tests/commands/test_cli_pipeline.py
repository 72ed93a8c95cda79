"""trace / codegen / sim / run as a user runs them (subprocesses): the shared --input reader,
in/out tensors, run's flags (--partitions, --save-inputs, --check, --keep-temps), text
listings, output summaries and files of another stage named."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
SOFTMAX = REPO / "examples" / "kernels" / "softmax_row.py"
K01 = REPO / "tests" / "fixtures" / "klr0012" / "k01_ts_basic_f32.klr.json"
PARTIAL = """\
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


def half_copy(a, out):
    x = nl.ndarray((64, 32), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a[0:64, :])
    nisa.tensor_scalar(dst=x, data=x, op0=nl.add, operand0=1.0)
    nisa.dma_copy(dst=out[0:64, :], src=x)
"""
SPMD = """HloModule spmd, replica_count=1, num_partitions=2

add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}

ENTRY main {
  p = s32[3] parameter(0)
  ROOT r = s32[3] all-reduce(p), channel_id=1, replica_groups={}, to_apply=add
}
"""


def tilecc(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tilecc", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "partial.py").write_text(PARTIAL)
    np.save(tmp_path / "a.npy", np.arange(128 * 32, dtype=np.float32).reshape(128, 32))
    np.save(tmp_path / "o.npy", np.full((128, 32), -5.0, np.float32))
    return tmp_path


def test_an_in_out_tensor_takes_initial_contents_and_keeps_unwritten_elements(work: Path) -> None:
    a = np.load(work / "a.npy")
    want = np.full((128, 32), -5.0, np.float32)
    want[:64] = a[:64] + 1
    traced = tilecc("trace", "partial.py:half_copy", "--input", "a=f32[128,32]",
                    "--input", "out=float32[128,32]", "-o", "p.klr.json", cwd=work)
    assert traced.returncode == 0, traced.stderr
    assert tilecc("codegen", "p.klr.json", "-o", "p.bir.json", cwd=work).returncode == 0
    sim = tilecc("sim", "p.bir.json", "--input", "a=a.npy", "--input", "out=o.npy", "--out", "r",
                 cwd=work)
    assert sim.returncode == 0, sim.stderr
    np.testing.assert_array_equal(np.load(work / "r" / "out.npy"), want)
    assert sim.stdout == "r/out.npy: float32[128, 32] min -5 max 2048 mean 509.75\n"
    run = tilecc("run", "partial.py:half_copy", "--input", "a=a.npy", "--input", "out=o.npy",
                 "--out", "r2", cwd=work)
    assert run.returncode == 0, run.stderr
    np.testing.assert_array_equal(np.load(work / "r2" / "out.npy"), want)


def test_the_klr_tools_out_argument_takes_an_input(work: Path) -> None:
    """k01 lists `out` among its inputs; it was refused with "no input of that name"."""
    assert tilecc("codegen", str(K01), "-o", "k.bir.json", cwd=work).returncode == 0
    np.save(work / "a5.npy", np.full((128, 512), 3.0, np.float32))
    np.save(work / "o5.npy", np.full((128, 512), np.nan, np.float32))
    sim = tilecc("sim", "k.bir.json", "--input", "a=a5.npy", "--input", "out=o5.npy", "--out", "r",
                 cwd=work)
    assert sim.returncode == 0, sim.stderr
    np.testing.assert_array_equal(np.load(work / "r" / "out.npy"), np.full((128, 512), 2.0))


@pytest.mark.parametrize("command", [
    ["sim", "k.bir.json", "--out", "r"],
    ["run", "partial.py:half_copy", "--out", "r"],
    ["trace", "partial.py:half_copy", "--input", "out=o.npy"],
])
def test_a_repeated_input_is_an_error_for_every_command(work: Path, command: list[str]) -> None:
    tilecc("codegen", str(K01), "-o", "k.bir.json", cwd=work)
    done = tilecc(*command, "--input", "a=a.npy", "--input", "a=o.npy", cwd=work)
    assert done.returncode == 1
    assert done.stderr == "error: --input a: given twice (give each input once)\n"


def test_a_repeated_hlo_parameter_by_name_and_number_is_an_error(work: Path) -> None:
    (work / "m.hlo").write_text(SPMD)
    np.save(work / "p.npy", np.zeros(3, np.int32))
    done = tilecc("run", "m.hlo", "--input", "p=p.npy", "--input", "p0=p.npy", "--out", "r",
                  cwd=work)
    assert done.returncode == 1
    assert done.stderr == "error: --input p0: the same input as --input p\n"


def test_run_partitions_and_save_inputs_give_the_same_run_back(work: Path) -> None:
    (work / "m.hlo").write_text(SPMD)
    done = tilecc("run", "m.hlo", "--partitions", "4", "--seed", "3", "--save-inputs", "in",
                  "--out", "r", cwd=work)
    assert done.returncode == 0, done.stderr
    p = np.load(work / "in" / "p.npy")
    assert p.shape == (4, 3)     # one slice per device: 1 replica x 4 partitions
    out = np.load(work / "r" / "out0.npy")
    # one group of all 4 devices: every device holds the sum (int32 wrap-around included)
    np.testing.assert_array_equal(out, np.broadcast_to(p.sum(axis=0, dtype=np.int32), (4, 3)))
    again = tilecc("run", "m.hlo", "--partitions", "4", "--input", "p=in/p.npy", "--out", "r2",
                   cwd=work)
    assert again.returncode == 0, again.stderr
    np.testing.assert_array_equal(np.load(work / "r2" / "out0.npy"), out)
    lines = done.stdout.splitlines()
    assert lines[0].startswith("in/p.npy: int32[4, 3] min ")
    assert lines[1].startswith("r/out0.npy: int32[4, 3] min ")


TUPLE_PARAM = """HloModule tuple_param

ENTRY e {
  t = (f32[2], (s32[3], token[])) parameter(0)
  a = f32[2] get-tuple-element(t), index=0
  i = (s32[3], token[]) get-tuple-element(t), index=1
  b = s32[3] get-tuple-element(i), index=0
  ROOT r = (f32[2], s32[3]) tuple(a, b)
}
"""


def test_run_saves_tuple_parameter_leaves_and_reads_them_back(work: Path) -> None:
    (work / "t.hlo").write_text(TUPLE_PARAM)
    done = tilecc("run", "t.hlo", "--seed", "7", "--save-inputs", "in", "--out", "r", cwd=work)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (work / "in").iterdir()) == ["t.0.npy", "t.1.0.npy"]  # no token
    a, b = np.load(work / "in" / "t.0.npy"), np.load(work / "in" / "t.1.0.npy")
    assert a.dtype == np.float32 and a.shape == (1, 2) and b.dtype == np.int32 and b.shape == (1, 3)
    np.testing.assert_array_equal(np.load(work / "r" / "out0.npy"), a)
    np.testing.assert_array_equal(np.load(work / "r" / "out1.npy"), b)
    np.save(work / "b.npy", np.array([-1, 2**31 - 1, -2**31], np.int32))
    again = tilecc("run", "t.hlo", "--input", "t.0=in/t.0.npy", "--input", "t.1.0=b.npy",
                   "--out", "r2", cwd=work)
    assert again.returncode == 0, again.stderr
    np.testing.assert_array_equal(np.load(work / "r2" / "out1.npy"), [[-1, 2**31 - 1, -2**31]])


@pytest.mark.parametrize("spec, message", [
    ("t=b.npy", "error: --input t: parameter t has shape (f32[2]{0}, (s32[3]{0}, token[])); "
                "give its array leaves (inputs: t.0, t.1.0)\n"),
    ("t.1.1=b.npy", "error: --input t.1.1: parameter t has shape (f32[2]{0}, (s32[3]{0}, "
                    "token[])); give its array leaves (inputs: t.0, t.1.0)\n"),
    ("t.1.0=b.npy", "error: --input: tuple parameter t is given in part; give every array "
                    "leaf (missing: t.0)\n"),
    ("t.0=b.npy", "error: --input t.0: dtype int32, but parameter t.0 (f32[2]{0}) needs "
                  "float32\n"),
])
def test_run_refuses_a_tuple_parameter_input_that_does_not_fit(work: Path, spec: str,
                                                                message: str) -> None:
    (work / "t.hlo").write_text(TUPLE_PARAM)
    np.save(work / "b.npy", np.zeros(3, np.int32))
    done = tilecc("run", "t.hlo", "--input", spec, "--out", "r", cwd=work)
    assert (done.returncode, done.stderr) == (1, message)
    assert not (work / "r").exists()


def test_run_out_dash_is_refused_and_creates_nothing(work: Path) -> None:
    (work / "m.hlo").write_text(SPMD)
    done = tilecc("run", "m.hlo", "--out", "-", cwd=work)
    assert done.returncode == 1
    assert done.stderr.startswith("error: --out -: expected a folder for the .npy files")
    assert not (work / "-").exists()


def test_run_kernel_file_without_function_says_so(work: Path) -> None:
    done = tilecc("run", "partial.py", "--out", "r", cwd=work)
    assert done.returncode == 1
    assert done.stderr == ("error: partial.py: a Python file; name the kernel to run: "
                           "partial.py:FUNCTION (functions: half_copy)\n")


def test_run_check_compares_with_the_reference_and_keeps_temps(work: Path) -> None:
    done = tilecc("run", f"{SOFTMAX}:softmax_row", "--check", "--keep-temps", "tmp",
                  "--save-inputs", "in", "--out", "r", cwd=work)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "check out: equal within rtol 1e-05, atol 1e-06"
    assert np.load(work / "in" / "a.npy").shape == (256, 96)   # from make_inputs
    klr = json.loads((work / "tmp" / "softmax_row.klr.json").read_text())
    bir = json.loads((work / "tmp" / "softmax_row.bir.json").read_text())
    assert klr["name"].endswith("softmax_row") and bir["instructions"]
    # the same kernel on other data than the reference's assumptions still matches it
    np.save(work / "x.npy", np.linspace(-50, 50, 256 * 96, dtype=np.float32).reshape(256, 96))
    other = tilecc("run", f"{SOFTMAX}:softmax_row", "--check", "--input", "a=x.npy",
                   "--out", "r", cwd=work)
    assert other.returncode == 0 and "check out: equal" in other.stdout


def test_run_check_reports_a_mismatch_with_exit_1(work: Path) -> None:
    kernel = SOFTMAX.read_text().replace("return (e / e.sum(axis=1, keepdims=True))",
                                         "return (2 * e / e.sum(axis=1, keepdims=True))")
    (work / "wrong_ref.py").write_text(kernel)
    done = tilecc("run", "wrong_ref.py:softmax_row", "--check", "--out", "r", cwd=work)
    assert done.returncode == 1
    assert done.stdout.splitlines()[-1].startswith("check out: MISMATCH at [0, 0]: ")
    no_ref = tilecc("run", "partial.py:half_copy", "--check", "--input", "a=a.npy",
                    "--input", "out=o.npy", "--out", "r", cwd=work)
    assert no_ref.returncode == 1 and "has no reference() function" in no_ref.stderr


def test_text_listings_of_klr_and_bir(work: Path) -> None:
    klr = tilecc("trace", "partial.py:half_copy", "--input", "a=f32[128,32]", "--input",
                 "out=f32[128,32]", "--format=text", cwd=work)
    assert klr.returncode == 0, klr.stderr
    lines = klr.stdout.splitlines()
    assert lines[:4] == ["kernel partial.half_copy", "  input  a: float32[128, 32] hbm",
                         "  input  out: float32[128, 32] hbm", "  output out: float32[128, 32] hbm"]
    assert [line.split()[1] for line in lines[4:]] == ["ncDmaCopy", "tensorScalar", "ncDmaCopy"]
    bir = tilecc("codegen", str(K01), "--format=text", cwd=work)
    assert bir.returncode == 0, bir.stderr
    first, *rest = bir.stdout.splitlines()
    assert first == "program k01_ts_basic_f32.kernel"
    assert any("TensorScalar" in line and "op0=subtract" in line for line in rest)


@pytest.mark.parametrize("args, message", [
    (["sim", "{klr}", "--out", "r"], "{klr}:1:1: error: a KLR kernel (JSON), not a BIR program; "
     "lower it first: tilecc codegen {klr} -o k01_ts_basic_f32.bir.json"),
    (["codegen", "k.bir.json"], "k.bir.json:1:1: error: a BIR program (JSON), not a KLR kernel; "
     "run it with `tilecc sim k.bir.json --input NAME=FILE.npy ... --out DIR`"),
    (["codegen", "partial.py"], "partial.py:1:1: error: a Python file of NKI kernels, not a KLR "
     "kernel; trace or run a kernel in it as partial.py:FUNCTION (functions: half_copy)"),
    (["hlo-opt", "k.bir.json"], "k.bir.json:1:1: error: a BIR program (JSON), not an HLO module;"),
    (["trace", "m.hlo:main"], "m.hlo:1:1: error: an HLO module, not a Python kernel file;"),
])
def test_files_of_another_stage_are_named_with_the_command_that_takes_them(
        work: Path, args: list[str], message: str) -> None:
    tilecc("codegen", str(K01), "-o", "k.bir.json", cwd=work)
    (work / "m.hlo").write_text(SPMD)
    done = tilecc(*[a.format(klr=K01) for a in args], cwd=work)
    assert done.returncode == 1
    assert done.stderr.startswith(message.format(klr=K01)), done.stderr


@pytest.mark.parametrize("value, message", [
    ("f32[128,x]", "--input a: f32[128,x]: no such file (expected FILE.npy or a NUMBER)"),
    ("f32[128,32]", "--input a: f32[128,32] is a shape without values; this command needs"),
    ("missing.npy", "--input a: cannot read missing.npy: No such file or directory"),
])
def test_input_values_a_command_cannot_take_are_named(work: Path, value: str, message: str) -> None:
    done = tilecc("run", "partial.py:half_copy", "--input", f"a={value}", "--input", "out=o.npy",
                  "--out", "r", cwd=work)
    assert done.returncode == 1 and done.stderr.startswith(f"error: {message}")
