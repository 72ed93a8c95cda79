"""Host runtime: programs run on N ranks (threads); the synthesized signals drive the
credit-barrier allreduce, and results are checked against numpy on real values."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from tilecc.errors import InterpError
from tilecc.host.parser import parse_module
from tilecc.host.passes.synthesize_allreduce_signals import SynthesizeAllReduceSignals
from tilecc.host.runtime.collectives import allreduce
from tilecc.host.runtime.interpreter import run_host
from tilecc.host.runtime.module_values import module_constants
from tilecc.host.runtime.world import World

from .conftest import EXAMPLES, HEADER

PASS = SynthesizeAllReduceSignals()


def _load(name: str):
    return parse_module((EXAMPLES / name).read_text(), name)


def _signals_all_zero(world: World, ranks: int) -> bool:
    names = [n for n in world.buffer_names() if n.startswith("__allreduce_signal_buf_")]
    assert names
    return all(not world.buffer_by_name(n, r).view(np.int32).any() for n in names for r in range(ranks))


@pytest.mark.parametrize("ranks", [1, 2, 4])
def test_mesh_example_sums_across_ranks_exactly(ranks):
    module = PASS.run_module(_load("allreduce_mesh.py"))
    rng = np.random.default_rng(ranks)
    inputs = (rng.standard_normal((ranks, 1, 64)) * 1e3).astype(np.float32)
    inputs[0, 0, :3] = [-0.0, np.inf, -np.inf] if ranks == 1 else [-1e30, 1e30, -7.5]
    outputs = np.zeros_like(inputs)
    world = World(ranks)
    results = run_host(module, "MeshAllReduce", "host_orch", ranks, [inputs, outputs], world=world)
    expected = inputs[0, 0].astype(np.float32)
    for r in range(1, ranks):
        expected = expected + inputs[r, 0]
    for r in range(ranks):
        np.testing.assert_array_equal(outputs[r, 0], expected)
    assert all(res is outputs for res in results)
    assert _signals_all_zero(world, ranks)


def test_mesh_example_needs_the_pass():
    module = _load("allreduce_mesh.py")
    inputs = np.ones((2, 1, 64), np.float32)
    with pytest.raises(InterpError, match="run the synthesize-allreduce-signals pass first"):
        run_host(module, "MeshAllReduce", "host_orch", 2, [inputs, np.zeros_like(inputs)])


def test_loop_example_reuses_signals_across_iterations():
    module = PASS.run_module(_load("allreduce_two_buffers_loop.py"))
    assert module_constants(module) == {"ROWS": 8, "COLS": 128, "STEPS": 4}
    ranks = 4
    world = World(ranks)
    results = run_host(module, "TwoBufferTraining", "host_orch", ranks, [], world=world)
    # step 0: 0 * 0.5 summed -> 0; steps 1..3: g <- W * (g + 1); then one more Sum.
    g = 0.0
    for _ in range(1, 4):
        g = ranks * (g + 1.0)
    for r in range(ranks):
        np.testing.assert_array_equal(results[r].local(world, r), np.full((8, 128), ranks * g, np.float32))
    assert _signals_all_zero(world, ranks)


LOOP_PROGRAM = HEADER + """\
N = 97


@pl.program
class Stress:
    @pl.function(type=pl.FunctionType.Orchestration)
    def bump(self, data: pld.DistributedTensor[[N], pl.FP32], amount: pl.Scalar[pl.INT32]):
        return pl.store(pl.add(pl.load(data, [0], [N]), amount), [0], data)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, iterations: pl.Scalar[pl.INT32]):
        buf = pld.alloc_window_buffer(N * pl.FP32.get_byte())
        data = pld.window(buf, [N], dtype=pl.FP32)
        for i in pl.range(iterations):
            for r in pl.range(pld.world_size()):
                self.bump(data, r - 1, device=r)
            if i % 2 == 0:
                data = pld.tensor.allreduce(data, op=pld.ReduceOp.Sum, core_num=3)
            else:
                data = pld.tensor.allreduce(data, op=pld.ReduceOp.Max)
        return data
"""


def test_one_signal_reused_hundreds_of_times_with_lanes():
    module = PASS.run_module(parse_module(LOOP_PROGRAM))
    ranks, iterations = 3, 150
    world = World(ranks)
    results = run_host(module, "Stress", "host_orch", ranks, [iterations], world=world)
    # reference model: every rank holds the same vector after each allreduce
    x = np.zeros(97, np.float32)
    for i in range(iterations):
        per_rank = [x + np.float32(r - 1) for r in range(ranks)]
        if i % 2 == 0:
            acc = per_rank[0]
            for v in per_rank[1:]:
                acc = acc + v
            x = acc
        else:
            x = np.maximum.reduce(per_rank)
    for r in range(ranks):
        np.testing.assert_array_equal(results[r].local(world, r), x)
    assert _signals_all_zero(world, ranks)
    # one synthesized signal (lanes = 3, the group's widest core_num) served every call
    assert [n for n in world.buffer_names() if n.startswith("__allreduce")] == ["__allreduce_signal_buf_0"]
    assert world.buffer_by_name("__allreduce_signal_buf_0", 0).size == ranks * 3 * 4


def _run_ranks(world: World, fn) -> list:
    errors: list = [None] * world.world_size

    def body(rank: int) -> None:
        try:
            fn(rank)
        except Exception as err:  # noqa: BLE001 - collected for the assertion below
            errors[rank] = err
            world.fail(str(err))

    threads = [threading.Thread(target=body, args=(r,)) for r in range(world.world_size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


@pytest.mark.parametrize("op, combine", [("Sum", np.add), ("Max", np.maximum), ("Min", np.minimum),
                                         ("Prod", np.multiply)])
def test_allreduce_ops_on_special_values_fp16(op, combine):
    ranks = 3
    world = World(ranks)
    values = np.array([[1.5, -2.0, np.nan, np.inf, -0.0, 65504.0],
                       [-1.5, 3.0, 1.0, 1.0, 0.0, 65504.0],
                       [2.0, -np.inf, 0.0, -5.0, -0.0, 1.0]], np.float16)
    windows = {}

    def run(rank: int) -> None:
        buf = world.alloc(rank, "data_buf", 12)
        sig = world.alloc(rank, "sig_buf", ranks * 4)
        data = world.window(buf, np.dtype(np.float16), (6,))
        signal = world.window(sig, np.dtype(np.int32), (ranks,))
        data.local(world, rank)[:] = values[rank]
        windows[rank] = (data, signal)
        allreduce(world, rank, data, signal, op)
        allreduce(world, rank, data, signal, "Max")   # back to back on the same signal

    assert _run_ranks(world, run) == [None] * ranks
    acc = values[0].astype(np.float32)
    for r in range(1, ranks):
        acc = combine(acc, values[r].astype(np.float32))
    with np.errstate(over="ignore"):
        expected = acc.astype(np.float16)
    for r, (data, signal) in windows.items():
        np.testing.assert_array_equal(data.local(world, r), expected)
        assert not signal.local(world, r).any()


def test_allreduce_rejects_bad_operands():
    world = World(2)
    buf = world.alloc(0, "b", 64)
    data = world.window(buf, np.dtype(np.float32), (4,))
    ints = world.window(buf, np.dtype(np.int32), (4,))
    sig = world.window(buf, np.dtype(np.int32), (2, 1))
    with pytest.raises(InterpError, match="target must be FP16 or FP32"):
        allreduce(world, 0, ints, sig)
    with pytest.raises(InterpError, match="does not fit world size 2 and core_num=4"):
        allreduce(world, 0, data, sig, core_num=4)
    with pytest.raises(InterpError, match=r"mode='tree' is not one of \['mesh', 'ring'\]"):
        allreduce(world, 0, data, sig, mode="tree")
    with pytest.raises(InterpError, match=r"mode='ring' signal shape \[2, 1\] does not fit world size 2"):
        allreduce(world, 0, data, sig, mode="ring")
    with pytest.raises(InterpError, match="signal must be INT32"):
        allreduce(world, 0, data, data)
    with pytest.raises(InterpError, match="needs 128 bytes but buffer `b` has 64"):
        world.window(buf, np.dtype(np.float32), (32,))


def test_a_rank_that_skips_the_allreduce_is_reported_not_hung():
    source = HEADER + """\
@pl.program
class Skip:
    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self):
        buf = pld.alloc_window_buffer(16)
        data = pld.window(buf, [4], dtype=pl.FP32)
        if pld.rank() == 0:
            data = pld.tensor.allreduce(data, op=pld.ReduceOp.Sum)
        return data
"""
    module = PASS.run_module(parse_module(source))
    with pytest.raises(InterpError, match=r"rank 0: <program>:11:20: timed out after 0.3s waiting for signal cells \[\(1, 0\)\]"):
        run_host(module, "Skip", "host_orch", 2, [], timeout=0.3)


def test_asymmetric_allocation_is_an_error():
    world = World(2)
    world.alloc(0, "a", 16)
    with pytest.raises(InterpError, match="must allocate symmetrically"):
        world.alloc(1, "b", 16)


LOCATED = HEADER + """\
@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(self, data: pl.Tensor[[4], pl.FP32]):
        return data

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, a: pl.Tensor[[4], pl.FP32], b: pl.Tensor[[3], pl.FP32]):
        STMT
        return a
"""


@pytest.mark.parametrize("stmt, message", [
    ("a[7] = b[0]", "rank 0: <program>:12:9: `a[7]`: index 7 is out of bounds for axis 0 with size 4 "
                    "(a is float32[4])"),
    ("a[0:2] = b", "rank 0: <program>:12:9: writing [3] into a region of shape [2]"),
    ("x = b[-4]", "rank 0: <program>:12:13: `b[-4]`: index -4 is out of bounds for axis 0 with size 3 "
                  "(b is float32[3])"),
    ("x = self.chip_orch(a + b)", "rank 0: <program>:12:13: `chip_orch`: ValueError: operands could not be "
                                  "broadcast together with shapes (4,) (3,)"),
])
def test_a_value_a_rank_cannot_index_or_compute_is_located(stmt, message):
    module = parse_module(LOCATED.replace("STMT", stmt))
    args = [np.zeros(4, np.float32), np.zeros(3, np.float32)]
    with pytest.raises(InterpError) as caught:
        run_host(module, "Bad", "host_orch", 2, args)
    assert str(caught.value) == message   # every rank fails; the lowest is reported
