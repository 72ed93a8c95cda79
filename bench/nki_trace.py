"""Benchmark: the NKI frontend on the bundled example kernels, stage by stage.

Usage: python bench/nki_trace.py [--repeat 5] [--corpus]
For each kernel in examples/kernels (and with --corpus the kernels of tests/nki/corpus,
SPMD grids included): time to trace the Python kernel to KLR, to lower and verify it
(KLR -> BIR), to simulate the BIR, and, as the peer measured in the same run on the same
traced kernel, the KLR reference interpreter (tilecc.klr.interp, written
independently). Best of --repeat, milliseconds; the last column is simulate / interpreter.
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from tilecc.bir.verifier import verify_program
from tilecc.codegen.klr_to_bir import codegen_kernel
from tilecc.klr.interp import interpret_kernel
from tilecc.nki.driver import trace_kernel
from tilecc.nki.dtypes import canonical_dtype, dtype_info
from tilecc.sim.execute import simulate

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "kernels"
CORPUS = Path(__file__).resolve().parents[1] / "tests" / "nki" / "corpus"


def best_ms(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1000.0 * min(times)


def load(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--corpus", action="store_true", help="also the kernels of tests/nki/corpus")
    args = parser.parse_args()
    print(f"{'kernel':<36}{'stmts':>6}{'trace ms':>10}{'lower ms':>10}{'sim ms':>9}"
          f"{'interp ms':>11}{'sim/interp':>12}")
    paths = sorted(EXAMPLES.glob("*.py")) + (sorted(CORPUS.glob("*.py")) if args.corpus else [])
    for path in paths:
        example = load(path)
        inputs = example.make_inputs(np.random.default_rng(0))
        traced = trace_kernel(example.KERNEL, *inputs)
        kernel = traced.kernel
        program = codegen_kernel(kernel)
        bound = inspect.signature(getattr(example.KERNEL, "fn", example.KERNEL)).bind(*inputs).arguments
        arrays = {t.name: np.asarray(bound[t.name],
                                     dtype=dtype_info(canonical_dtype(bound[t.name].dtype)).numpy)
                  .reshape((t.shape.par_dim, *t.shape.free_dims)) for t in kernel.inputs}
        t_trace = best_ms(lambda: trace_kernel(example.KERNEL, *inputs), args.repeat)
        t_lower = best_ms(lambda: verify_program(codegen_kernel(kernel)), args.repeat)
        t_sim = best_ms(lambda: simulate(program, arrays), args.repeat)
        t_interp = best_ms(lambda: interpret_kernel(kernel, arrays), args.repeat)
        print(f"{path.stem:<36}{len(kernel.body):>6}{t_trace:>10.2f}{t_lower:>10.2f}{t_sim:>9.2f}"
              f"{t_interp:>11.2f}{t_sim / t_interp:>12.2f}")


if __name__ == "__main__":
    main()
