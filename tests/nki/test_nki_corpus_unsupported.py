"""Kernels that need what tilecc cannot express -- the MX quantized family, register values,
multi-core calls -- fail with a KernelError that names the unsupported call and points
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


def quantize_for_mx_matmul(x, idx):
    """Quantize a tile to MX format for the MX matmul (the MX family is not simulated)."""
    block = nl.load(x)
    scales = nl.ndarray((x.shape[0], 1), dtype=nl.uint8, buffer=nl.sbuf)
    nisa.quantize_mx(dst=block, src=block, dst_scale=scales)  # <-


def mirror_on_vector_engine(x, idx):
    """Swap rows and columns on chip with the ISA transpose on the Vector Engine."""
    swapped = nl.ndarray((x.shape[1], x.shape[0]), dtype=x.dtype, buffer=nl.sbuf)
    nisa.nc_transpose(dst=swapped, data=nl.load(x), engine=nisa.engine.vector)  # <-


def lookup_indirect(x, idx):
    """Pick elements of an SBUF tile through a tile of offsets (tile.indirect)."""
    table = nl.load(x)
    offsets = nl.ndarray((x.shape[0], 1), dtype=nl.uint16, buffer=nl.sbuf)
    return table.indirect(offsets, num_elem=8)  # <-


def select_rows_by_float_tile(x, idx):
    """Index rows of x with a float tile (row numbers must be int32 / uint32)."""
    picks = nl.load(x[:, 0:1])
    return nl.load(x[picks, nl.arange(x.shape[1])[None, :]])  # <-


def offset_rows_by_register(x, idx):
    """DMA rows of x at one dynamic offset through .ap(scalar_offset=) (a register offset)."""
    rows, cols = x.shape
    starts = nl.ndarray((1, 1), dtype=nl.uint32, buffer=nl.sbuf)
    landed = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=landed, src=x.ap(pattern=[[cols, rows], [1, cols]], scalar_offset=starts,  # <-
                                       indirect_dim=0))


CASES = [
    (quantize_for_mx_matmul, r"nisa\.quantize_mx is not supported by tilecc: the MX quantized family"),
    (mirror_on_vector_engine, r"nisa\.nc_transpose: the Vector Engine transposes at most 32 x 32, "
                              r"data is 128 x 16"),
    (lookup_indirect, r"table\.indirect\(\.\.\.\) is a gather"),
    (select_rows_by_float_tile, r"the index must be a \[P, 1\] int32 / uint32 tile on chip, got a "
                                r"\[128, 1\] sbuf float32"),
    (offset_rows_by_register, r"tensor\.ap\(\): scalar_offset .* is not supported"),
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
        nl.store(out[pid], nisa.nc_matmul_mx(doubled, doubled, doubled, doubled))  # <-
        return out

    with pytest.raises(KernelError, match=r"nisa\.nc_matmul_mx is not supported") as info:
        per_program_mirror[3](np.zeros((3, 16, 64), np.float32))
    assert info.value.line == marked_line(per_program_mirror.fn)
