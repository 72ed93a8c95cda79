"""The scan step: to_apply applied along the scan dimension, one slice after another,
carrying values from each application to the next (attributes and shapes:
tilecc.hlo.op_configs.scan_config).

Contract: `scan(inputs..., inits...), dimensions={d}, num_carries=k, to_apply=f` runs, for
i = 0, 1, ..., n-1 (n-1 down to 0 with is_reverse=true),
    (outputs_i..., carries...) = f(inputs...[i along d], carries...)
starting from the inits, and gives (outputs... stacked along d, last carries...); a scan
whose result is not a tuple gives its one value. XLA CPU runs every scan this way
(ScanExpander's while loop, associative or not: measured with a non-associative combiner
marked is_associative=true, jaxlib 0.10.2). A scan of length 0 is refused: XLA's verifier
accepts it, but XLA CPU does not compile it (ScanExpander slices a step out of the empty
dimension).
"""

from __future__ import annotations

import numpy as np

from tilecc.errors import InterpError
from tilecc.hlo.interp.values import Lanes, Operands, Runner, Step, Value
from tilecc.hlo.ir import HloInstruction
from tilecc.hlo.op_configs import scan_config
from tilecc.hlo.types import numpy_dtype


def scan_step(runner: Runner, inst: HloInstruction) -> Step:
    try:
        config = scan_config(inst, allow_mixed_precision=True)
    except ValueError as err:
        raise InterpError(f"{inst.name} (scan): {err}") from None
    if config.length == 0:
        raise InterpError(f"{inst.name} (scan): a scan of length 0 (dimension "
                          f"{config.dimension}), which XLA CPU does not compile")
    comp = inst.to_apply
    assert comp is not None and comp.root is not None
    results = inst.shape.tuple_shapes if inst.shape.is_tuple else (inst.shape,)
    carries = config.num_carries
    inputs, outputs = len(inst.operands) - carries, len(results) - carries
    out_shapes = [(s.dims, numpy_dtype(s.element_type)) for s in results[:outputs]]
    several = comp.root.shape.is_tuple
    lead = (slice(None),) * (1 + config.dimension)  # the lane axis, then the dimensions before d
    order = range(config.length - 1, -1, -1) if config.is_reverse else range(config.length)

    def step(a: Operands, d: Lanes) -> Value:
        xs, carry = a[:inputs], list(a[inputs:])
        outs = [np.zeros((d.count,) + dims, dtype) for dims, dtype in out_shapes]
        for i in order:
            value = runner.run(comp, [x[lead + (i,)] for x in xs] + carry, d)
            parts = list(value) if several else [value]
            for out, part in zip(outs, parts):
                out[lead + (i,)] = part
            carry = parts[outputs:]
        result = outs + carry
        return tuple(result) if inst.shape.is_tuple else result[0]
    return step
