"""Source positions end to end: NKI line -> KLR `pos` -> BIR `Inst.pos` -> BIR JSON, and the
text errors print for them (tilecc/source_pos.py)."""

from __future__ import annotations

import numpy as np

from tilecc.bir.inst import SourcePos
from tilecc.bir.json import read_program_json, write_program_json
from tilecc.cli import main
from tilecc.codegen.klr_to_bir import codegen_kernel
from tilecc.klr.read import read_kernel_json
from tilecc.nki.driver import ArgSpec, trace_kernel
from tilecc.nki.loader import load_kernel
from tilecc.source_pos import describe

KERNEL = '''\
import tilecc.nki.language as nl


def kernel(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    e = nl.exp(t)
    nl.store(out, value=e)
    return out
'''


def _kernel(tmp_path):
    path = tmp_path / "positions.py"
    path.write_text(KERNEL)
    return path, load_kernel(f"{path}:kernel")


def test_every_traced_statement_carries_its_kernel_line(tmp_path):
    path, fn = _kernel(tmp_path)
    kernel = trace_kernel(fn, ArgSpec((128, 8), np.float32)).kernel
    assert [(op.pos.filename, op.pos.line, op.pos.column) for op in kernel.body] == [
        (str(path), 6, 8), (str(path), 7, 8), (str(path), 8, 4)]


def test_codegen_keeps_the_position_on_each_instruction_and_json_round_trips_it(tmp_path):
    path, fn = _kernel(tmp_path)
    program = codegen_kernel(trace_kernel(fn, ArgSpec((128, 8), np.float32)).kernel)
    lines = [inst.pos.line for inst in program.instructions]
    # the zero-bias memset of the first activation belongs to that activation's line
    assert lines == [6, 7, 7, 8]
    for pretty in (False, True):
        back = read_program_json(write_program_json(program, pretty=pretty))
        assert [inst.pos for inst in back.instructions] == [inst.pos for inst in program.instructions]
    assert back.instructions[1].pos == SourcePos(str(path), 7, 8)


def test_trace_writes_pos_into_the_klr_json(tmp_path):
    path, _ = _kernel(tmp_path)
    np.save(tmp_path / "a.npy", np.zeros((128, 8), np.float32))
    out = tmp_path / "k.klr.json"
    assert main(["trace", f"{path}:kernel", "--input", f"a={tmp_path / 'a.npy'}", "-o", str(out)]) == 0
    kernel = read_kernel_json(out.read_text(), str(out))
    assert [op.pos.line for op in kernel.body] == [6, 7, 8]


def test_describe_names_the_nki_call_or_the_statement(tmp_path):
    path, _ = _kernel(tmp_path)
    assert describe(str(path), 7, 8) == f"{path}:7:9 nl.exp"
    assert describe(str(path), 8, 4) == f"{path}:8:5 nl.store"
    assert describe(str(path), 0, 0) == ""
    assert describe(str(tmp_path / "gone.py"), 3, 0) == f"{tmp_path / 'gone.py'}:3:1"
