"""nki.compiler's direct-allocation calls: every documented argument of ncc.sbuf.mod_alloc /
ncc.psum.mod_alloc is accepted and checked, and a kernel whose PSUM tiles are placed by bank
computes what numpy does; bad arguments are located KernelErrors."""

from __future__ import annotations

import numpy as np
import pytest

import tilecc.nki as nki
import tilecc.nki.compiler as ncc
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl
from tilecc.nki import KernelError


@nki.jit
def banked_row_sums(a):
    out = nl.ndarray((a.shape[0], 2), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((2, nl.par_dim(a.shape[0]), 1), dtype=nl.float32,
                     buffer=ncc.psum.mod_alloc(base_bank=1, num_bank_tiles=(2,)))
    ones = nl.ndarray((a.shape[0], 1), dtype=nl.float32,
                      buffer=ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(1,)))
    nisa.memset(dst=ones, value=1.0)
    for half in nl.affine_range(2):
        part = nl.load(a[:, nl.ds(half * 64, 64)])
        squared = nl.multiply(part, part)
        nisa.tensor_reduce(dst=ones, op=nl.add, data=squared, axis=1)
        acc[half] = nl.copy(ones)
        nl.store(out[:, nl.ds(half, 1)], nl.copy(acc[half]))
    return out


def test_psum_tiles_placed_by_bank_compute_as_numpy():
    a = np.arange(32 * 128, dtype=np.float32).reshape(32, 128) / 100
    got = nki.simulate(banked_row_sums)(a)
    want = np.stack([(a[:, :64] ** 2).sum(1), (a[:, 64:] ** 2).sum(1)], 1)
    np.testing.assert_allclose(got, want, rtol=1e-5)


@pytest.mark.parametrize("call, message", [
    (lambda: ncc.psum.mod_alloc(base_bank=8), "base_bank must be a PSUM bank 0..7"),
    (lambda: ncc.psum.mod_alloc(base_bank=0, num_bank_tiles=(0,)), "num_bank_tiles must be a tuple of positive ints"),
    (lambda: ncc.sbuf.mod_alloc(base_addr=0, num_bank_tiles=(2,)), "SBUF has no banks"),
    (lambda: ncc.sbuf.mod_alloc(base_addr=-4), "base_addr must be a non-negative int"),
], ids=["bank8", "zero-tiles", "sbuf-banks", "negative-addr"])
def test_bad_allocation_arguments_are_kernel_errors(call, message):
    with pytest.raises(KernelError, match=message):
        call()


def test_no_reorder_directive_keeps_program_order():
    @nki.jit
    def running_sum(a):
        out = nl.ndarray((a.shape[0], 1), dtype=nl.float32, buffer=nl.shared_hbm)
        acc = nl.zeros((a.shape[0], 1), dtype=nl.float32)
        for k in nl.sequential_range(a.shape[1] // 8, directives=ncc.no_reorder()):
            part = nl.load(a[:, nl.ds(k * 8, 8)])
            acc[...] = nl.add(acc, nl.sum(part, axis=1, keepdims=True))
        nl.store(out, acc)
        return out

    a = np.arange(16 * 32, dtype=np.float32).reshape(16, 32)
    np.testing.assert_allclose(nki.simulate(running_sum)(a), a.sum(1, keepdims=True), rtol=1e-6)
