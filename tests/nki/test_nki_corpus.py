"""The kernel corpus (tests/nki/corpus/*.py) runs through `nki.simulate` on both backends --
BIR simulator and KLR interpreter -- and equals each kernel's numpy reference. Every corpus
file is an original kernel named for what it computes; its docstring lists the frontend
features it exercises (nisa / nl call forms, loop kinds, SPMD grids, masks, par_dim block
dims, access patterns, PSUM buffers, direct allocation ...), and together they cover the
frontend's tracing paths. A file exposes KERNEL, make_inputs(rng) and reference(*inputs),
optionally TOLERANCE, OUT_ARGS and GRID_VARIANT (a launch-grid form of the kernel and the
keyword arguments that make it split its work across the grid). Kernels that write into their arguments (NKI 1.x
out-parameters, OUT_ARGS) are also run with `nki.simulate_kernel`, which must overwrite those
numpy arrays in place."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import tilecc.nki as nki

CORPUS = sorted((Path(__file__).resolve().parent / "corpus").glob("*.py"))


def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"corpus_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def as_tuple(value):
    return value if isinstance(value, tuple) else (value,)


def check(got, want, tolerance):
    got, want = as_tuple(got), as_tuple(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), **tolerance)


def test_corpus_has_at_least_53_kernels():
    assert len(CORPUS) >= 53


@pytest.mark.parametrize("backend", ["bir", "klr"])
@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_corpus_kernel_matches_numpy(path, backend):
    kernel = load(path)
    inputs = kernel.make_inputs(np.random.default_rng(7))
    want = kernel.reference(*inputs)
    got = nki.simulate(kernel.KERNEL, backend=backend)(*inputs)
    check(got, want, getattr(kernel, "TOLERANCE", {"rtol": 1e-5, "atol": 1e-6}))


OUT_PARAM_KERNELS = [p for p in CORPUS if "OUT_ARGS" in p.read_text()]


@pytest.mark.parametrize("path", OUT_PARAM_KERNELS, ids=[p.stem for p in OUT_PARAM_KERNELS])
def test_simulate_kernel_writes_out_parameters_in_place(path):
    kernel = load(path)
    inputs = kernel.make_inputs(np.random.default_rng(7))
    want = as_tuple(kernel.reference(*inputs))
    nki.simulate_kernel(kernel.KERNEL, *inputs)
    got = tuple(inputs[i] for i in kernel.OUT_ARGS)
    check(got, want, getattr(kernel, "TOLERANCE", {"rtol": 1e-5, "atol": 1e-6}))


GRID_VARIANT_KERNELS = [p for p in CORPUS if "GRID_VARIANT" in p.read_text()]


@pytest.mark.parametrize("backend", ["bir", "klr"])
@pytest.mark.parametrize("path", GRID_VARIANT_KERNELS, ids=[p.stem for p in GRID_VARIANT_KERNELS])
def test_grid_variant_splits_the_work_and_matches_numpy(path, backend):
    kernel = load(path)
    inputs = kernel.make_inputs(np.random.default_rng(11))
    launch, kwargs = kernel.GRID_VARIANT
    got = nki.simulate(launch, backend=backend)(*inputs, **kwargs)
    check(got, kernel.reference(*inputs), getattr(kernel, "TOLERANCE", {"rtol": 1e-5, "atol": 1e-6}))
