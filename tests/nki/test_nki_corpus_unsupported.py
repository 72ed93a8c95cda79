"""Kernels that need what KLR / BIR (spec 003) cannot express -- matmul, transpose,
gathers -- fail with a KernelError that names the unsupported call and points
at the kernel line making it (marked `# <-`). Each kernel below is a small original one built
around the unsupported call; the harness calls every one with a [128, 16] float32 `x` and a
[128, 1] int32 `idx`."""

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


def gram_on_tensor_engine(x, idx):
    """x^T x of a [128, 16] block with the ISA matmul into a PSUM accumulator."""
    rows, cols = x.shape
    gram = nl.ndarray((cols, cols), dtype=nl.float32, buffer=nl.shared_hbm)
    block = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=block, src=x)
    acc = nl.ndarray((cols, cols), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=acc, stationary=block, moving=block)  # <-
    return gram


def project_tile_level(x, idx):
    """x^T projected on itself with the tile-level matmul."""
    block = nl.load(x)
    proj = nl.ndarray((x.shape[1], x.shape[1]), dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(proj, nl.matmul(block, block, transpose_x=True))  # <-
    return proj


def mirror_tile_level(x, idx):
    """Swap rows and columns of a loaded tile with the tile-level transpose."""
    swapped = nl.ndarray((x.shape[1], x.shape[0]), dtype=x.dtype, buffer=nl.shared_hbm)
    block = nl.load(x)
    nl.store(swapped, nl.transpose(nl.exp(block)))  # <-
    return swapped


def mirror_on_vector_engine(x, idx):
    """Swap rows and columns on chip with the ISA transpose on the Vector Engine."""
    swapped = nl.ndarray((x.shape[1], x.shape[0]), dtype=x.dtype, buffer=nl.sbuf)
    nisa.nc_transpose(dst=swapped, data=nl.load(x), engine=nisa.engine.vector)  # <-


def lookup_indirect(x, idx):
    """Pick elements of an SBUF tile through a tile of offsets (tile.indirect)."""
    table = nl.load(x)
    offsets = nl.ndarray((x.shape[0], 1), dtype=nl.uint16, buffer=nl.sbuf)
    return table.indirect(offsets, num_elem=8)  # <-


def select_rows_by_index_tile(x, idx):
    """Load the rows of x named by a loaded index tile (an NKI 1.x indirect load)."""
    picks = nl.load(idx)
    return nl.load(x[picks, nl.arange(x.shape[1])[None, :]])  # <-


def offset_rows_access_pattern(x, idx):
    """DMA rows of x at per-partition offsets through .ap(vector_offset=)."""
    rows, cols = x.shape
    starts = nl.ndarray((rows, 1), dtype=nl.uint32, buffer=nl.sbuf)
    landed = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=landed, src=x.ap(pattern=[[cols, rows], [1, cols]], vector_offset=starts,  # <-
                                       indirect_dim=0))


CASES = [
    (gram_on_tensor_engine, r"nisa\.nc_matmul is not supported"),
    (project_tile_level, r"nl\.matmul is not supported"),
    (mirror_tile_level, r"nl\.transpose is not supported"),
    (mirror_on_vector_engine, r"nisa\.nc_transpose is not supported"),
    (lookup_indirect, r"table\.indirect\(\.\.\.\) is a gather"),
    (select_rows_by_index_tile, r"indexing <hbm tensor x\[128, 16\] float32> with a tensor of indices is an "
                                r"indirect gather / scatter"),
    (offset_rows_access_pattern, r"tensor\.ap\(\): indirect offsets .* are not supported"),
]


@pytest.mark.parametrize("kernel, message", CASES, ids=[c[0].__name__ for c in CASES])
def test_unsupported_call_is_a_kernel_error_at_its_line(kernel, message):
    x = np.zeros((128, 16), np.float32)
    idx = np.zeros((128, 1), np.int32)
    with pytest.raises(KernelError, match=message) as info:
        nki.simulate(nki.jit(kernel))(x, idx)
    err = info.value
    assert (err.path, err.line) == (__file__, marked_line(kernel))
    assert "# <-" in err.source_line


def test_unsupported_call_inside_a_grid_launch_points_at_its_line():
    @nki.jit
    def per_program_mirror(stack):
        out = nl.ndarray(stack.shape, dtype=stack.dtype, buffer=nl.shared_hbm)
        pid = nl.program_id(0)
        doubled = nl.multiply(nl.load(stack[pid]), 2.0)
        nl.store(out[pid], nl.transpose(doubled))  # <-
        return out

    with pytest.raises(KernelError, match=r"nl\.transpose is not supported") as info:
        per_program_mirror[3](np.zeros((3, 16, 16), np.float32))
    assert info.value.line == marked_line(per_program_mirror.fn)
