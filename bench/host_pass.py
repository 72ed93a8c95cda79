"""Benchmark: parse + SynthesizeAllReduceSignals + print of a generated host function.

Sizes: 1k and 10k statements, one allreduce per 10 statements, over n/100 window buffers
(10k statements -> 1k allreduces over 100 buffers). Prints the cost per statement at each
size, the 10k/1k per-statement ratio (linear scaling means ~1.0), and the ratio against a
peer measured in the same run on the same source: CPython's own ast.parse + ast.unparse
(our pipeline uses ast.parse too, so the ratio is the cost of the IR, the pass and the printer).
Target: <= 1.5x the peer.
The last column is our pipeline on the same program with a comment on every statement
(comments are found in the text and kept through the pass).

Run: .venv/bin/python bench/host_pass.py [--repeat N]   (best of N interleaved runs, wall
and CPU time; on the shared machine the CPU ratio is the steadier figure)

Where the time went (cProfile, 10k statements; profiled seconds, so Python code weighs
more than C here). A first round: 19.5 s -> 9.1 s, by skipping nesting.check_depth's walk
of one-line statements shorter than the bound, walking the tree for `pl.program(Cls)`
calls only when the text has one, looking sub-expressions up by type, and one name walk
in the pass instead of three. Of the 9.1 s left (1.6-1.8x the peer on a quiet machine):
- printing 4.1 s: the IR was rebuilt as a Python ast (1.1 s) for ast.unparse (2.8 s, the
  peer's own printer, so our print alone cost as much as the peer's print). The printer
  now writes ast.unparse's text straight from the IR (print_expr.py has its precedence
  rules; tests/host/test_printer_reference.py holds the two equal on every fixture): 0.17 s.
- the walks: pypto's parse-time checks walked every expression of the IR (0.6 s) and the
  pass's name collection walked them all again (0.6 s), then its local names walked the
  statements once more (0.2 s). One walk per function (function_index.py) now serves all
  three and is kept on the function: 0.5 s.
- building the IR from the ast, 1.5 s: an isinstance chain per expression node; now one
  lookup of a table by ast type (parse_expr._EXPR_FORMS): 1.0 s.
Why a commented program cost twice as much (1342 ms against 625 ms at 10k): not inherent.
Comments were found with the pure-Python tokenizer (1.4 s profiled), and the printer
carried each one through ast.unparse as a marker string that `restore` read back with
ast.literal_eval, i.e. one ast.parse per comment (0.5 s, 10k calls). Comments are now found
by one regular expression over the text (comments.py; tokenize from Python 3.12, where it is
C and f-strings may nest quotes) and printed as lines: 0.14 s. What remains (1.15-1.2x the
uncommented program) is inherent: 10k more statements (Comment nodes) to build, carry
through the pass and print.
After, at 10k statements: 3.4 s profiled, of which compile (the peer's ast.parse too)
0.6 s, IR building 1.0 s, the index walk 0.5 s, the pass 0.9 s, printing 0.2 s; the peer's
ast.unparse alone is slower than our whole print. Measured against the code before
(separate processes, interleaved, load average 13-14, best CPU time of 5): 1.82-1.92x ->
0.97-1.04x at 1k and 10k statements; commented 10k: 1231-1543 ms -> 450 ms.
"""

from __future__ import annotations

import argparse
import ast
import gc
import time

from tilecc.host.parser import parse_module
from tilecc.host.passes import build_pipeline
from tilecc.host.printer import print_module

# the driver every command uses, without its print -> parse check (host-opt's extra cost)
PIPELINE = build_pipeline(["synthesize-allreduce-signals"], verify=False)


def generate(statements: int, comments: bool = False) -> str:
    buffers = max(1, statements // 100)
    lines = ["import pypto.language as pl", "import pypto.language.distributed as pld", "", "",
             "@pl.program", "class Bench:",
             "    @pl.function(type=pl.FunctionType.Orchestration)",
             "    def chip(self, x: pld.DistributedTensor[[256], pl.FP32]):",
             "        return x", "",
             "    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)",
             "    def host_orch(self, scale: pl.Scalar[pl.INT32]):"]
    body: list[str] = []
    for b in range(buffers):
        body.append(f"buf_{b} = pld.alloc_window_buffer(256 * pl.FP32.get_byte())")
        body.append(f"data_{b} = pld.window(buf_{b}, [256], dtype=pl.FP32)")
    i = 0
    while len(body) < statements:
        b = (i // 10) % buffers
        if i % 10 == 0:
            body.append(f"data_{b} = pld.tensor.allreduce(data_{b}, op=pld.ReduceOp.Sum, core_num={1 + i % 4})")
        elif i % 10 == 5:
            body.append(f"self.chip(data_{b}, device={i % 8})")
        else:
            body.append(f"t_{i} = (scale + {i}) * 2 % {7 + b}")
        i += 1
    suffix = "  # why" if comments else ""
    lines.extend("        " + line + suffix for line in body[:statements])
    lines.append("        return scale")
    return "\n".join(lines) + "\n"


def best_of(repeat: int, fn) -> tuple[float, float]:
    """Best wall time and best CPU time (time.process_time) of `repeat` runs with the cyclic
    GC paused, as timeit does; on a loaded machine the CPU time is the steadier figure."""
    best_wall = best_cpu = float("inf")
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeat):
            wall, cpu = time.perf_counter(), time.process_time()
            fn()
            best_cpu = min(best_cpu, time.process_time() - cpu)
            best_wall = min(best_wall, time.perf_counter() - wall)
    finally:
        gc.enable()
    return best_wall, best_cpu


def ours(source: str) -> str:
    module = PIPELINE.run(parse_module(source, "<bench>"))
    return print_module(module)


def peer(source: str) -> str:
    return ast.unparse(ast.parse(source))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rows = []
    for n in (1_000, 10_000):
        source = generate(n)
        commented = generate(n, comments=True)
        assert ours(source).count("pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_") == n // 100
        assert ours(commented).count("  # why") == n
        # one run of each in turn, `repeat` times: a burst of load hits all three alike
        best = [(float("inf"), float("inf"))] * 3
        for _ in range(args.repeat):
            runs = (best_of(1, lambda: ours(source)), best_of(1, lambda: peer(source)),
                    best_of(1, lambda: ours(commented)))
            best = [(min(a[0], b[0]), min(a[1], b[1])) for a, b in zip(best, runs)]
        rows.append((n, *best))
    print(f"{'statements':>10} {'tilecc (ms)':>12} {'us/stmt':>8} {'ast peer (ms)':>14} {'us/stmt':>8} "
          f"{'tilecc/peer':>12} {'CPU ratio':>10} {'commented (ms)':>15}")
    for n, (t_ours, c_ours), (t_peer, c_peer), (t_commented, _) in rows:
        print(f"{n:>10} {t_ours * 1e3:>12.1f} {t_ours / n * 1e6:>8.2f} {t_peer * 1e3:>14.1f} "
              f"{t_peer / n * 1e6:>8.2f} {t_ours / t_peer:>11.2f}x {c_ours / c_peer:>9.2f}x "
              f"{t_commented * 1e3:>15.1f}")
    (n1, (a1, _), (p1, _), _), (n2, (a2, _), (p2, _), _) = rows
    print(f"per-statement cost 10k/1k: tilecc {(a2 / n2) / (a1 / n1):.2f}x, "
          f"ast peer {(p2 / n2) / (p1 / n1):.2f}x (1.00 = linear)")


if __name__ == "__main__":
    main()
