"""Every example kernel in examples/kernels through the whole pipeline equals its numpy
reference (dtype, shape and values), and the BIR simulator agrees with the KLR reference
interpreter on the same traced kernel."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import tilecc.nki as nki

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples" / "kernels").glob("*.py"))


def load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def as_tuple(value):
    return value if isinstance(value, tuple) else (value,)


def test_at_least_eight_examples():
    assert len(EXAMPLES) >= 8


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_matches_numpy_reference(path):
    example = load(path)
    inputs = example.make_inputs(np.random.default_rng(11))
    got = as_tuple(nki.simulate(example.KERNEL)(*inputs))
    want = as_tuple(example.reference(*inputs))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), **example.TOLERANCE)


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_bir_simulator_agrees_with_klr_interpreter(path):
    example = load(path)
    inputs = example.make_inputs(np.random.default_rng(5))
    simulated = as_tuple(nki.simulate(example.KERNEL)(*inputs))
    interpreted = as_tuple(nki.simulate(example.KERNEL, backend="klr")(*inputs))
    for s, i in zip(simulated, interpreted):
        # the two evaluate activation functions at different precision (float32 / float64):
        # a 16-bit result may round one ulp apart. A kernel whose matmuls sum in float32
        # declares BACKENDS_TOLERANCE: the interpreter sums partition by partition, numpy's
        # BLAS in its own blocked order (which depends on the CPU's kernels), so the two
        # agree to float32 rounding of K-term sums, not to 1e-6.
        rtol = 2.0 ** -7 if s.dtype.itemsize == 2 else 1e-6
        bound = getattr(example, "BACKENDS_TOLERANCE", {"rtol": rtol, "atol": 1e-6})
        np.testing.assert_allclose(s.astype(np.float64), i.astype(np.float64), **bound)


def test_jit_call_runs_the_simulator():
    example = load(next(p for p in EXAMPLES if p.stem == "bitmask_filter"))
    (x,) = example.make_inputs(np.random.default_rng(1))
    np.testing.assert_array_equal(example.KERNEL(x, bit=5), example.reference(x, bit=5))
