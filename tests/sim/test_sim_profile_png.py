"""The profile picture (tilecc/sim/profile_png.py): a PNG drawn from a Chrome trace."""

from __future__ import annotations

import json

import pytest

from bir_builders import ProgramBuilder, imm
from tilecc.bir.enums import AluOpType, EngineType
from tilecc.bir.inst import InstTensorScalarPtr
from tilecc.sim.profile import chrome_trace, schedule
from tilecc.sim.profile_png import main


def test_a_trace_becomes_a_png(tmp_path):
    pytest.importorskip("matplotlib", reason="the png extra (matplotlib) is not installed")
    pb = ProgramBuilder()
    pb.arg_in("h", (128, 64))
    pb.tile("a", (128, 64))
    pb.tile("b", (128, 64))
    pb.load("a", "h")
    pb.add(InstTensorScalarPtr("ts", EngineType.DVE, [pb.ap("a"), imm(2.0)], [pb.ap("b")],
                               op0=AluOpType.mult))
    trace = tmp_path / "t.json"
    trace.write_text(json.dumps(chrome_trace(schedule(pb.program()))))
    assert main([str(trace), str(tmp_path / "p.png")]) == 0
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_bad_trace_is_one_line(tmp_path, capsys):
    (tmp_path / "bad.json").write_text("{")
    assert main([str(tmp_path / "bad.json"), str(tmp_path / "p.png")]) == 1
    assert capsys.readouterr().err.startswith("error: ")
