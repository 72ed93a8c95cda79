"""Definedness as memcheck tracks it (tilecc/definedness.py), on both backends: computing on
undefined data is allowed, undefined data reaching HBM is an error / warning / ignored,
named at the kernel line that first read it and the element."""

from __future__ import annotations

import numpy as np
import pytest

import tilecc.nki as nki
from tilecc.cli import main
from tilecc.errors import TileccError
from tilecc.nki.loader import load_kernel

BACKENDS = ("bir", "klr")

KERNEL = '''\
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


def ragged(a, store_all):
    """A masked load of a ragged tile, unmasked arithmetic, then a masked (or full) store."""
    out = nl.ndarray((4, 8), dtype=a.dtype, buffer=nl.shared_hbm)
    i_p, i_f = nl.mgrid[0:4, 0:8]
    t = nl.ndarray((4, 8), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t[:, 0:5], src=a[:, 0:5])
    e = nl.ndarray((4, 8), dtype=a.dtype, buffer=nl.sbuf)
    nisa.activation(dst=e, op=nl.exp, data=t)
    r = nl.ndarray((4, 1), dtype=a.dtype, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=r, op=nl.add, data=e, axis=1)
    s = nl.ndarray((4, 8), dtype=a.dtype, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=s, data=e, op0=nl.multiply, operand0=2.0)
    if store_all == 1:
        nl.store(out, value=s)
    elif store_all == 2:
        nl.store(out[:, 0:1], value=r)
    else:
        nl.store(out[i_p, i_f], value=s, mask=(i_f < 5))
    return out
'''


@pytest.fixture
def ragged(tmp_path):
    path = tmp_path / "ragged.py"
    path.write_text(KERNEL)
    return path, load_kernel(f"{path}:ragged")


A = np.arange(32, dtype=np.float32).reshape(4, 8) / 32


@pytest.mark.parametrize("backend", BACKENDS)
def test_masked_load_unmasked_math_masked_store_is_fine(ragged, backend):
    _, fn = ragged
    got = nki.simulate(fn, backend=backend)(A, 0)
    np.testing.assert_allclose(got[:, :5], 2 * np.exp(A[:, :5]), rtol=1e-6)
    np.testing.assert_array_equal(got[:, 5:], 0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_storing_undefined_data_names_the_store_the_first_read_and_the_elements(ragged, backend):
    path, fn = ragged
    with pytest.raises(TileccError) as err:
        nki.simulate(fn, backend=backend)(A, 1)
    text = str(err.value)
    assert text.startswith(f"{path}:18:9 nl.store: ")
    assert "undefined data reaches HBM tensor 'out' element [0, 5]; first read uninitialised at " \
           f"{path}:12:5 nisa.activation: " in text
    assert text.endswith("'t' element [0, 5] was never written")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_reduction_over_a_partly_undefined_row_is_undefined(ragged, backend):
    _, fn = ragged
    with pytest.raises(TileccError, match=r"HBM tensor 'out' element \[0, 0\]; .*'t' element \[0, 5\]"):
        nki.simulate(fn, backend=backend)(A, 2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_warn_prints_once_and_ignore_is_silent(ragged, backend, capsys):
    _, fn = ragged
    got = nki.simulate(fn, backend=backend, uninit="warn")(A, 1)
    np.testing.assert_allclose(got[:, :5], 2 * np.exp(A[:, :5]), rtol=1e-6)
    warnings = capsys.readouterr().err.strip().splitlines()
    assert len(warnings) == 1 and warnings[0].startswith("warning: ") and "element [0, 5]" in warnings[0]
    nki.simulate(fn, backend=backend, uninit="ignore")(A, 1)
    assert capsys.readouterr().err == ""


def test_the_command_line_takes_the_policy(ragged, tmp_path, capsys):
    path, _ = ragged
    np.save(tmp_path / "a.npy", A)
    args = ["run", f"{path}:ragged", "--input", f"a={tmp_path / 'a.npy'}", "--input", "store_all=1",
            "--out", str(tmp_path / "out")]
    assert main(args) == 1
    assert "undefined data reaches HBM tensor 'out' element [0, 5]" in capsys.readouterr().err
    assert main(args + ["--uninit", "warn"]) == 0
    assert "warning: " in capsys.readouterr().err
    assert main(args + ["--uninit", "ignore"]) == 0 and capsys.readouterr().err == ""
    with pytest.raises(SystemExit) as bad:
        main(args + ["--uninit", "loud"])
    assert bad.value.code == 1
