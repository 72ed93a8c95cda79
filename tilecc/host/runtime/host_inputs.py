"""The host arguments of a `tilecc host-run`: given ones, else seeded values built from the
parameter annotations.

Contract: `host_arguments(module, func, given, dims, seed)` returns one value per
parameter of `func`, in order. `given` maps a parameter name to an array or an int;
a tensor parameter without one gets an array of its annotated shape and dtype (shapes
are folded from module constants and `dims`, the values of `pl.dynamic` dimensions):
zeros for `pl.Out[...]`, seeded random values otherwise (floats: small integers, so
sums are exact in any order; integers: -100..100). A scalar parameter must be given.
The same (module, given, dims, seed) gives the same arguments on every process, which
is what lets every MPI rank build its copy of host memory independently. Errors are
TileccError lines naming the parameter.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from tilecc.errors import TileccError
from tilecc.host import ir
from tilecc.host.constants import fold_int
from tilecc.host.runtime.dtypes import DTYPES
from tilecc.host.runtime.module_values import module_constants
from tilecc.host.runtime.signatures import DynamicDim, param_type


def host_arguments(module: ir.Module, func: ir.Function, given: Mapping[str, Any],
                   dims: Mapping[str, int], seed: int) -> list[Any]:
    unknown = sorted(set(given) - {p.name for p in func.params})
    if unknown:
        raise TileccError(f"--input {unknown[0]}: `{func.name}` has no parameter of that name "
                          f"(parameters: {', '.join(p.name for p in func.params) or 'none'})")
    constants = {k: v for k, v in module_constants(module).items() if type(v) is int}
    dynamic = {k for k, v in module_constants(module).items() if isinstance(v, DynamicDim)}
    rng = np.random.default_rng(seed)
    args: list[Any] = []
    for param in func.params:
        if param.name in given:
            args.append(given[param.name])
            continue
        ptype = param_type(param.annotation)
        if ptype is None or ptype.kind != "tensor":
            raise TileccError(f"parameter `{param.name}` of `{func.name}` needs a value: give --input "
                              f"{param.name}=FILE.npy or {param.name}=INT")
        shape = []
        for dim in ptype.dims:
            if isinstance(dim, ir.Var) and dim.name in dynamic and dim.name not in dims:
                raise TileccError(f"parameter `{param.name}`: dimension {dim.name} is pl.dynamic; give "
                                  f"--dim {dim.name}=VALUE")
            value = fold_int(dim, {**constants, **dims}, set())
            if value is None or value < 0:
                raise TileccError(f"parameter `{param.name}`: cannot size dimension {dim!r} from module constants")
            shape.append(value)
        dtype = np.dtype(DTYPES.get(ptype.dtype, np.float32))
        if ptype.direction == "Out":
            args.append(np.zeros(shape, dtype))
        else:
            args.append(rng.integers(-100, 101, size=shape).astype(dtype))
    return args
