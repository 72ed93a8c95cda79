"""Benchmark: read + codegen + verify + write of a generated KLR kernel of N operators.

Usage: python bench/codegen.py [--ops 100000] [--repeat 3]
Prints operators per second of each stage and of the whole pipeline (best of --repeat),
and the ratio against a peer measured in the same run on the same documents: the stdlib
json.loads of the KLR text plus json.dumps of the BIR document (pure C parsing/printing,
no IR built), i.e. the floor any JSON-to-JSON tool pays. Both run with the cyclic garbage
collector paused, as `tilecc codegen` does. A second table splits the read into its parts.
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
from tilecc.klr.json_text import share_tensor_texts
from tilecc.klr.read import decode_kernel, read_kernel_json, write_kernel_json


def generated_kernel(n_ops: int) -> k.Kernel:
    """A kernel cycling through every compute leaf on a few 128x512 tiles."""
    F32, S = k.Dtype.float32, k.Memory.sbuf
    a, out = (k.make_tensor(n, F32, (128, 512), k.Memory.hbm) for n in ("a", "out"))
    x, y, z = (k.make_tensor(n, F32, (128, 512), S) for n in ("x", "y", "z"))
    col, acc = k.make_tensor("col", F32, (128, 1), S), k.make_tensor("acc", F32, (128, 1), S)
    pout = k.make_tensor("pout", F32, (1, 512), S)
    one, two = k.Immediate(1.0), k.Immediate(2.0)
    A, R = k.AluOp, k.TensorScalarReverseOps
    cycle: list[k.Operator] = [
        k.TensorScalar(y, x, two, A.mult, one, A.add, R.first, k.Engine.dve),
        k.TensorTensor(z, x, y, A.subtract, engine=k.Engine.dve),
        k.NcActivate(y, z, k.AccumCmd.ZeroAccumulate, k.ActivationFunc.exp, one,
                     reduce_op=A.add, reduce_res=acc),
        k.TensorReduce(col, y, A.max, k.TensorSubDim.X),
        k.Exponential(z, y, col, acc, k.AccumCmd.ZeroAccumulate, k.Immediate(0.0)),
        k.TensorScalarCumulative(y, z, A.mult, A.add, one, None, k.AccumCmd.ZeroAccumulate),
        k.NcScalarTensorTensor(z, y, col, x, A.mult, A.add),
        k.TensorTensorScan(y, z, x, A.mult, A.add, R.none, k.Immediate(0.0), k.AccumCmd.Idle),
        k.Reciprocal(z, y),
        k.Activate2(y, z, A.mult, A.add, two, one, k.ActivationFunc.relu, k.Immediate(0.0),
                    A.add, acc, k.AccumCmd.ZeroAccumulate, False, True),
        k.TensorScalarReduce(z, y, one, A.add, False, None, A.add, acc),
        k.TensorPartitionReduce(pout, A.add, y),
    ]
    body: list[k.Operator] = [k.NcDmaCopy(x, a)]
    body += [cycle[i % len(cycle)] for i in range(n_ops - 2)]
    body.append(k.NcDmaCopy(out, z))
    return k.Kernel("bench", [a], [out], body)


def best(repeat: int, fn: Callable[[], object]) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    generated = generated_kernel(args.ops)
    text = write_kernel_json(generated)
    gc.collect()
    gc.disable()
    t_read, kernel = best(args.repeat, lambda: read_kernel_json(text))
    t_gen, program = best(args.repeat, lambda: KlirToBirCodegen().codegen_kernel(kernel))
    t_verify, _ = best(args.repeat, lambda: verify_program(program))
    t_write, bir_text = best(args.repeat, lambda: write_program_json(program))
    t_total = t_read + t_gen + t_verify + t_write
    assert kernel == generated  # the fast paths read what was written
    doc = program_to_doc(program)
    t_peer, _ = best(args.repeat, lambda: (json.loads(text), json.dumps(doc)))
    n = args.ops
    print(f"generated kernel: {n} operators, KLR JSON {len(text) / 1e6:.1f} MB, "
          f"BIR JSON {len(str(bir_text)) / 1e6:.1f} MB")
    print(f"{'stage':<34}{'seconds':>10}{'ops/s':>14}{'x peer time':>14}")
    rows = [("read KLR JSON", t_read), ("codegen", t_gen), ("verify", t_verify),
            ("write BIR JSON", t_write), ("total: read+codegen+verify+write", t_total),
            ("peer: json.loads + json.dumps", t_peer)]
    for label, t in rows:
        print(f"{label:<34}{t:>10.3f}{n / t:>14,.0f}{t / t_peer:>14.2f}")
    # where the read goes: the text pass sharing tensor definitions, the C JSON parse of
    # what remains, and building the AST (the rest of "read" is freeing the parsed tree)
    shared = share_tensor_texts(text)
    assert shared is not None
    t_share, _ = best(args.repeat, lambda: share_tensor_texts(text))
    t_parse, doc_shared = best(args.repeat, lambda: json.loads(shared[0]))
    t_decode, _ = best(args.repeat, lambda: decode_kernel(doc_shared, shared[1]))
    t_loads, _ = best(args.repeat, lambda: json.loads(text))
    print(f"read, in parts ({len(shared[0]) / 1e6:.1f} MB after sharing "
          f"{len(shared[1])} tensor definitions):")
    for label, t in (("  share tensor definitions", t_share),
                     ("  json.loads of the shared text", t_parse),
                     ("  decode to klr.ast", t_decode),
                     ("  (json.loads of the whole text)", t_loads)):
        print(f"{label:<34}{t:>10.3f}{n / t:>14,.0f}{t / t_peer:>14.2f}")


if __name__ == "__main__":
    main()
