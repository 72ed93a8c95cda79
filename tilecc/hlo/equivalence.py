"""Before / after equivalence of two HLO modules on the same seeded inputs.

Contract:
- `check_equivalence(before, after, replicas, seed, oracle, given, out)` runs both modules
  on replicas x before.num_partitions devices with `random_inputs(before, ...)` (each
  dtype's full range and extremes), parameter numbers in `given` replaced by those arrays,
  on the interpreter (`oracle="interpreter"`, the modules themselves, no text round trip)
  or on XLA's CPU backend (`oracle="xla"`, their printed texts). It writes one line per
  output to `out` ("equal" or "mismatch ..." naming the first differing index) and returns
  True iff every output is equal. Neither module is changed.
- `compare_outputs(x, y)` is that per-output verdict: integers and bools bit-exact, floats
  and complexes equal as wide values with NaN equal to NaN, dtype and shape included.
- `default_replicas(module)`: the module's replica_count when its header fixes the device
  count, else DEFAULT_REPLICAS.
- TileccError when an oracle cannot run a module (XLA refuses a scheduled module, a module
  lowered before SPMD partitioning, ...), with what to run instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

import numpy as np

from tilecc.errors import TileccError
from tilecc.hlo.ir import HloModule

DEFAULT_REPLICAS = 4


def default_replicas(module: HloModule) -> int:
    """The module's replica_count when its header fixes the device count (replica_count or
    num_partitions written), else DEFAULT_REPLICAS."""
    if "replica_count" in module.header_order or "num_partitions" in module.header_order:
        return module.replica_count
    return DEFAULT_REPLICAS


def check_equivalence(before: HloModule, after: HloModule, replicas: int, seed: int,
                      oracle: str, given: dict[int, np.ndarray], out: TextIO) -> bool:
    """Run both modules on the same inputs and report per output; see the module contract."""
    from tilecc.hlo.random_inputs import random_inputs
    from tilecc.hlo.run_limits import check_run_sizes

    partitions = before.num_partitions
    check_run_sizes(before, replicas * partitions)
    inputs = random_inputs(before, replicas, seed, partitions)
    for number, array in given.items():
        inputs[number] = array
    if oracle == "xla":
        outs_before, outs_after = _run_on_xla(before, after, inputs, replicas, partitions)
    else:
        from tilecc.hlo.interpreter import evaluate_module
        outs_before = evaluate_module(before, inputs, replicas, partitions)
        outs_after = evaluate_module(after, inputs, replicas, partitions)
    print(f"verify on {oracle}: {replicas} replica(s) x {partitions} partition(s), seed {seed}",
          file=out)
    return report_outputs(outs_before, outs_after, compare_outputs, out)


def report_outputs(outs_before: list[np.ndarray], outs_after: list[np.ndarray],
                   compare: Callable[[np.ndarray, np.ndarray], str], out: TextIO) -> bool:
    """The verdict lines of a before / after run (one per output, by `compare`); True when
    every output is equal. Shared by the single-process and the MPI check."""
    if len(outs_before) != len(outs_after):
        print(f"verify: {len(outs_before)} outputs before, {len(outs_after)} after", file=out)
        return False
    ok = True
    for k, (x, y) in enumerate(zip(outs_before, outs_after)):
        report = compare(x, y)
        print(f"  output {k}: {report}", file=out)
        ok = ok and report == "equal"
    return ok


def _run_on_xla(before: HloModule, after: HloModule, inputs: list[np.ndarray], replicas: int,
                partitions: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    from tilecc.hlo.interp.custom_calls import is_identity_custom_call, refusal_hint
    from tilecc.hlo.printer import print_module
    from tilecc.hlo.xla import XlaJob, run_many_on_xla

    for comp in before.computations:
        for inst in comp.instructions:
            if not is_identity_custom_call(inst) and \
                    "sharding marker" in (hint := refusal_hint(inst)):
                raise TileccError(f"verify on xla: {inst.name}: XLA CPU cannot run this "
                                  f"module{hint}")
    results = run_many_on_xla([
        XlaJob("run", print_module(before), inputs, replicas, partitions),
        XlaJob("run", print_module(after), inputs, replicas, partitions)])
    for result in results:
        if isinstance(result, TileccError):
            if before.header_attributes.get("is_scheduled") == "true":
                raise TileccError(f"{result} (the module is scheduled, XLA's "
                                  "post-optimization form, which XLA does not compile "
                                  "again; verify a dump from before optimization, or "
                                  "use --oracle=interpreter)") from None
            raise result
    outs_before, outs_after = results
    assert isinstance(outs_before, list) and isinstance(outs_after, list)
    return outs_before, outs_after


def compare_outputs(before: np.ndarray, after: np.ndarray, first_device: int = 0) -> str:
    """'equal', or 'mismatch ...' naming the first differing index (axis 0 = device, the
    arrays' row 0 being device `first_device`)."""
    if before.dtype != after.dtype or before.shape != after.shape:
        return (f"mismatch: {before.dtype}{list(before.shape)} before, "
                f"{after.dtype}{list(after.shape)} after")
    if before.dtype.kind in "iub":
        same = before == after
    else:  # floats (ml_dtypes ones too): NaN equals NaN, compared as wide values
        wide = np.complex128 if before.dtype.kind == "c" else np.float64
        x, y = before.astype(wide), after.astype(wide)
        same = (x == y) | (np.isnan(x) & np.isnan(y))
    if bool(np.all(same)):
        return "equal"
    index = tuple(int(i) for i in np.argwhere(~same)[0])
    return (f"mismatch at device {first_device + index[0]}, index {list(index[1:])}: "
            f"before {before[index]!r}, after {after[index]!r}")
