"""Property tests (derandomized): random valid modules round-trip and XLA reads them; mutated
text parses or raises ParseError."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hlo_structure import module_summary
from tilecc.errors import ParseError
from tilecc.hlo.builders import make_binary, make_broadcast, make_reduce, make_reshape, make_slice
from tilecc.hlo.ir import HloComputation, HloInstruction, HloModule
from tilecc.hlo.opcodes import HloOpcode
from tilecc.hlo.parser import parse_module
from tilecc.hlo.printer import print_module
from tilecc.hlo.replica_groups import ReplicaGroups
from tilecc.hlo.types import PrimitiveType, Shape, numpy_dtype
from tilecc.hlo.verifier import verify_module

FIXTURES = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "hlo").rglob("*.hlo"))
TYPES = [PrimitiveType.S32, PrimitiveType.U8, PrimitiveType.S64, PrimitiveType.F32,
         PrimitiveType.BF16, PrimitiveType.PRED]
BINARY = [HloOpcode.ADD, HloOpcode.MAXIMUM, HloOpcode.MINIMUM, HloOpcode.MULTIPLY,
          HloOpcode.SUBTRACT]
GROUPS = [ReplicaGroups.empty(), ReplicaGroups.from_groups([[0, 1], [2, 3]]),
          ReplicaGroups.iota(2, 2, (2, 2), (1, 0)),
          ReplicaGroups.mesh([("x", 2), ("y", 2)], ["y"])]


def reducer(module: HloModule, et: PrimitiveType, opcode: HloOpcode) -> HloComputation:
    comp = HloComputation(f"{opcode.mnemonic}_{et.name.lower()}")
    module.add_computation(comp)
    scalar = Shape.array(et, ())
    a = comp.add_instruction(HloInstruction.create(HloOpcode.PARAMETER, scalar, parameter_number=0), "a")
    b = comp.add_instruction(HloInstruction.create(HloOpcode.PARAMETER, scalar, parameter_number=1), "b")
    comp.root = comp.add_instruction(HloInstruction.create(opcode, scalar, [a, b]))
    return comp


@st.composite
def random_modules(draw: st.DrawFn) -> HloModule:
    module = HloModule("random")
    module.replica_count = 4
    et = draw(st.sampled_from([t for t in TYPES if t != PrimitiveType.PRED]))
    op = draw(st.sampled_from(BINARY))
    red = reducer(module, et, op)
    entry = HloComputation("entry")
    module.add_computation(entry, is_entry=True)
    rows, cols = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    shape = Shape.array(et, (rows, cols))
    values: list[HloInstruction] = [entry.add_instruction(HloInstruction.create(
        HloOpcode.PARAMETER, shape, parameter_number=0), "p")]
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    dtype = numpy_dtype(et)
    info = np.iinfo(dtype) if dtype.kind in "iu" else None
    raw = (rng.integers(info.min, info.max, (rows, cols), endpoint=True, dtype=dtype)
           if info is not None else rng.standard_normal((rows, cols)).astype(dtype))
    values.append(entry.add_instruction(HloInstruction.create(
        HloOpcode.CONSTANT, shape, literal=raw), "k"))
    init = entry.add_instruction(HloInstruction.create(
        HloOpcode.CONSTANT, Shape.array(et, ()), literal=np.array(raw.flat[0])), "init")
    outputs: list[HloInstruction] = []
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["binary", "reshape", "slice", "reduce", "broadcast",
                                     "all-reduce"]))
        x = draw(st.sampled_from(values))
        if kind == "binary":
            y = draw(st.sampled_from([v for v in values if v.shape == x.shape] or [x]))
            values.append(make_binary(draw(st.sampled_from(BINARY)), x, y))
        elif kind == "reshape":
            values.append(make_reshape([x.shape.element_count()], x))
        elif kind == "slice" and x.shape.rank:
            starts = [draw(st.integers(0, d)) for d in x.shape.dims]
            limits = [draw(st.integers(s, d)) for s, d in zip(starts, x.shape.dims)]
            strides = [draw(st.integers(1, 3)) for _ in starts]
            values.append(make_slice(x, starts, limits, strides))
        elif kind == "reduce" and x.shape.rank:
            dims = draw(st.sets(st.integers(0, x.shape.rank - 1), min_size=1))
            outputs.append(make_reduce(x, init, sorted(dims), red, '{op_name="reduce"}'))
        elif kind == "broadcast":
            outputs.append(make_broadcast(x, list(range(x.shape.rank)), list(x.shape.dims) + [2]))
        elif kind == "all-reduce":
            ar = HloInstruction.create(HloOpcode.ALL_REDUCE, x.shape, [x], to_apply=red,
                                       replica_groups=draw(st.sampled_from(GROUPS)),
                                       channel_id=draw(st.sampled_from([None, 1])))
            if ar.channel_id is not None:
                ar.use_global_device_ids = draw(st.booleans())
            values.append(entry.add_instruction(ar))
    everything = values + outputs
    entry.root = entry.add_instruction(HloInstruction.create(
        HloOpcode.TUPLE, Shape.tuple([v.shape for v in everything]), everything), "out")
    return module


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(random_modules())
def test_random_modules_round_trip(module: HloModule) -> None:
    verify_module(module)
    text = print_module(module)
    parsed = parse_module(text)
    verify_module(parsed)
    assert module_summary(parsed) == module_summary(module)
    assert print_module(parsed) == text


MUTATION = st.tuples(st.sampled_from(["delete", "insert", "replace", "duplicate"]),
                     st.floats(0, 1, exclude_max=True), st.integers(1, 12), st.binary(min_size=1, max_size=8))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.sampled_from(FIXTURES), st.lists(MUTATION, min_size=1, max_size=4))
def test_mutated_fixture_parses_or_raises_parse_error(path: Path, mutations: list) -> None:
    data = bytearray(path.read_bytes())
    for kind, where, length, blob in mutations:
        at = int(where * len(data))
        if kind == "delete":
            del data[at:at + length]
        elif kind == "insert":
            data[at:at] = blob
        elif kind == "replace":
            data[at:at + len(blob)] = blob
        else:
            data[at:at] = data[at:at + length]
    text = data.decode("latin-1")
    try:
        module = parse_module(text, path.name)
    except ParseError as err:
        assert err.line >= 1 and err.col >= 1 and err.path == path.name
        return
    print_module(module)


SPECIAL = st.sampled_from(list("{}()[],=%\"'/*\n <>:") + ["ROOT ", "ENTRY ", "s32[]", "/*", "*/",
                                                      "//", "\\", "<=", "T(", "mesh["])


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.sampled_from(FIXTURES), st.floats(0, 1, exclude_max=True), st.lists(SPECIAL, min_size=1, max_size=3))
def test_structural_tokens_inserted_anywhere(path: Path, where: float, tokens: list[str]) -> None:
    text = path.read_text()
    at = int(where * len(text))
    mutated = text[:at] + "".join(tokens) + text[at:]
    try:
        parse_module(mutated, path.name)
    except ParseError as err:
        assert err.line >= 1 and err.col >= 1


_XLA_READS = r"""
import sys
from jax._src.lib import xla_client
texts = sys.stdin.read().split("\x00")
for text in texts:
    xla_client.hlo.hlo_module_from_text(text)
print(len(texts))
"""


@pytest.mark.oracle
def test_xla_accepts_random_modules() -> None:
    """XLA's C++ parser reads tilecc's print of random modules (one child process for all:
    XLA aborts the process on some invalid input)."""
    texts: list[str] = []

    @settings(max_examples=40, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])
    @given(random_modules())
    def collect(module: HloModule) -> None:
        texts.append(print_module(module))

    collect()
    proc = subprocess.run([sys.executable, "-c", _XLA_READS], input="\x00".join(texts),
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "JAX_PLATFORMS": "cpu"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == [str(len(texts))]
