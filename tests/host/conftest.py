"""Shared helpers of the host DSL tests: golden comparison after Python-ast normalisation."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tilecc.host import ir
from tilecc.host.parser import parse_module
from tilecc.host.pass_manager import PassPipeline
from tilecc.host.passes import get_pass
from tilecc.host.printer import print_module

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "host"

HEADER = "import pypto.language as pl\nimport pypto.language.distributed as pld\n\n"

CHIP = """\
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(self, data: pld.DistributedTensor[[256], pl.FP32]):
        return data
"""

HOST_DECO = "    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)\n"


def sig(n: int, core_num: int = 1) -> str:
    """The three hoisted bindings of signal n (spec 002, step 3), indented for a method body."""
    ws, buf, signal = f"__allreduce_signal_world_size_{n}", f"__allreduce_signal_buf_{n}", f"__allreduce_signal_{n}"
    return (f"        {ws} = pld.system.world_size()\n"
            f"        {buf}: pl.Ptr = pld.tensor.alloc_window_buffer({ws} * {core_num} * pl.INT32.get_byte())\n"
            f"        {signal} = pld.tensor.window({buf}, [{ws}, {core_num}], dtype=pl.INT32)\n")


def host_program(body: str, *, params: str = "self", name: str = "host_orch", extra: str = CHIP) -> str:
    """A program with a chip-level function and one host orchestrator whose body is `body`
    (already indented by 8 spaces)."""
    return HEADER + "@pl.program\nclass P:\n" + extra + HOST_DECO + f"    def {name}({params}):\n" + body


def normalise(source: str) -> str:
    return ast.dump(ast.parse(source))


def assert_same_source(actual: str, expected: str) -> None:
    """Golden comparison that ignores spacing, line breaks and redundant parentheses."""
    if normalise(actual) != normalise(expected):
        raise AssertionError(f"source differs.\n--- actual\n{actual}\n--- expected\n{expected}")


def synthesize(source: str, verify: bool = True) -> ir.Module:
    """Parse `source` and run SynthesizeAllReduceSignals with the round-trip check on."""
    module = parse_module(source, "<test>")
    return PassPipeline([get_pass("synthesize-allreduce-signals")], verify_round_trip=verify).run(module)


def synthesized_source(source: str) -> str:
    return print_module(synthesize(source))


@pytest.fixture
def examples_dir() -> Path:
    return EXAMPLES
