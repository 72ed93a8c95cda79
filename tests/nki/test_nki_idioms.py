"""NKI as published kernels write it: numpy scalars, nl.max as an ALU operator, truthy HBM
arguments, storing a number, dma_copy(mask=), dtype attributes, nl.NKIObject, nc_version,
imports of neuronxcc inside a kernel, launch grids, and the opt-in neuronxcc shim."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl
from tilecc.errors import TileccError
from tilecc.nki import shim

A = np.arange(4 * 8, dtype=np.float32).reshape(4, 8) - 10


def scaled(a, imm, bias=None):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    res = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.tensor_scalar_cumulative(dst=res, src=t, op0=nl.multiply, op1=nl.max, imm0=imm, imm1=0.0)
    if bias:                                     # an HBM argument is truthy
        res = nl.add(res, nl.load(bias))
    nl.store(out, value=res)
    return out


@pytest.mark.parametrize("imm", [np.float32(0.5), np.array(0.5, np.float32), 0.5])
def test_numpy_scalars_are_numbers_and_nl_max_is_an_alu_operator(imm):
    got = nki.simulate(scaled)(A, imm)
    np.testing.assert_array_equal(got, np.maximum.accumulate(A * np.float32(0.5), axis=1))
    bias = np.ones_like(A)
    np.testing.assert_array_equal(nki.simulate(scaled)(A, imm, bias), got + 1)


def test_storing_a_number_fills_the_output():
    def fill(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, 100)
        return out
    for backend in ("bir", "klr"):
        np.testing.assert_array_equal(nki.simulate(fill, backend=backend)(A), np.full_like(A, 100))


def test_dma_copy_with_a_mask_copies_its_box():
    def masked(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, 0.0)
        i_p, i_f = nl.mgrid[0:4, 0:8]
        nisa.dma_copy(dst=out[i_p, i_f], src=a[i_p, i_f], mask=(i_f < 3))
        return out
    got = nki.simulate(masked)(A)
    np.testing.assert_array_equal(got[:, :3], A[:, :3])
    np.testing.assert_array_equal(got[:, 3:], 0)


def test_dtype_attributes_finfo_and_nki_object():
    assert nl.fp32.min == float(np.finfo(np.float32).min) and nl.int8.max == 127
    assert nl.bfloat16.max == pytest.approx(3.3895e38, rel=1e-4) and nl.uint16.bits == 16
    assert nl.finfo(nl.float16).eps == np.finfo(np.float16).eps and nl.iinfo(np.int32).min == -2 ** 31
    assert isinstance(nl.bfloat16, nki.dtype)

    class TiledRange(nl.NKIObject):
        def __init__(self, n):
            self.n = n
    assert TiledRange(3).n == 3
    assert nisa.get_nc_version() == nisa.nc_version.gen3
    with pytest.raises(TileccError, match="op0 must be an NKI operator .* got <function abs_max"):
        _use_abs_max()   # nl.abs_max is a tile function: KLR has no ALU operator for it


def _use_abs_max():
    def kernel(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.load(a)
        res = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=res, data=t, op0=nl.abs_max, operand0=0.0)
        nl.store(out, value=res)
        return out
    nki.simulate(kernel)(A)


def test_a_launch_grid_of_zero_or_too_many_programs_is_located():
    kernel = nki.jit(scaled)
    with pytest.raises(TileccError, match=r"test_nki_idioms.py:\d+:\d+: error: kernel scaled: a launch "
                                          r"grid is one or more positive ints"):
        kernel[0, 2]
    with pytest.raises(TileccError, match="a launch grid of 1000000000000 programs"):
        kernel[10 ** 6, 10 ** 6]
    assert kernel[np.int64(2)].grid == (2,)


def test_neuronxcc_imports_inside_a_kernel_and_the_shim(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent('''\
        import numpy as np
        from neuronxcc import nki
        import neuronxcc.nki.language as nl
        from neuronxcc.nki.isa.constants import engine

        @nki.jit
        def double(a):
            import neuronxcc.nki.isa as nisa
            out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
            t = nl.load(a)
            res = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
            nisa.tensor_scalar(dst=res, data=t, op0=nl.multiply, operand0=2.0)
            nl.store(out, value=res)
            return out

        print(engine.vector.name, double(np.ones((2, 3), np.float32)).sum())
        '''))
    # TMPDIR: the folder `tilecc nki-shim` makes for its sitecustomize.py stays in tmp_path
    run = subprocess.run([sys.executable, "-m", "tilecc.cli", "nki-shim", "--", sys.executable, str(script)],
                         capture_output=True, text=True, cwd=tmp_path,
                         env={**os.environ, "TMPDIR": str(tmp_path)})
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "vector 12.0"
    plain = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path)
    assert plain.returncode != 0 and "neuronxcc" in plain.stderr   # the shim is opt-in


def test_install_and_uninstall_in_process():
    assert "neuronxcc" not in sys.modules
    shim.install()
    try:
        import neuronxcc.nki.language as alias  # noqa: PLC0415
        assert alias is nl
    finally:
        shim.uninstall()
    assert "neuronxcc" not in sys.modules and "neuronxcc.nki.language" not in sys.modules


def test_nki_shim_without_a_command_is_one_line(capsys):
    from tilecc.cli import main
    assert main(["nki-shim"]) == 1
    assert "expected a command after `--`" in capsys.readouterr().err


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "int32"])
@pytest.mark.parametrize("backend", ["bir", "klr"])
def test_a_tile_with_a_non_float32_column_is_elementwise(dtype, backend):
    """nl.multiply / nl.subtract of a tile and a [P, 1] tile of its dtype (tensor_scalar takes
    float32 columns only): tensor_tensor reading the column repeated along the free dims."""
    from tilecc.nki.dtypes import dtype_info

    def kernel(a, c):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        x, col = nl.load(a), nl.load(c)
        nl.store(out, value=nl.subtract(col, nl.multiply(x, col)))
        return out
    host = dtype_info(dtype).numpy
    a = (np.arange(4 * 6).reshape(4, 6) % 5 - 2).astype(host)
    c = np.arange(1, 5).reshape(4, 1).astype(host)
    got = nki.simulate(kernel, backend=backend)(a, c)
    want = (c.astype(np.float64) - a.astype(np.float64) * c).astype(host)
    assert got.dtype == host
    np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64))
