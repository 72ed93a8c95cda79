"""`nki.benchmark` and `nki.profile` without a device: the simulated profile's estimates.

NKI pages: nki.benchmark (https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/api/
generated/nki.benchmark.html) runs a kernel on a NeuronDevice in a loop (`warmup`, `iters`)
and leaves `kernel.benchmark_result.nc_latency.get_latency_percentile(p)` in microseconds;
nki.profile (.../generated/nki.profile.html) writes a NEFF and an execution trace (NTFF)
into its `working_directory`.

Contract here: calling a `benchmark(...)` kernel simulates it (its outputs are returned as
`simulate` returns them), schedules the BIR program (tilecc/sim/profile.py) and sets
`benchmark_result.nc_latency` to that estimated latency: the model is deterministic, so
every percentile is the same number; warmup / iters are accepted and change nothing. A
`profile(...)` kernel writes the estimated timeline as a Chrome / Perfetto trace,
`<working_directory>/<save_trace_name stem>.json` (default profile.json; no NEFF is made),
and returns the outputs. Both print one line saying the figures are ESTIMATES from the
documented cost model, not hardware measurements.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tilecc.errors import TileccError
from tilecc.nki.driver import JitKernel, lower_traced, run_kernel
from tilecc.sim.profile import ESTIMATE_NOTE, cycles_to_us, schedule, total_cycles, write_chrome_trace

__all__ = ["benchmark", "profile", "BenchmarkKernel", "ProfileKernel", "LatencyEstimate", "BenchmarkResult"]


@dataclass(frozen=True, slots=True)
class LatencyEstimate:
    """`nc_latency`: the estimated latency of one run, in microseconds."""
    usec: float

    def get_latency_percentile(self, percentile: float) -> float:
        """The p-th percentile in microseconds: the one deterministic estimate for every p."""
        if isinstance(percentile, bool) or not isinstance(percentile, (int, float)) or \
                not 0 <= percentile <= 100:
            raise TileccError(f"get_latency_percentile({percentile!r}): a percentile is 0..100")
        return self.usec


@dataclass(frozen=True, slots=True)
class BenchmarkResult:
    """`kernel.benchmark_result` after a call; `note` says what the figure is."""
    nc_latency: LatencyEstimate
    note: str = ESTIMATE_NOTE


class BenchmarkKernel(JitKernel):
    """A kernel decorated with nki.benchmark: each call leaves `benchmark_result`."""

    def __init__(self, fn: Callable[..., Any], options: dict[str, object]) -> None:
        super().__init__(fn)
        self.options = options
        self.benchmark_result: BenchmarkResult | None = None

    def __call__(self, *args: object, **kwargs: object) -> Any:
        result, traced = run_kernel(self, args, kwargs)
        cycles = total_cycles(schedule(lower_traced(traced)))
        self.benchmark_result = BenchmarkResult(LatencyEstimate(cycles_to_us(cycles)))
        print(f"nki.benchmark {self.__name__}: {cycles_to_us(cycles):.3f} usec ({cycles:.0f} "
              f"engine cycles), {ESTIMATE_NOTE}")
        return result


class ProfileKernel(JitKernel):
    """A kernel decorated with nki.profile: each call writes the estimated trace."""

    def __init__(self, fn: Callable[..., Any], working_directory: str | os.PathLike[str],
                 trace_name: str) -> None:
        super().__init__(fn)
        self.working_directory = Path(working_directory)
        self.trace_path = self.working_directory / (Path(trace_name).stem + ".json")

    def __call__(self, *args: object, **kwargs: object) -> Any:
        result, traced = run_kernel(self, args, kwargs)
        self.working_directory.mkdir(parents=True, exist_ok=True)
        write_chrome_trace(schedule(lower_traced(traced)), str(self.trace_path))
        print(f"nki.profile {self.__name__}: wrote {self.trace_path} (a Chrome / Perfetto trace; "
              f"{ESTIMATE_NOTE})")
        return result


def benchmark(kernel: Callable[..., Any] | None = None, **options: object) -> Any:
    """`@nki.benchmark(warmup=5, iters=10)` or `nki.benchmark(kernel)`: a BenchmarkKernel."""
    def wrap(inner: Callable[..., Any]) -> BenchmarkKernel:
        return BenchmarkKernel(getattr(inner, "fn", inner), options)
    return wrap if kernel is None else wrap(kernel)


def profile(kernel: Callable[..., Any] | None = None, working_directory: str | os.PathLike[str] = ".",
            save_trace_name: str = "profile.ntff", **options: object) -> Any:
    """`@nki.profile(working_directory=..., save_trace_name=...)`: a ProfileKernel."""
    def wrap(inner: Callable[..., Any]) -> ProfileKernel:
        return ProfileKernel(getattr(inner, "fn", inner), working_directory, save_trace_name)
    return wrap if kernel is None else wrap(kernel)
