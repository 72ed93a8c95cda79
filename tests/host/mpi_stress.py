"""Stress driver (run by tests/host/test_mpi.py and bench/host_mpi.py, not collected by pytest).

`python mpi_stress.py ITERATIONS JITTER [RANKS | direct | get]`: runs STRESS below after
SynthesizeAllReduceSignals; under mpiexec every process is a rank (MPI backend; `get`
makes it read peers by MPI_Get instead of loads from their shared-memory segments),
otherwise RANKS threads. Each iteration: every rank adds r + 1 to `a`, then a Max and a Min
allreduce back to back on a's signal; every rank adds 1 to `b` (another buffer and lineage)
and a 3-lane Min allreduce; every rank sets `c` to r + 1 and a ring allreduce on an
explicit [2 * (NR - 1), NR] signal sums it. Ranks are delayed at random before notifies
(JITTER seconds at most). Checks on every rank: a == ITERATIONS * world size,
b == ITERATIONS, c == NR * (NR + 1) / 2 exactly, and every signal cell zero at the
end. Prints `stress ok: ...` (rank 0) and exits 0, or prints the failure and exits 1.
"""

from __future__ import annotations

import os
import sys

import numpy as np

from tilecc.host.parser import parse_module
from tilecc.host.passes.synthesize_allreduce_signals import SynthesizeAllReduceSignals

STRESS = """\
import pypto.language as pl
import pypto.language.distributed as pld

N = 48


@pl.program
class Stress:
    @pl.function(type=pl.FunctionType.Orchestration)
    def bump(self, data: pld.DistributedTensor[[N], pl.FP32], amount: pl.Scalar[pl.INT32]):
        return pl.store(pl.add(pl.load(data, [0], [N]), amount), [0], data)

    @pl.function(type=pl.FunctionType.Orchestration)
    def fill(self, data: pld.DistributedTensor[[N], pl.FP32], value: pl.Scalar[pl.INT32]):
        return pl.store(pl.tile.full([N], dtype=pl.FP32, value=value), [0], data)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, iterations: pl.Scalar[pl.INT32]):
        a_buf = pld.alloc_window_buffer(N * pl.FP32.get_byte())
        b_buf = pld.alloc_window_buffer(N * pl.FP32.get_byte())
        c_buf = pld.alloc_window_buffer(N * pl.FP32.get_byte())
        ring_buf = pld.alloc_window_buffer(2 * (pld.world_size() - 1) * pld.world_size() * pl.INT32.get_byte())
        a = pld.window(a_buf, [N], dtype=pl.FP32)
        b = pld.window(b_buf, [N], dtype=pl.FP32)
        c = pld.window(c_buf, [N], dtype=pl.FP32)
        ring = pld.window(ring_buf, [2 * (pld.world_size() - 1), pld.world_size()], dtype=pl.INT32)
        for i in pl.range(iterations):
            for r in pl.range(pld.world_size()):
                self.bump(a, r + 1, device=r)
                self.bump(b, 1, device=r)
                self.fill(c, r + 1, device=r)
            a = pld.tensor.allreduce(a, op=pld.ReduceOp.Max)
            a = pld.tensor.allreduce(a, op=pld.ReduceOp.Min)
            b = pld.tensor.allreduce(b, op=pld.ReduceOp.Min, core_num=3)
            if pld.world_size() > 1:
                c = pld.tensor.allreduce(c, ring, op=pld.ReduceOp.Sum, mode="ring")
        return a
"""
SIGNALS = ("__allreduce_signal_buf_", "ring_buf")


def check_rank(world, rank: int, iterations: int) -> str | None:
    n = world.world_size
    expected = {"a_buf": iterations * n, "b_buf": iterations, "c_buf": n * (n + 1) // 2}
    for name, value in expected.items():
        data = world.buffer_by_name(name, rank).view(np.float32)
        if not (data == value).all():
            return f"rank {rank}: {name} holds {sorted(set(data.tolist()))[:4]}, expected {value}"
    for name in world.buffer_names():
        if name.startswith(SIGNALS) and world.buffer_by_name(name, rank).view(np.int32).any():
            return f"rank {rank}: signal {name} is not all zero: {world.buffer_by_name(name, rank).view(np.int32)}"
    return None


def main(argv: list[str]) -> int:
    iterations, jitter = int(argv[0]), float(argv[1])
    module = SynthesizeAllReduceSignals().run_module(parse_module(STRESS, "stress.py"))
    if any(v in os.environ for v in ("PMI_RANK", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK")):
        from tilecc.host.runtime.mpi_run import run_host_mpi
        from tilecc.host.runtime.mpi_world import MpiWorld
        world = MpiWorld(timeout=60, jitter=jitter, direct_reads=argv[2:3] != ["get"])
        outcome = run_host_mpi(module, "Stress", "host_orch", [iterations], world=world)
        problem = str(outcome.error) if outcome.error else check_rank(world, world.rank, iterations)
        problems = world.comm.gather(problem, root=0)
        ranks, rank = world.world_size, world.rank
        world.free()
        if rank != 0:
            return 0
    else:
        from tilecc.host.runtime.interpreter import run_host
        from tilecc.host.runtime.world import World
        ranks, rank = int(argv[2]), 0
        world = World(ranks, timeout=60, jitter=jitter)
        run_host(module, "Stress", "host_orch", ranks, [iterations], world=world)
        problems = [check_rank(world, r, iterations) for r in range(ranks)]
    if (first := next((p for p in problems if p), None)) is not None:
        print(f"stress failed: {first}")
        return 1
    print(f"stress ok: {ranks} ranks, {iterations} iterations, {iterations * 4} allreduces")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
