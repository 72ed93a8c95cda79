"""Fresh files from the `klr` tool (klr-lang 0.0.12) are read, lowered and verified."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tilecc.bir import inst as b
from tilecc.bir.enums import AluOpType
from tilecc.bir.verifier import verify_program
from tilecc.codegen.klr_to_bir import codegen_kernel
from tilecc.klr import ast as k
from tilecc.klr.read import read_kernel_json

BIN = Path(sys.executable).parent
KERNEL = '''
def kernel(a, out):
  t = nki.language.load(a)
  u = nki.isa.tensor_scalar(t, numpy.subtract, 3.0, True, numpy.maximum, 0.25, True)
  v = nki.isa.tensor_scalar(data=u, op0=numpy.multiply, operand0=2.0)
  nki.language.store(out, v)
  return out
'''


@pytest.mark.oracle
def test_klr_tool_output_lowers(tmp_path: Path) -> None:
    if not (BIN / "klr").exists():
        pytest.skip("the klr tool (klr-lang 0.0.12) is not installed beside this python")
    src = tmp_path / "kern.py"
    src.write_text(KERNEL)
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run([str(BIN / "klr"), "nki-to-klr", "-j", str(src), "kernel"],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    kern = read_kernel_json(done.stdout, "kern.klr.json")
    first = kern.body[1]
    assert isinstance(first, k.TensorScalar)
    assert first.reverse == k.TensorScalarReverseOps.both
    assert (first.imm0, first.imm1) == (k.Immediate(3.0), k.Immediate(0.25))
    program = codegen_kernel(kern)
    verify_program(program)
    ts = [i for i in program.instructions if isinstance(i, b.InstTensorScalarPtr)]
    assert [(t.op0, t.op1, t.reverse0, t.reverse1) for t in ts] == [
        (AluOpType.subtract, AluOpType.max, True, True),
        (AluOpType.mult, AluOpType.bypass, False, False)]
    assert [t.name for t in program.inputs] == ["a"]
    assert [t.name for t in program.outputs] == ["out"]


@pytest.mark.oracle
def test_the_tools_pretty_output_and_binary_files_are_named_errors(tmp_path: Path) -> None:
    """Without -j the tool prints Lean syntax; KLR's binary files are CBOR: each is one
    error that says how to get the JSON tilecc reads, not a JSON decoder complaint."""
    from tilecc.errors import ParseError
    from tilecc.klr.read import read_kernel_file
    if not (BIN / "klr").exists():
        pytest.skip("the klr tool (klr-lang 0.0.12) is not installed beside this python")
    src = tmp_path / "kern.py"
    src.write_text(KERNEL)
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run([str(BIN / "klr"), "nki-to-klr", str(src), "kernel"],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("{ name := ")
    (tmp_path / "pretty.klr").write_text(done.stdout)
    with pytest.raises(ParseError, match=r"pretty.klr:1:1: error: the klr tool's human-readable "
                                         r"\(--pretty\) output, not JSON: trace with `klr nki-to-klr -j"):
        read_kernel_file(str(tmp_path / "pretty.klr"))
    (tmp_path / "kern.klr").write_bytes(b"\xd9\xd9\xf7\x82\x01\xa0")
    with pytest.raises(ParseError, match=r"kern.klr:\$: error: a binary \(CBOR\) KLR file"):
        read_kernel_file(str(tmp_path / "kern.klr"))
