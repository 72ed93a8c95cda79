"""The corpus of kernels traced by the klr 0.0.12 tool (tests/fixtures/klr0012_corpus:
NAME.py, the NAME.klr.json `klr nki-to-klr -j NAME.py kernel` wrote for it, and the numpy
reading of each in references.py; sNN kernels are traced with klr_gather_shapes.py as the
tool's gather step, which gives the arguments their shapes). Every file is read, lowered,
verified, round-tripped through BIR JSON, simulated and interpreted; both executions must
equal the numpy reference BIT-EXACTLY (integers and floats alike, NaN == NaN: every op is element-wise in
float32 with one rounding to the destination dtype, so no tolerance is needed).

Inputs have the traced arguments' shapes and dtypes (cNN: the stock tool's 10x10 float32),
with 0, -0, +-inf, NaN, 3e38, -1e-30 among float values and the extremes among integers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from diff_kernels import run_both, values
from tilecc.bir.verifier import verify_program
from tilecc.cli import main
from tilecc.codegen.klr_to_bir import codegen_kernel
from tilecc.errors import VerifyError
from tilecc.klr.read import read_kernel_file

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "klr0012_corpus"
sys.path.insert(0, str(CORPUS))
from references import MANY_INPUTS, ONE_INPUT, reference  # noqa: E402

KERNELS = sorted(p.name.removesuffix(".klr.json") for p in CORPUS.glob("[cs]*.klr.json"))
REFUSED = {  # files the tool writes for kernels the hardware cannot run: a located error
    "e01_engine_partition_start": "instruction 1 'TensorScalar-1' .*4 partitions cannot "
                                  "start at partition 4",
    "e02_store_shape_mismatch": "instruction 1 'NcDmaCopy-1' .*input of 10 elements, "
                                "output of 100",
}
KLR = Path(sys.executable).parent / "klr"


def test_corpus_is_complete() -> None:
    """Every kernel has its source, its file and a reference; every ALU op the tracer
    accepts (21 numpy names, 20 ops) appears in some file."""
    assert len(KERNELS) >= 30
    assert sorted(p.stem for p in CORPUS.glob("[cs][0-9]*.py")) == KERNELS
    assert sorted(p.stem for p in CORPUS.glob("e[0-9]*.py")) == sorted(REFUSED)
    assert set(KERNELS) == set(ONE_INPUT) | set(MANY_INPUTS)
    ops: set[str] = set()
    for name in KERNELS:
        for stmt in json.loads((CORPUS / f"{name}.klr.json").read_text())["body"]:
            op = stmt["store"]["op"]
            if isinstance(op, dict) and "tensorScalar" in op:
                ops |= {op["tensorScalar"]["op0"], op["tensorScalar"]["op1"]}
    assert ops >= {"add", "subtract", "mult", "max", "min", "is_equal", "not_equal", "is_ge",
                   "is_gt", "is_le", "is_lt", "logical_and", "logical_or", "logical_xor",
                   "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
                   "logical_shift_left", "logical_shift_right", "bypass"}


@pytest.mark.parametrize("name", KERNELS)
def test_corpus_kernel(name: str) -> None:
    kernel = read_kernel_file(str(CORPUS / f"{name}.klr.json"))
    rng = np.random.default_rng(7)
    ins = {t.name: values(t.dtype, (t.shape.par_dim,) + t.shape.free_dims, rng, low=-10,
                          high=10) for t in kernel.inputs}
    sim, interp = run_both(kernel, ins)
    want = reference(name, ins)
    assert sorted(sim) == sorted(interp) == sorted(want)
    for out, expected in want.items():
        for label, got in (("simulator", sim[out]), ("interpreter", interp[out])):
            assert got.dtype == expected.dtype, f"{out} ({label})"
            as_is = got.dtype.kind in "iu"  # floats as float32: NaN == NaN for bf16 too
            np.testing.assert_array_equal(got if as_is else got.astype(np.float32),
                                          expected if as_is else expected.astype(np.float32),
                                          err_msg=f"{out} ({label})")


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_tool_files_the_hardware_cannot_run(name: str) -> None:
    """The tracer lets an engine operand start at partition 4 and a 10-element tile be
    stored into 100 elements; the verifier names the instruction."""
    program = codegen_kernel(read_kernel_file(str(CORPUS / f"{name}.klr.json")))
    with pytest.raises(VerifyError, match=REFUSED[name]):
        verify_program(program)


def trace(source: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """`klr nki-to-klr -j` as the corpus was made (trace.sh): the tool runs the klr-gather
    it finds on PATH, for sNN kernels a shim running klr_gather_shapes.py."""
    path = [str(KLR.parent), os.environ.get("PATH", "")]
    if source.name.startswith("s"):
        shim = tmp_path / "shim"
        shim.mkdir(exist_ok=True)
        gather = shim / "klr-gather"
        gather.write_text(f'#!/bin/sh\nexec "{sys.executable}" '
                          f'"{CORPUS / "klr_gather_shapes.py"}" "$@"\n')
        gather.chmod(0o755)
        path.insert(0, str(shim))
    env = dict(os.environ, PATH=os.pathsep.join(path))
    return subprocess.run([str(KLR), "nki-to-klr", "-j", source.name, "kernel"], cwd=source.parent,
                          env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.oracle
@pytest.mark.skipif(not KLR.exists(), reason=f"the klr 0.0.12 tool is not installed at {KLR}")
def test_corpus_files_are_what_the_tool_writes(tmp_path: Path) -> None:
    for name in KERNELS + sorted(REFUSED):
        done = trace(CORPUS / f"{name}.py", tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        stored = json.loads((CORPUS / f"{name}.klr.json").read_text())
        assert json.loads(done.stdout) == stored, name


@pytest.mark.oracle
@pytest.mark.skipif(not KLR.exists(), reason=f"the klr 0.0.12 tool is not installed at {KLR}")
@pytest.mark.parametrize("call, error", [
    # a tensor operand: 0.0.12 never writes tensorScalarAddr
    ("nki.isa.tensor_scalar(t, numpy.add, nki.language.load(a[:, 0:1]))", "expecting float32"),
    ("nki.isa.tensor_scalar(t, numpy.add, -2.0)", "unsupported operator"),  # no unary minus
    ("nki.isa.tensor_scalar(t, numpy.add, 2)", "expecting float32"),  # ints are refused
    ("nki.isa.tensor_scalar(t, numpy.divide, 2.0)", "name numpy.divide not found"),
])
def test_what_the_tool_cannot_trace(call: str, error: str, tmp_path: Path) -> None:
    """The corpus README's claims about the tracer, checked against the tool itself."""
    source = tmp_path / "probe.py"
    source.write_text(f"def kernel(a, out):\n  t = nki.language.load(a)\n  u = {call}\n"
                      f"  nki.language.store(out, u)\n  return out\n")
    done = trace(source, tmp_path)
    assert done.returncode != 0 and error in done.stdout + done.stderr


@pytest.mark.parametrize("name", ["s41_int32_arguments", "c37_inplace_update"])
def test_corpus_kernel_through_the_cli(name: str, tmp_path: Path) -> None:
    """`tilecc codegen FILE -o P.bir.json` then `tilecc sim P.bir.json --input ... --out D`,
    as a user runs a tool-written file; the outputs are the reference's."""
    kernel = read_kernel_file(str(CORPUS / f"{name}.klr.json"))
    rng = np.random.default_rng(3)
    ins = {t.name: values(t.dtype, (t.shape.par_dim,) + t.shape.free_dims, rng, low=-10,
                          high=10) for t in kernel.inputs}
    program = tmp_path / "p.bir.json"
    assert main(["codegen", str(CORPUS / f"{name}.klr.json"), "-o", str(program)]) == 0
    args = ["sim", str(program), "--out", str(tmp_path / "out")]
    for arg, value in ins.items():
        np.save(tmp_path / f"{arg}.npy", value)
        args += ["--input", f"{arg}={tmp_path / f'{arg}.npy'}"]
    assert main(args) == 0
    for out, expected in reference(name, ins).items():
        np.testing.assert_array_equal(np.load(tmp_path / "out" / f"{out}.npy"), expected)
