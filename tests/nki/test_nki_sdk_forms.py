"""Forms of the NKI SDK's own test files (aws-neuron-sdk nki/test) that the frontend takes as
NKI's simulator does: element assignments on any partition (nl.gather_flattened's example
fills its index tile with `indices[i, j] = j * 5`), a returned SBUF tile (nisa.range_select's
example), numpy's IndexError for an index out of its tensor (the oob_mode=error examples), and
a kernel named test_* that pytest must not collect."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl
from tilecc.klr import ast


@pytest.mark.parametrize("backend", ["bir", "klr"])
def test_element_assignments_reach_every_partition(backend):
    def kernel(src):
        out = nl.ndarray((6, 4), dtype=nl.int32, buffer=nl.shared_hbm)
        table = nl.zeros((6, 4), dtype=nl.int32)
        row = nl.load(src)
        for i in nl.static_range(6):
            for j in nl.static_range(4):
                table[i, j] = i * 10 + j
        table[5, 0:4] = row[0, 0:4]   # a tile copy onto partition 5
        nl.store(out, value=table)
        return out
    src = np.array([[7, 8, 9, 10]], np.int32)
    want = np.arange(6)[:, None] * 10 + np.arange(4)[None, :]
    want[5] = src[0]
    np.testing.assert_array_equal(nki.simulate(kernel, backend=backend)(src), want)


def test_a_fill_on_a_partition_the_engines_cannot_start_on_is_a_memset_and_a_dma():
    def kernel(src):
        t = nl.load(src)
        t[0, 0] = 1.0    # partition 0: the engine writes it
        t[3, 0] = 2.0    # partition 3: filled at partition 0, moved by a DMA
        out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=t)
        return out
    body = nki.trace_kernel(kernel, np.zeros((4, 2), np.float32)).kernel.body
    assert [type(s).__name__ for s in body] == ["NcDmaCopy", "MemSet", "MemSet", "NcDmaCopy", "NcDmaCopy"]


@pytest.mark.parametrize("backend", ["bir", "klr"])
def test_a_returned_sbuf_tile_is_handed_back(backend):
    def kernel(a):
        total = nl.ndarray((a.shape[0], 1), dtype=a.dtype, buffer=nl.hbm)
        t = nl.load(a)
        doubled = nl.multiply(t, 2.0)
        nl.store(total, value=nl.sum(t, axis=1))
        return doubled, total
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    doubled, total = nki.simulate(kernel, backend=backend)(a)
    np.testing.assert_array_equal(doubled, 2 * a)
    np.testing.assert_array_equal(total, a.sum(axis=1, keepdims=True))
    assert isinstance(nki.trace_kernel(kernel, a).kernel.body[-1], ast.NcDmaCopy)


@nki.jit
def _gather_rows(table, idx):
    out = nl.ndarray((idx.shape[0], table.shape[1]), dtype=table.dtype, buffer=nl.shared_hbm)
    rows = nl.ndarray(out.shape, dtype=table.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=rows, src=table[nl.load(idx), :], oob_mode=nisa.oob_mode.error)
    nl.store(out, value=rows)
    return out


def test_an_index_outside_its_tensor_is_numpys_index_error_when_a_jit_kernel_is_called():
    table = np.zeros((128, 512), np.float32)
    idx = np.array([[3], [129]], np.int32)
    with pytest.raises(IndexError) as info:
        _gather_rows(table, idx)
    assert type(info.value) is IndexError
    assert str(info.value) == "index 66048 is out of bounds for axis 0 with size 65536"
    assert "index 129 of partition 1 is outside the 128 rows" in info.value.__notes__[0]
    np.testing.assert_array_equal(_gather_rows(table, np.array([[3]], np.int32)), table[[3]])


def test_pytest_does_not_collect_a_kernel_named_test(tmp_path, capsys):
    (tmp_path / "test_kernels.py").write_text(textwrap.dedent('''\
        import unittest
        import numpy as np
        import tilecc.nki as nki
        import tilecc.nki.language as nl

        @nki.jit
        def test_copy(in_tensor):
            out = nl.ndarray(in_tensor.shape, dtype=in_tensor.dtype, buffer=nl.shared_hbm)
            nl.store(out, value=nl.load(in_tensor))
            return out

        class TestCopy(unittest.TestCase):
            def test_it(self):
                a = np.ones((2, 3), np.float32)
                self.assertTrue(np.array_equal(test_copy(a), a))
        '''))
    code = pytest.main(["-q", "-p", "no:cacheprovider", "-W", "ignore::pytest.PytestCollectionWarning",
                        "--rootdir", str(tmp_path), str(tmp_path / "test_kernels.py")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "1 passed" in out and "error" not in out


def test_tensor_copy_takes_dst_and_its_dtype():
    """The nki-samples matmul tutorial: nisa.tensor_copy(dst=result_sbuf, src=result_psum,
    dtype=result.dtype); another dtype than dst's is a cast on the way, a name that is no
    dtype is refused."""
    def kernel(a, dtype):
        out = nl.ndarray(a.shape, dtype=nl.bfloat16, buffer=nl.shared_hbm)
        psum = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.psum)
        nisa.tensor_copy(dst=psum, src=nl.load(a))
        sbuf = nl.ndarray(a.shape, dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.tensor_copy(dst=sbuf, src=psum, dtype=dtype)
        nl.store(out, value=sbuf)
        return out
    a = np.array([[1.0, 2.5, -3.0]], np.float32)
    got = nki.simulate(kernel)(a, nl.bfloat16)
    np.testing.assert_array_equal(got.astype(np.float32), a)
    got = nki.simulate(kernel)(np.array([[1.0, 2.5, 70000.0]], np.float32), "float16")
    np.testing.assert_array_equal(got.astype(np.float32), [[1.0, 2.5, np.inf]])  # via fp16
    with pytest.raises(nki.KernelError, match="dtype='float17' is not an NKI dtype"):
        nki.simulate(kernel)(a, "float17")
