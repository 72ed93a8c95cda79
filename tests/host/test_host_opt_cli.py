"""`tilecc host-opt`, the pass manager and the demo stage."""

from __future__ import annotations

import io

import pytest

from tilecc.cli import main
from tilecc.demo_stages import host as host_stage
from tilecc.errors import PassError
from tilecc.host import ir
from tilecc.host.constants import Scope
from tilecc.host.parser import parse_module
from tilecc.host.pass_manager import HostPass, PassPipeline, PassProperties, check_round_trip
from tilecc.host.passes import HOST_PASS_REGISTRY, build_pipeline, get_pass, list_passes
from tilecc.host.printer import print_module

from .conftest import EXAMPLES, assert_same_source, host_program, sig

BEFORE = host_program("""\
        buf = pld.alloc_window_buffer(1024)
        data = pld.window(buf, [256], dtype=pl.FP32)
        data = pld.tensor.allreduce(data, op=pld.ReduceOp.Sum)
        return data
""")
AFTER = host_program(sig(0) + """\
        buf = pld.tensor.alloc_window_buffer(1024)
        data = pld.tensor.window(buf, [256], dtype=pl.FP32)
        data = pld.tensor.allreduce(data, __allreduce_signal_0, op=pld.ReduceOp.Sum)
        return data
""")


def test_host_opt_writes_the_rewritten_program(tmp_path):
    src = tmp_path / "prog.py"
    src.write_text(BEFORE)
    out = tmp_path / "out.py"
    assert main(["host-opt", str(src), "--passes", "synthesize-allreduce-signals", "-o", str(out)]) == 0
    # the statements the pass kept keep their text (short forms included)
    assert "        buf = pld.alloc_window_buffer(1024)\n" in out.read_text()
    assert_same_source(print_module(parse_module(out.read_text())), AFTER)
    assert src.read_text() == BEFORE
    # the class-style name is accepted too, and the output is a fixed point
    out2 = tmp_path / "out2.py"
    assert main(["host-opt", str(out), "--passes", "SynthesizeAllReduceSignals", "-o", str(out2)]) == 0
    assert out2.read_text() == out.read_text()


def test_host_opt_to_stdout(tmp_path, capsys):
    src = tmp_path / "prog.py"
    src.write_text(BEFORE)
    assert main(["host-opt", str(src)]) == 0
    assert_same_source(print_module(parse_module(capsys.readouterr().out)), AFTER)


def test_host_opt_list_passes(capsys):
    assert main(["host-opt", "--list-passes"]) == 0
    assert "synthesize-allreduce-signals" in capsys.readouterr().out


@pytest.mark.parametrize("body, expected", [
    ("        x = [i for i in y]\n", "prog.py:11:13: error: unsupported expression `ListComp`"),
    ("        d = pld.window(b, [4], dtype=pl.FP32)\n        w = (pld.tensor.allreduce(d),)\n",
     "prog.py:12:14: error: pld.tensor.allreduce must be a direct assignment"),
    ("        d = pld.tensor.allreduce(a, b, c, e)\n",
     "prog.py:11:13: error: pld.tensor.allreduce expects target[, signal], got 4 positional arguments"),
])
def test_host_opt_errors_are_one_line_and_leave_no_output(tmp_path, capsys, monkeypatch, body, expected):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "prog.py").write_text(host_program(body + "        return 0\n"))
    assert main(["host-opt", "prog.py", "-o", "out.py"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(expected) and err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["prog.py"]


def test_host_opt_unknown_pass_and_missing_file(tmp_path, capsys):
    assert main(["host-opt", str(tmp_path / "missing.py")]) == 1
    assert "cannot read" in capsys.readouterr().err
    (tmp_path / "p.py").write_text(BEFORE)
    assert main(["host-opt", str(tmp_path / "p.py"), "--passes", "nope"]) == 1
    assert "unknown host pass `nope`" in capsys.readouterr().err


class _NeedsProperty(HostPass):
    name = "needs-property"
    properties = PassProperties(required=frozenset({"SSAForm"}))

    def run_program(self, program: ir.Program, scope: Scope) -> ir.Program:
        return program


class _DropsAllocName(HostPass):
    """Builds an alloc_window_buffer without its internal name: not printable faithfully."""
    name = "drops-alloc-name"

    def run_program(self, program: ir.Program, scope: Scope) -> ir.Program:
        alloc = ir.OpCall("pld.tensor.alloc_window_buffer", (ir.Const(16),))
        func = program.functions[-1]
        body = (ir.Assign(ir.Var("extra_buf"), alloc),) + func.body
        new = ir.Function(func.name, func.params, func.returns, body, func.decorator, func.doc)
        return ir.Program(program.name, program.functions[:-1] + (new,), program.decorator)


def test_pipeline_checks_required_properties_and_round_trip():
    module = parse_module(BEFORE)
    with pytest.raises(PassError, match="requires IR properties \\['SSAForm'\\]"):
        PassPipeline([_NeedsProperty()]).run(module)
    assert PassPipeline([_NeedsProperty()], properties={"SSAForm"}).run(module) is module
    with pytest.raises(PassError, match="print -> parse changed function `P.host_orch`"):
        PassPipeline([_DropsAllocName()]).run(module)
    assert PassPipeline([_DropsAllocName()], verify_round_trip=False).run(module) != module
    check_round_trip(PassPipeline([get_pass("synthesize-allreduce-signals")]).run(module), "again")


def test_demo_stage_runs_on_the_bundled_example():
    out = io.StringIO()
    assert host_stage.run_stage(EXAMPLES.parent, out)
    text = out.getvalue()
    assert "__allreduce_signal_0" in text and "FAILED" not in text


def test_demo_stage_reports_a_missing_example(tmp_path):
    out = io.StringIO()
    assert not host_stage.run_stage(tmp_path, out)
    assert "error:" in out.getvalue()


def test_one_driver_reports_changes_and_dumps(tmp_path):
    module = parse_module(BEFORE)
    seen: list[tuple[str, bool]] = []
    pipeline = build_pipeline(["synthesize-allreduce-signals", "SynthesizeAllReduceSignals"],
                              dump_dir=tmp_path / "d")
    result = pipeline.run(module, lambda name, changed: seen.append((name, changed)))
    # the second run finds every allreduce explicit: the same object, "no change"
    assert seen == pipeline.results == [("synthesize-allreduce-signals", True),
                                        ("synthesize-allreduce-signals", False)]
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == [
        "01-synthesize-allreduce-signals.after.py", "01-synthesize-allreduce-signals.before.py",
        "02-synthesize-allreduce-signals.after.py", "02-synthesize-allreduce-signals.before.py"]
    assert (tmp_path / "d" / "01-synthesize-allreduce-signals.before.py").read_text() == print_module(module)
    assert (tmp_path / "d" / "02-synthesize-allreduce-signals.after.py").read_text() == print_module(result)
    assert build_pipeline([]).run(module) is module


def test_host_opt_reports_each_pass_and_dumps(tmp_path, capsys):
    (src := tmp_path / "p.py").write_text(BEFORE)
    argv = ["host-opt", str(src), "--passes", "synthesize-allreduce-signals,synthesize-allreduce-signals",
            "--dump-dir", str(tmp_path / "d"), "-o", str(tmp_path / "o.py")]
    assert main(argv) == 0
    assert capsys.readouterr().err == "synthesize-allreduce-signals: changed\nsynthesize-allreduce-signals: no change\n"
    assert len(list((tmp_path / "d").iterdir())) == 4


def test_registry_rows_name_their_classes():
    for info in HOST_PASS_REGISTRY:
        host_pass = info.create()
        assert (host_pass.name, host_pass.display_name) == (info.cli_name, info.display_name)
        assert get_pass(info.display_name).name == info.cli_name
        assert list_passes().count(f"{info.cli_name} ") == 1
    with pytest.raises(PassError, match="unknown host pass `nope` \\(known: synthesize-allreduce-signals\\)"):
        build_pipeline(["nope"])
