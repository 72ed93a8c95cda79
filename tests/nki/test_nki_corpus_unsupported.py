"""Published kernels that need what KLR / BIR (spec 003) cannot express -- matmul,
transpose, gather, bn_stats, device_print -- fail with a KernelError that names the
unsupported call and points at the kernel line making it (marked `# <-`). Each kernel is the
published one cut down to the unsupported call, re-written from the source named above it."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl
from tilecc.nki import KernelError


def marked_line(fn) -> int:
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if "# <-" in line)


# aws-neuron/nki-samples src/nki_samples/tutorials/matrix_multiplication (nc_matmul into PSUM)
def matmul_isa(lhs_t, rhs):
    k, m = lhs_t.shape
    _, n = rhs.shape
    out = nl.ndarray((m, n), dtype=lhs_t.dtype, buffer=nl.shared_hbm)
    lhs_tile = nl.ndarray((k, m), dtype=lhs_t.dtype, buffer=nl.sbuf)
    rhs_tile = nl.ndarray((k, n), dtype=rhs.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=lhs_tile, src=lhs_t)
    nisa.dma_copy(dst=rhs_tile, src=rhs)
    acc = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=acc, stationary=lhs_tile, moving=rhs_tile)  # <-
    return out


# aws-neuron/aws-neuron-sdk nki/examples/matrix_multiplication (tile-level nl.matmul)
def matmul_tile_level(lhs_t, rhs):
    out = nl.ndarray((lhs_t.shape[1], rhs.shape[1]), dtype=lhs_t.dtype, buffer=nl.shared_hbm)
    product = nl.matmul(nl.load(lhs_t), nl.load(rhs), transpose_x=True)  # <-
    nl.store(out, product)
    return out


# aws-neuron/nki-samples src/nki_samples/tutorials/transpose2d (nl.transpose of a tile)
def transpose_tile_level(a, b):
    out = nl.ndarray((a.shape[1], a.shape[0]), dtype=a.dtype, buffer=nl.shared_hbm)
    flipped = nl.transpose(nl.load(a))  # <-
    nl.store(out, flipped)
    return out


# aws-neuron/nki-samples src/nki_samples/tutorials/tensor_indirection (nc_transpose step)
def transpose_isa(a, b):
    tile = nl.load(a)
    flipped = nl.ndarray((a.shape[1], a.shape[0]), dtype=a.dtype, buffer=nl.sbuf)
    nisa.nc_transpose(dst=flipped, data=tile, engine=nisa.engine.vector)  # <-


# aws-neuron/nki-samples src/nki_samples/tutorials/tensor_indirection (tile.indirect gather)
def gather_indirect(a, b):
    data = nl.load(a)
    idx = nl.ndarray((a.shape[0], 1), dtype=nl.uint16, buffer=nl.sbuf)
    gathered = data.indirect(idx, num_elem=16)  # <-
    return gathered


# NKI 1.x indirect load: a tensor of row indices used as an index
def gather_by_index_tile(a, b):
    idx = nl.load(b)
    rows = nl.load(a[idx, nl.arange(a.shape[1])[None, :]])  # <-
    return rows


# aws-neuron/aws-neuron-sdk nki/api/nki/isa/__init__.py dma_copy docstring (vector_offset gather)
def gather_ap_vector_offset(a, b):
    idx = nl.ndarray((a.shape[0], 1), dtype=nl.uint32, buffer=nl.sbuf)
    dst = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    p, f = a.shape
    nisa.dma_copy(dst=dst, src=a.ap(pattern=[[f, p], [1, f]], vector_offset=idx, indirect_dim=0))  # <-


# aws-neuron/nki-samples src/nki_samples/tutorials/layernorm (v2: bn_stats / bn_aggr)
def layernorm_bn_stats(a, b):
    x = nl.load(a)
    stats = nisa.bn_stats(x, dtype=np.float32)  # <-
    return stats


# aws-neuron/aws-neuron-sdk general/nki/test/test_nki_simulate_kernel.py (device_print)
def print_kernel(a, b):
    y = nl.zeros([4, 4], dtype=np.float32)
    nl.device_print("value of y:", y)  # <-


CASES = [
    (matmul_isa, r"nisa\.nc_matmul is not supported"),
    (matmul_tile_level, r"nl\.matmul is not supported"),
    (transpose_tile_level, r"nl\.transpose is not supported"),
    (transpose_isa, r"nisa\.nc_transpose is not supported"),
    (gather_indirect, r"a\.indirect\(\.\.\.\) is a gather"),
    (gather_by_index_tile, r"indexing <hbm tensor a\[128, 16\] float32> with a tensor of indices is an "
                           r"indirect gather / scatter"),
    (gather_ap_vector_offset, r"tensor\.ap\(\): indirect offsets .* are not supported"),
    (layernorm_bn_stats, r"nisa\.bn_stats is not supported"),
    (print_kernel, r"nl\.device_print is not supported"),
]


@pytest.mark.parametrize("kernel, message", CASES, ids=[c[0].__name__ for c in CASES])
def test_unsupported_call_is_a_kernel_error_at_its_line(kernel, message):
    a = np.zeros((128, 16), np.float32)
    b = np.zeros((128, 1), np.int32)
    with pytest.raises(KernelError, match=message) as info:
        nki.simulate(nki.jit(kernel))(a, b)
    err = info.value
    assert (err.path, err.line) == (__file__, marked_line(kernel))
    assert "# <-" in err.source_line


def test_unsupported_call_inside_a_grid_launch_points_at_its_line():
    @nki.jit
    def spmd(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        tile = nl.load(a[nl.program_id(0)])
        nl.store(out[nl.program_id(0)], nl.transpose(tile))  # <-
        return out

    with pytest.raises(KernelError, match=r"nl\.transpose is not supported") as info:
        spmd[2](np.zeros((2, 8, 8), np.float32))
    assert info.value.line == marked_line(spmd.fn)
