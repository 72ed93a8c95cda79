"""Executing a module before and after passes, on the interpreter or on XLA, on hard values.

Contract: `extreme_inputs(module, devices, seed)` gives one array per entry parameter with a
leading device axis, drawn so that sums and products overflow: for integer types about half
of the values are the type's extremes (min, min+1, max-1, max, 0, -1), the rest uniform
over the full range; PRED is uniform. `assert_same_outputs` compares exactly (NaN == NaN).
"""

from __future__ import annotations

import numpy as np

from tilecc.hlo.ir import HloModule
from tilecc.hlo.types import numpy_dtype


def extreme_inputs(module: HloModule, devices: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    assert module.entry is not None
    for param in module.entry.parameters:
        dtype = numpy_dtype(param.shape.element_type)
        shape = (devices, *param.shape.dims)
        if dtype == np.bool_:
            out.append(rng.integers(0, 2, size=shape).astype(np.bool_))
        elif dtype.kind in "iu":
            info = np.iinfo(dtype)
            uniform = rng.integers(int(info.min), int(info.max), size=shape, dtype=dtype,
                                   endpoint=True)
            corners = np.array(sorted({int(info.min), int(info.min) + 1, int(info.max) - 1,
                                       int(info.max), 0, -1 if info.min < 0 else 1}), dtype=dtype)
            pick = rng.integers(0, len(corners), size=shape)
            out.append(np.where(rng.random(shape) < 0.5, corners[pick], uniform).astype(dtype))
        else:
            values = rng.standard_normal(shape) * 1e3
            values.flat[:: 7] = np.inf
            out.append(values.astype(dtype))
    return out


def assert_same_outputs(before: list[np.ndarray], after: list[np.ndarray], what: str) -> None:
    assert len(before) == len(after), f"{what}: {len(before)} outputs before, {len(after)} after"
    for k, (x, y) in enumerate(zip(before, after)):
        assert x.dtype == y.dtype and x.shape == y.shape, \
            f"{what}: output {k} is {x.dtype}{x.shape} before, {y.dtype}{y.shape} after"
        if x.dtype.kind in "iub":
            same = x == y
        else:
            same = (x == y) | (np.isnan(x.astype(np.float64)) & np.isnan(y.astype(np.float64)))
        if not np.all(same):
            idx = tuple(np.argwhere(~same)[0])
            raise AssertionError(f"{what}: output {k} differs first at {idx}: "
                                 f"before {x[idx]!r}, after {y[idx]!r}")
