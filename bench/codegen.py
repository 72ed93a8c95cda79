"""Benchmark: read + codegen + verify + write of a generated KLR kernel of N operators.

Usage: python bench/codegen.py [--ops 100000] [--repeat 3]
Two generated kernels cycle through every compute leaf: "whole tiles" (every access a whole
128x512 tile, no positions) and "sliced" (every access a 32x32 block of a 128x2048 tile at
one of 2,048 places, an immediate out of 97, a source position out of 40 lines): the second
has ~100x more distinct field texts to decode. For each, prints operators per second of
each stage and of the whole pipeline (best of --repeat), and the ratio against a peer
measured in the same run on the same documents: the stdlib json.loads of the KLR text plus
json.dumps of the BIR document (pure C parsing/printing, no IR built), i.e. the floor a
JSON-to-JSON tool written on the standard library pays. Both run with the cyclic garbage
collector paused, as `tilecc codegen` does. The read is split into its parts (`klr.json_fast`:
msgspec decodes the statement skeleton, the checked reader decodes each distinct field
text once), and the pretty write that `tilecc codegen` uses is timed too.

Where the time goes (cProfile of each stage on 20k-operator kernels, then the timings of
this benchmark): the whole-tile read is about half msgspec's skeleton decode (C) and half the loop over
statements (one payload-text lookup and one constructor call per operator) plus, for each
new payload text, its msgspec decode and the checked readers of its new field texts; codegen
is one leaf call per operator (access patterns memoized per shared access object), mostly
the leaf's own Python and the instruction dataclass's construction; the verifier checks
each instruction's operands (memoized per argument object) and its opcode rule; the writer
joins precomputed fragments per instruction. Per operator each stage costs 1-2.5 us of
Python (whole tiles, 20k operators, load ~8), the peer about 12.6 us for all of it: 0.25x
leaves ~3.2 us per operator for the four stages, while the skeleton decode alone takes
~0.85 us and constructing one instruction dataclass ~0.6 us.

Causes found and removed: the sliced read spent ~27 us per distinct access text in the
checked readers (path tracking per index): an AccessBasic of a known tensor with plain
in-range slices now takes a shortcut in `HeadReader.tensor_ref` (one shared Slice per
bounds), and raw field texts are decoded by msgspec's untyped decoder instead of json.loads
(sliced read 0.75x of its time before, whole tiles unchanged); every bias-less activation
made a new zero-bias access, checked and formatted anew (now one per partition count:
verify 0.84-0.86x, write 0.93-0.94x); before that, one `json.dumps` per instruction for the source position (now
formatted once per shared position object) and the reader's third decoding.

Tried and not kept (best-of-5 CPU times, old and new interleaved, load ~8): memoizing by
content. A key of identities (type, then `map(id, ...)` over an attrgetter tuple of the
fields, all in C) costs ~1 us per operator or instruction, as much as the verifier's whole
check of one instruction and half a codegen leaf. The whole-tile kernel has 14 distinct
operator contents in 20k, the sliced one 10,127 (its accesses and immediates vary), so the
key pays only on the first: verify with a per-content memo ran 0.98x (whole, with the
shared zero-bias access: 14 distinct keys) and 1.89x (sliced) of its time, the writer with a per-argument-list text memo 0.93x and 1.21x, with
the op-specific fields' text memoized per tuple of value ids (a hit on nearly every
instruction of both kernels) 1.01x and 1.06x: the key costs what the nine attribute reads
and table lookups it replaces cost. Building the key alone for every operator of the
whole-tile kernel takes ~1 us against ~2.1 us for its codegen, so a codegen memo would save
at most ~20% there and lose on the sliced kernel. The target needs the
per-operator work out of Python (one compiled pass from KLR text to BIR text, or stages
fused so that a repeated operator costs one lookup end to end), not more memoization
inside the separate stages.
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from typing import Callable

from tilecc.bir.json import program_to_doc, write_program_json
from tilecc.bir.verifier import verify_program
from tilecc.codegen.klr_to_bir import KlirToBirCodegen
from tilecc.klr import ast as k
from tilecc.klr.json_fast import SKELETON
from tilecc.klr.read import read_kernel_json, write_kernel_json

F32, S = k.Dtype.float32, k.Memory.sbuf
A, R = k.AluOp, k.TensorScalarReverseOps
Access = Callable[[k.TensorName, int], k.Access]
TARGET = 0.25  # the pipeline's time as a fraction of the peer's


def leaf_cycle(i: int, at: Access, x: k.TensorName, y: k.TensorName, z: k.TensorName,
               col: k.TensorName, acc: k.TensorName, pout: k.Access,
               one: k.Immediate, two: k.Immediate) -> list[k.Operator]:
    """The 12 compute leaves on accesses `at(tensor, i)` (columns: `at(col, i)`)."""
    X, Y, Z, C, AC = at(x, i), at(y, i), at(z, i), at(col, i), at(acc, i)
    return [
        k.TensorScalar(Y, X, two, A.mult, one, A.add, R.first, k.Engine.dve),
        k.TensorTensor(Z, X, Y, A.subtract, engine=k.Engine.dve),
        k.NcActivate(Y, Z, k.AccumCmd.ZeroAccumulate, k.ActivationFunc.exp, one,
                     reduce_op=A.add, reduce_res=AC),
        k.TensorReduce(C, Y, A.max, k.TensorSubDim.X),
        k.Exponential(Z, Y, C, AC, k.AccumCmd.ZeroAccumulate, k.Immediate(0.0)),
        k.TensorScalarCumulative(Y, Z, A.mult, A.add, one, None, k.AccumCmd.ZeroAccumulate),
        k.NcScalarTensorTensor(Z, Y, C, X, A.mult, A.add),
        k.TensorTensorScan(Y, Z, X, A.mult, A.add, R.none, k.Immediate(0.0), k.AccumCmd.Idle),
        k.Reciprocal(Z, Y),
        k.Activate2(Y, Z, A.mult, A.add, two, one, k.ActivationFunc.relu, k.Immediate(0.0),
                    A.add, AC, k.AccumCmd.ZeroAccumulate, False, True),
        k.TensorScalarReduce(Z, Y, one, A.add, False, None, A.add, AC),
        k.TensorPartitionReduce(pout, A.add, Y),
    ]


def whole_tiles_kernel(n_ops: int) -> k.Kernel:
    """Every access a whole tile: few distinct field texts."""
    a, out = (k.make_tensor(n, F32, (128, 512), k.Memory.hbm) for n in ("a", "out"))
    x, y, z = (k.make_tensor(n, F32, (128, 512), S) for n in ("x", "y", "z"))
    col, acc = k.make_tensor("col", F32, (128, 1), S), k.make_tensor("acc", F32, (128, 1), S)
    pout = k.make_tensor("pout", F32, (1, 512), S)
    cycle = leaf_cycle(0, lambda t, i: t, x, y, z, col, acc, pout, k.Immediate(1.0),
                       k.Immediate(2.0))
    body: list[k.Operator] = [k.NcDmaCopy(x, a)]
    body += [cycle[i % len(cycle)] for i in range(n_ops - 2)]
    body.append(k.NcDmaCopy(out, z))
    return k.Kernel("bench", [a], [out], body)


def sliced_kernel(n_ops: int) -> k.Kernel:
    """Every access a 32x32 block (partition block and column block vary with the cycle),
    immediates and source lines that vary: many distinct field texts, as a traced loop nest."""
    a, out = (k.make_tensor(n, F32, (128, 2048), k.Memory.hbm) for n in ("a", "out"))
    x, y, z = (k.make_tensor(n, F32, (128, 2048), S) for n in ("x", "y", "z"))
    col, acc = k.make_tensor("col", F32, (128, 64), S), k.make_tensor("acc", F32, (128, 64), S)
    pout = k.make_tensor("pout", F32, (1, 2048), S)

    def block(t: k.TensorName, i: int) -> k.Access:
        p, j = 32 * ((i // 64) % 4), i % 64
        width = 1 if t.shape.free_dims[0] == 64 else 32
        return k.AccessBasic(t, (k.Slice(p, p + 32), k.Slice(j * width, (j + 1) * width)))

    body: list[k.Operator] = [k.NcDmaCopy(x, a)]
    cycles = n_ops // 12 + 1
    for c in range(cycles):
        p_out = k.AccessBasic(pout, (k.Slice(0, 1), k.Slice(32 * (c % 64), 32 * (c % 64) + 32)))
        ops = leaf_cycle(c, block, x, y, z, col, acc, p_out,
                         k.Immediate(float(c % 97) * 0.5), k.Immediate(2.0))
        for j, op in enumerate(ops):
            op.pos = k.Pos(20 + (c * 12 + j) % 40, 8, filename="kernels/softmax.py")
        body += ops
    del body[n_ops - 1:]
    body.append(k.NcDmaCopy(out, z))
    return k.Kernel("bench_sliced", [a], [out], body)


def best(repeat: int, fn: Callable[[], object]) -> tuple[float, float, object]:
    """The best wall time and the best process CPU time of `repeat` runs, and a result."""
    times, cpu, result = [], [], None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        result = fn()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return min(times), min(cpu), result


def run(label: str, generated: k.Kernel, repeat: int) -> None:
    text = write_kernel_json(generated)
    n = len(generated.body)
    t_read, c_read, kernel = best(repeat, lambda: read_kernel_json(text))
    t_gen, c_gen, program = best(repeat, lambda: KlirToBirCodegen().codegen_kernel(kernel))
    t_verify, c_verify, _ = best(repeat, lambda: verify_program(program))
    t_write, c_write, bir_text = best(repeat, lambda: write_program_json(program))
    t_total, c_total = t_read + t_gen + t_verify + t_write, c_read + c_gen + c_verify + c_write
    assert kernel == generated  # the fast paths read what was written
    doc = program_to_doc(program)
    t_peer, c_peer, _ = best(repeat, lambda: (json.loads(text), json.dumps(doc)))
    t_skeleton, c_skeleton, _ = best(repeat, lambda: SKELETON.decode(text))
    t_pretty, c_pretty, _ = best(repeat, lambda: write_program_json(program, pretty=True))
    print(f"{label}: {n} operators, KLR JSON {len(text) / 1e6:.1f} MB, "
          f"BIR JSON {len(str(bir_text)) / 1e6:.1f} MB")
    print(f"{'stage':<40}{'seconds':>9}{'ops/s':>12}{'x peer time':>13}{'x peer CPU':>12}")
    rows = [("read KLR JSON", t_read, c_read),
            ("  msgspec skeleton decode", t_skeleton, c_skeleton),
            ("  field values + operators", t_read - t_skeleton, c_read - c_skeleton),
            ("codegen", t_gen, c_gen), ("verify", t_verify, c_verify),
            ("write BIR JSON", t_write, c_write),
            ("total: read+codegen+verify+write", t_total, c_total),
            ("  (pretty write, as tilecc codegen)", t_pretty, c_pretty),
            ("peer: json.loads + json.dumps", t_peer, c_peer)]
    for name, t, c in rows:
        print(f"{name:<40}{t:>9.3f}{n / t:>12,.0f}{t / t_peer:>13.2f}{c / c_peer:>12.2f}")
    print(f"target: total <= {TARGET}x the peer's time")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    gc.collect()
    gc.disable()
    run("whole tiles", whole_tiles_kernel(args.ops), args.repeat)
    print()
    run("sliced", sliced_kernel(args.ops), args.repeat)


if __name__ == "__main__":
    main()
