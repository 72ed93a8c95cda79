"""Every real fixture parses, verifies, round-trips, prints stably, and XLA accepts the print."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hlo_structure import module_summary
from tilecc.errors import VerifyError
from tilecc.hlo.parser import parse_module
from tilecc.hlo.printer import print_module
from tilecc.hlo.verifier import verify_module

ROOT = Path(__file__).resolve().parents[2]
# every fixture, the varied programs in programs/ included
FIXTURES = sorted((ROOT / "tests" / "fixtures" / "hlo").rglob("*.hlo"))
EXAMPLE = ROOT / "examples" / "hlo" / "psum_max.hlo"
# Files XLA's printer wrote (to_string or --xla_dump_to): tilecc must print them byte for byte.
XLA_PRINTED = [f for f in FIXTURES if f.name.endswith((".long.hlo", ".spmd.hlo", ".optimized.hlo"))]
# Fixtures XLA's parser reads but its verifier (and so its compiler) refuses, and why.
VERIFIER_REFUSES = {
    "xla_features.long.hlo": "asynchronous computation two_step expected to contain only the "
                             "root and parameter instructions, also has n.1",
}


def verify_as_xla_would(module, name: str) -> None:
    if name in VERIFIER_REFUSES:
        with pytest.raises(VerifyError, match=re.escape(VERIFIER_REFUSES[name])):
            verify_module(module)
    else:
        verify_module(module)


def test_fixture_set_is_complete() -> None:
    names = {f.name for f in FIXTURES}
    for case in ("psum_s32_4dev", "psum_s32_8dev", "reduce_max_s32", "reduce_min_s32",
                 "reduce_all_pred", "reduce_any_pred", "mlp_train_step"):
        for form in ("short", "debug", "long"):
            assert f"{case}.{form}.hlo" in names
    assert {"psum_s32_4dev.spmd.hlo", "psum_s32_8dev.spmd.hlo", "mlp_train_step.optimized.hlo",
            "ops_mix.optimized.hlo", "collectives_mix.optimized.hlo"} <= names


def test_fixtures_cover_many_opcodes() -> None:
    seen = {i.opcode.mnemonic for p in FIXTURES for c in parse_module(p.read_text()).computations
            for i in c.instructions}
    for op in ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute",
               "while", "conditional", "sort", "gather", "scatter", "convolution", "fusion",
               "custom-call", "reduce-window", "fft", "dot", "iota", "dynamic-slice"):
        assert op in seen, op


@pytest.mark.parametrize("path", FIXTURES + [EXAMPLE], ids=lambda p: p.name)
def test_parse_verify_roundtrip_stable(path: Path) -> None:
    text = path.read_text()
    module = parse_module(text, str(path))
    verify_as_xla_would(module, path.name)
    printed = print_module(module)
    again = parse_module(printed)
    verify_as_xla_would(again, path.name)
    assert module_summary(again) == module_summary(module)
    assert print_module(again) == printed


@pytest.mark.parametrize("path", XLA_PRINTED, ids=lambda p: p.name)
def test_xla_printed_text_is_reproduced_exactly(path: Path) -> None:
    text = path.read_text()
    assert print_module(parse_module(text, str(path))) == text


def test_example_is_the_demo_module() -> None:
    module = parse_module(EXAMPLE.read_text(), str(EXAMPLE))
    ops = [i for c in module.computations for i in c.instructions]
    all_reduce = [i for i in ops if i.opcode.mnemonic == "all-reduce"]
    reduce = [i for i in ops if i.opcode.mnemonic == "reduce"]
    assert [i.shape.to_text() for i in all_reduce] == ["s32[]"]
    assert all_reduce[0].to_apply.root.opcode.mnemonic == "add"
    assert all_reduce[0].replica_groups.groups() == [[0, 1, 2, 3]]
    assert len(reduce) == 1 and reduce[0].operands[0].shape.dims == (256, 64)
    assert reduce[0].to_apply.root.opcode.mnemonic == "maximum"
    assert reduce[0].operands[1].literal == -(2**31)


_XLA_CHECK = r"""
import sys
from jax._src.lib import xla_client
from tilecc.hlo.parser import parse_module
from tilecc.hlo.printer import print_module
for path in sys.argv[1:]:
    text = print_module(parse_module(open(path).read(), path))
    back = xla_client.hlo.hlo_module_from_text(text).to_string()
    print(path, "OK" if back else "EMPTY", flush=True)
    sys.stdout.write("\x00" + back + "\x00\n")
"""


@pytest.mark.oracle
def test_xla_accepts_printed_fixtures() -> None:
    """XLA's C++ parser reads tilecc's print of every fixture (in a child process: XLA
    aborts the process on some invalid input), and its re-print parses back to the same
    structure."""
    paths = [str(p) for p in FIXTURES + [EXAMPLE]]
    proc = subprocess.run([sys.executable, "-c", _XLA_CHECK, *paths], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "JAX_PLATFORMS": "cpu"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    chunks = proc.stdout.split("\x00")
    back_texts = chunks[1::2]
    assert len(back_texts) == len(paths)
    for path, back in zip(paths, back_texts):
        mine = parse_module(Path(path).read_text(), path)
        theirs = parse_module(back, path + " (printed by XLA)")
        # XLA renumbers the stack-frame table and stack_frame_ids on reading; compare the rest.
        for m in (mine, theirs):
            m.stack_frames = None
            for comp in m.computations:
                for inst in comp.instructions:
                    if inst.metadata is not None:
                        inst.metadata = _drop_stack_frame_id(inst.metadata)
            m.entry_computation_layout = None
        assert module_summary(theirs) == module_summary(mine), path


def _drop_stack_frame_id(metadata: str) -> str:
    return re.sub(r" ?stack_frame_id=\d+", "", metadata)
