"""The real kernels written by the klr tool 0.0.12 (copied to tests/fixtures/klr0012): read, lowered,
simulated and interpreted; both agree, and match numpy's reading of the NKI source.

(The tool's own `klr eval-klr` cannot serve as a third reference: in 0.0.12 it traces the
kernel and parses the .npy inputs but writes no output files.)
"""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from diff_kernels import assert_agree, run_both, values
from tilecc.klr.read import read_kernel_file

KLR_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "klr0012"
FILES = sorted(KLR_DIR.glob("*.klr.json"))


def numpy_reference(name: str, ins: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """What each kernel's NKI source computes, written with numpy."""
    if name.startswith("k01"):
        return {"out": ins["a"] - np.float32(1)}
    if name.startswith("k02"):
        t = ins["a"] * np.float32(2) + np.float32(0.5)
        return {"out": np.minimum(np.maximum(t, np.float32(0)), np.float32(6))}
    if name.startswith("k05"):
        t = ((((ins["a"] & 255) | 16) ^ 3) << 2) >> 1
        return {"out": (~(~t)) + 1}
    if name.startswith("k06"):
        a32 = ins["a"].astype(np.float32)
        return {"out": (a32 * np.float32(0.5) + np.float32(1)).astype(ml_dtypes.bfloat16),
                "out16": np.maximum(a32[:, :256].astype(np.float16), np.float16(0))}
    return {}


@pytest.mark.skipif(not FILES, reason=f"the klr 0.0.12 kernels are not at {KLR_DIR}")
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name.split(".")[0])
def test_klr_tool_kernel(path):
    kernel = read_kernel_file(str(path))
    rng = np.random.default_rng(1)
    ins = {}
    for t in kernel.inputs:
        shape = (t.shape.par_dim,) + tuple(t.shape.free_dims)
        ins[t.name] = values(t.dtype, shape, rng, low=-10, high=10)
    sim, ref = run_both(kernel, ins)
    assert_agree(sim, ref, exact=True)
    for name, want in numpy_reference(path.name, ins).items():
        got = sim[name]
        assert got.dtype == want.dtype
        if got.dtype.kind in "iu":
            np.testing.assert_array_equal(got, want)
        else:  # compared as float32 so that NaN == NaN for bf16 too
            np.testing.assert_array_equal(got.astype(np.float32), want.astype(np.float32))
