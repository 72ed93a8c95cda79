"""Benchmark: a 64-device SPMD HLO module on 1, 2 and 4 MPI processes (tilecc/hlo/interp_mpi.py)
against the single-process interpreter.

Usage: python bench/interp_mpi.py [--elements 262144]
The module (MODULE below) makes per-device f32[--elements] data from replica-id and iota,
runs elementwise work, an all-reduce in groups of 4 devices, a collective-permute around
the ring of all 64 devices and an all-reduce of per-device sums over all 64 devices.
For each run it prints the largest per-process peak of numpy array memory during the
evaluation (tracemalloc, which numpy reports its buffers to; the interpreter's own data,
not the Python / library baseline), the peak resident set size (ru_maxrss, baseline
included), the wall time, and whether the outputs are bit-identical to the single-process
run. Target: the 4-process peak <= 0.3x of the single process's.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tilecc.mpi_launch import mpi_environment, run_mpi  # noqa: E402

MODULE = """\
HloModule spmd64, replica_count=64

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  id = u32[] replica-id()
  idf = f32[] convert(id)
  b = f32[N] broadcast(idf), dimensions={}
  io = f32[N] iota(), iota_dimension=0
  x = f32[N] add(b, io)
  y = f32[N] multiply(x, x)
  z = f32[N] sine(y)
  w = f32[N] add(z, x)
  g = f32[N] all-reduce(w), replica_groups={GROUPS}, to_apply=add
  p = f32[N] collective-permute(g), source_target_pairs={PAIRS}
  q = f32[N] subtract(p, w)
  zero = f32[] constant(0)
  s = f32[] reduce(q, zero), dimensions={0}, to_apply=add
  total = f32[] all-reduce(s), replica_groups={}, to_apply=add
  head = f32[16] slice(q), slice={[0:16]}
  ROOT t = (f32[], f32[16]) tuple(total, head)
}
"""


def module_text(elements: int) -> str:
    groups = ",".join("{" + ",".join(str(4 * g + k) for k in range(4)) + "}" for g in range(16))
    pairs = ",".join(f"{{{d},{(d + 1) % 64}}}" for d in range(64))
    return MODULE.replace("N]", f"{elements}]").replace("GROUPS", groups).replace("PAIRS", pairs)


def digest(outputs: list[np.ndarray]) -> str:
    return hashlib.sha256(b"".join(np.ascontiguousarray(o).tobytes() for o in outputs)).hexdigest()[:16]


def worker(elements: int, use_mpi: bool) -> None:
    from tilecc.hlo.parser import parse_module
    module = parse_module(module_text(elements), "spmd64.hlo")
    tracemalloc.start()
    start = time.perf_counter()
    if use_mpi:
        from tilecc.hlo.interp_mpi import evaluate_module_mpi
        from tilecc.host.runtime.mpi_world import mpi
        comm = mpi().COMM_WORLD
        outputs = evaluate_module_mpi(module, [], 64, 1, comm)
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        gathered = comm.gather((outputs, peak, rss), root=0)
        if comm.Get_rank() != 0:
            return
        outputs = [np.concatenate([g[0][k] for g in gathered]) for k in range(len(outputs))]
        peak, rss = max(g[1] for g in gathered), max(g[2] for g in gathered)
    else:
        from tilecc.hlo.interpreter import evaluate_module
        outputs = evaluate_module(module, [], 64, 1)
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"peak": peak, "rss": rss, "seconds": seconds, "digest": digest(outputs)}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--elements", type=int, default=262144)
    parser.add_argument("--worker", choices=["single", "mpi"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.elements, args.worker == "mpi")
        return
    argv = [sys.executable, __file__, "--elements", str(args.elements)]
    single = subprocess.run([*argv, "--worker", "single"], capture_output=True, text=True, timeout=900,
                            env=mpi_environment())
    if single.returncode != 0:
        raise SystemExit(single.stderr[-500:])
    base = json.loads(single.stdout)
    print(f"64 devices x f32[{args.elements}]: single process peak arrays {base['peak'] / 2**20:.0f} MiB, "
          f"RSS {base['rss'] / 2**20:.0f} MiB, {base['seconds']:.2f} s")
    for processes in (1, 2, 4):
        result = run_mpi(processes, [*argv, "--worker", "mpi"], 900)
        if result.returncode != 0:
            raise SystemExit(result.stderr[-500:])
        run = json.loads(result.stdout)
        same = "bit-identical" if run["digest"] == base["digest"] else "DIFFERENT"
        print(f"  {processes} MPI processes: peak arrays per process {run['peak'] / 2**20:.0f} MiB "
              f"({run['peak'] / base['peak']:.2f}x), RSS {run['rss'] / 2**20:.0f} MiB, "
              f"{run['seconds']:.2f} s, outputs {same}")


if __name__ == "__main__":
    main()
