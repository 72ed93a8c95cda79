"""Host runtime on programs as users write them: the program as written (the signal-free
reference collective) and after SynthesizeAllReduceSignals give bit-identical results on
1-4 ranks; dispatch results, keyword arguments, pl.while_ loops, module values and the
keyword / shape forms of the window ops."""

from __future__ import annotations

import numpy as np
import pytest

from tilecc.errors import InterpError
from tilecc.host.parser import parse_module
from tilecc.host.passes.synthesize_allreduce_signals import SynthesizeAllReduceSignals
from tilecc.host.runtime.interpreter import run_host
from tilecc.host.runtime.module_values import module_constants
from tilecc.host.runtime.world import Window, World

from .conftest import HEADER
from .test_corpus import CORPUS

PASS = SynthesizeAllReduceSignals()
# corpus program -> (host function, host arguments for a number of ranks)
DIFFERENTIAL = {
    "c29_two_buffers_mixed_ops": ("host_orch", lambda ranks, x, z: [x(16), x(16), z(16), z(16)]),
    "c30_host_calls_host": ("host_orch", lambda ranks, x, z: [x(8), z(8)]),
    "c41_tuples_through_dispatch": ("host_orch", lambda ranks, x, z: []),
    "c39_ssa_while": ("host", lambda ranks, x, z: []),
    "c40_elif_chain": ("host", lambda ranks, x, z: [ranks % 4]),
    "c36_keyword_forms": ("host", lambda ranks, x, z: []),
    "c34_builder_core_num": ("host", lambda ranks, x, z: []),
}
# what the builder of c34 is called with
VALUES = {"nr": 2, "cores": 3}


def snapshot(value, world: World, rank: int):
    if isinstance(value, Window):
        return value.local(world, rank).copy()
    if isinstance(value, tuple):
        return tuple(snapshot(v, world, rank) for v in value)
    return value.copy() if isinstance(value, np.ndarray) else value


def run(module, name: str, host: str, ranks: int, make_args, reference: bool):
    rng = np.random.default_rng(ranks)
    values = np.array([-0.0, np.inf, -np.inf, np.nan, -3.5, 1e30, -1e30, 7.25], np.float32)

    def x(n: int) -> np.ndarray:
        out = (rng.standard_normal((ranks, 1, n)) * 100).astype(np.float32)
        out[0, 0, :8] = values[:min(n, 8)]
        return out

    def z(n: int) -> np.ndarray:
        return np.zeros((ranks, 1, n), np.float32)

    args = make_args(ranks, x, z)
    world = World(ranks, timeout=10)
    program = module.programs[0].name
    results = run_host(module, program, host, ranks, args, world=world, reference_collectives=reference,
                       values=VALUES)
    return [snapshot(r, world, k) for k, r in enumerate(results)], [snapshot(a, world, 0) for a in args]


def assert_same(a, b) -> None:
    if isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y)
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    else:
        assert a == b


@pytest.mark.parametrize("name", sorted(DIFFERENTIAL))
@pytest.mark.parametrize("ranks", [1, 2, 3, 4])
def test_program_as_written_and_after_the_pass_compute_the_same(name, ranks):
    host, make_args = DIFFERENTIAL[name]
    before = parse_module((CORPUS / f"{name}.py").read_text(), name)
    after = PASS.run_module(before)
    assert after is not before
    expected = run(before, name, host, ranks, make_args, reference=True)
    assert_same(run(after, name, host, ranks, make_args, reference=False), expected)


def test_reference_sums_and_reduces_real_values():
    # c29: grads summed, stats max- then min-reduced (min of the max is the max)
    before = parse_module((CORPUS / "c29_two_buffers_mixed_ops.py").read_text())
    ranks = 3
    grads = np.arange(ranks * 16, dtype=np.float32).reshape(ranks, 1, 16) - 20
    stats = -grads
    outs = [np.zeros_like(grads), np.zeros_like(grads)]
    run_host(before, "TwoBuffers", "host_orch", ranks, [grads, stats, *outs], reference_collectives=True)
    for r in range(ranks):
        np.testing.assert_array_equal(outs[0][r, 0], grads[0, 0] + grads[1, 0] + grads[2, 0])
        np.testing.assert_array_equal(outs[1][r, 0], stats.max(axis=0)[0])


DISPATCH = HEADER + """\
N = 4


@pl.program
class Dispatch:
    @pl.function(type=pl.FunctionType.Orchestration)
    def publish(self, x: pl.Tensor[[1, N], pl.FP32], win: pl.InOut[pld.DistributedTensor[[1, N], pl.FP32]],
                scale: pl.Scalar[pl.FP32] = 1.0):
        t = pl.mul(pl.load(x, [0, 0], [1, N]), scale)
        win = pl.store(t, [0, 0], win)
        return win

    @pl.function(type=pl.FunctionType.Orchestration)
    def fresh(self, x: pl.Tensor[[1, N], pl.FP32]):
        return pl.load(x, [0, 0], [1, N])

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[4, 1, N], pl.FP32]):
        buf = pld.alloc_window_buffer(size=N * 4)
        data = pld.window(buf, shape=[1, N], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            data = self.publish(x[r], win=data, scale=2.0, device=r)
        data = pld.tensor.allreduce(data)
        return data
"""


def test_dispatch_results_keywords_and_defaults():
    module = parse_module(DISPATCH)
    x = np.arange(16, dtype=np.float32).reshape(4, 1, 4) - 6
    for reference, prog in ((True, module), (False, PASS.run_module(module))):
        world = World(4)
        results = run_host(prog, "Dispatch", "host", 4, [x], world=world, reference_collectives=reference)
        for r in range(4):
            # every rank's host value is the window itself, even where `device=r` skipped the call
            assert isinstance(results[r], Window)
            np.testing.assert_array_equal(results[r].local(world, r)[0], 2 * x.sum(axis=0)[0])


def test_a_fresh_dispatch_result_is_refused_on_the_other_ranks():
    source = DISPATCH.replace("data = self.publish(x[r], win=data, scale=2.0, device=r)",
                              "t = self.fresh(x[r], device=r)").replace("allreduce(data)", "allreduce(t)")
    with pytest.raises(InterpError, match=r"cannot use the result of `self.fresh\(...\)` on device 1"):
        run_host(parse_module(source), "Dispatch", "host", 2, [np.zeros((4, 1, 4), np.float32)],
                 reference_collectives=True)
    with pytest.raises(InterpError, match="`publish` is missing argument `win`"):
        run_host(parse_module(DISPATCH.replace("win=data, ", "")), "Dispatch", "host", 1,
                 [np.zeros((4, 1, 4), np.float32)], reference_collectives=True)


def test_a_rank_missing_a_reference_allreduce_times_out_with_a_message():
    source = DISPATCH.replace("        data = pld.tensor.allreduce(data)\n",
                              "        if pld.rank() == 0:\n            data = pld.tensor.allreduce(data)\n")
    with pytest.raises(InterpError, match="rank 0: <program>:27:20: timed out after 0.3s waiting for every rank to reach an allreduce"):
        run_host(parse_module(source), "Dispatch", "host", 2, [np.zeros((4, 1, 4), np.float32)], timeout=0.3,
                 reference_collectives=True)


WHILE = HEADER + """\
@pl.program
class Loops:
    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, n: pl.Scalar[pl.INT32]):
        for (k, total) in pl.while_(init_values=(0, 0)):
            pl.cond(k < n)
            k2, total2 = pl.yield_(k + 1, total + k)
        for i, (acc,) in pl.range(n, init_values=(100,)):
            acc2 = pl.yield_(acc - i)
        return total2, acc2
"""


@pytest.mark.parametrize("n, expected", [(0, (0, 100)), (1, (0, 100)), (5, (10, 90))])
def test_ssa_while_and_loop_results_after_zero_or_more_iterations(n, expected):
    assert run_host(parse_module(WHILE), "Loops", "host", 1, [n]) == [expected]


def test_module_values_tuple_annotated_and_augmented():
    module = parse_module(HEADER + "ROWS, COLS = 4, -16\nSCALE: float = 0.5\nN = ROWS * 2\nN += 1\n"
                          "BAD = 2 ** 100000\nBAD2 = 1\nBAD2 += UNKNOWN\nNAME = 'x'\n")
    assert module_constants(module) == {"ROWS": 4, "COLS": -16, "SCALE": 0.5, "N": 9, "NAME": "x"}


def test_host_parameters_take_their_defaults():
    source = HEADER + """\
@pl.program
class Defaults:
    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, a: pl.Scalar[pl.INT32], b: int = -2, *, c: int = 0o3):
        return a * b + c
"""
    assert run_host(parse_module(source), "Defaults", "host", 2, [5]) == [-7, -7]
    with pytest.raises(InterpError, match="`host` is missing argument `a`"):
        run_host(parse_module(source), "Defaults", "host", 1, [])
