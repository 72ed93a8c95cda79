"""nki.language: dtypes, buffers, allocation, and how indexing becomes KLR access patterns."""

from __future__ import annotations

import numpy as np
import pytest

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl
from tilecc.klr import ast


def accesses(kernel, *specs):
    """The (dst, src) access of every NcDmaCopy the kernel emits."""
    args = [nki.ArgSpec(shape, dtype) for shape, dtype in specs]
    body = nki.trace_kernel(kernel, *args).kernel.body
    return [(s.dst, s.src) for s in body if isinstance(s, ast.NcDmaCopy)]


def ap(access):
    return (access.par_offset, access.par_num, access.free_offset,
            tuple((p.step, p.num) for p in access.pattern))


def returning(tile):
    out = nl.ndarray(tile.shape, dtype=tile.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=tile)
    return out


def test_constants_dtypes_and_buffers():
    assert nl.tile_size.pmax == 128
    assert (nl.sbuf, nl.psum, nl.hbm, nl.shared_hbm) == ("sbuf", "psum", "hbm", "shared_hbm")
    assert nl.bfloat16 == "bfloat16" and nl.float8_e4m3 == "float8_e4m3"

    def kernel(a):
        tiles = [nl.ndarray((128, 4), dtype=d, buffer=nl.sbuf)
                 for d in (nl.bfloat16, nl.float8_e4m3, nl.float8_e5m2, np.float16, np.int8, nl.tfloat32,
                           nl.bool_, "uint16")]
        return returning(tiles[0])

    body = nki.trace_kernel(kernel, nki.ArgSpec((128, 4), np.float32)).kernel.body
    assert body[0].dst.dtype is ast.Dtype.bfloat16


def test_every_dtype_and_memory_reaches_klr():
    def kernel(a):
        t = [nl.ndarray((128, 4), dtype=d, buffer=b)
             for d, b in ((nl.float8_e4m3, nl.sbuf), (nl.float8_e5m2, nl.psum), (nl.tfloat32, nl.sbuf),
                          (nl.bool_, nl.sbuf), (np.uint16, nl.sbuf))]
        for tile in t:
            nisa.memset(dst=tile, value=0)
        return returning(t[0])

    memsets = nki.trace_kernel(kernel, nki.ArgSpec((1, 1), np.float32)).kernel.body[:5]
    assert [m.dtype for m in memsets] == [ast.Dtype.float8e4, ast.Dtype.float8e5, ast.Dtype.float32r,
                                          ast.Dtype.uint8, ast.Dtype.uint16]
    assert ast.access_tensor(memsets[1].dst).address.memory is ast.Memory.psum
    assert [m.value for m in memsets[2:]] == [ast.Immediate(0.0), ast.Immediate(0), ast.Immediate(0)]


def test_slices_become_partition_first_patterns():
    def kernel(a):
        x = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=x[32:64, 8:40:2], src=a[256:288, 0:16])
        nisa.dma_copy(dst=x[-32, :], src=a[nl.ds(5, 1), 0:64])
        nisa.dma_copy(dst=x[..., 0:4], src=a[0:128, 60:64])
        return returning(x)

    (d0, s0), (d1, s1), (d2, s2), _ = accesses(kernel, ((1024, 64), np.float32))
    assert ap(d0) == (32, 32, 8, ((2, 16),)) and ap(s0) == (256, 32, 0, ((1, 16),))
    assert ap(d1) == (96, 1, 0, ((1, 64),)) and ap(s1) == (5, 1, 0, ((1, 64),))
    assert ap(d2) == (0, 128, 0, ((1, 4),)) and ap(s2) == (0, 128, 60, ((1, 4),))


def test_whole_tensor_is_the_simple_access():
    def kernel(a):
        x = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x, src=a)
        return returning(x)

    (dst, src), _ = accesses(kernel, ((128, 8), np.float32))
    assert isinstance(dst, ast.TensorName) and isinstance(src, ast.TensorName) and src.name == "a"
    assert dst.name == "x"      # named after the variable it was assigned to


def test_mgrid_and_arange_indices_equal_slices():
    def kernel(a):
        ix, iy = nl.mgrid[0:128, 0:32]
        i_p, i_f = nl.arange(128)[:, None], nl.arange(32)[None, :]
        t1 = nl.load(a[128 + ix, iy])
        t2 = nl.load(a[i_p + 128, i_f])
        t3 = nl.load(a[128:256, 0:32])
        nl.store(a[ix, iy + 32], value=t1)
        return returning(t2)

    copies = accesses(kernel, ((512, 64), np.float32))
    assert ap(copies[0][1]) == ap(copies[1][1]) == ap(copies[2][1]) == (128, 128, 0, ((1, 32),))
    assert ap(copies[3][0]) == (0, 128, 32, ((1, 32),))


def test_hbm_row_step_is_one_dma_per_row():
    # every other row (a partition step of 2, as a[0:256:2] too): KLR keeps the rows of an
    # access consecutive, so each row is its own copy (the klr tool traces it so)
    def kernel(a):
        ix, iy = nl.mgrid[0:128, 0:32]
        t = nl.load(a[2 * ix + 1, iy])
        nl.store(a[0:256:2, 32:64], value=t)
        return returning(t)

    copies = accesses(kernel, ((512, 64), np.float32))
    loads, stores = copies[:128], copies[128:256]
    assert [ap(src) for _, src in loads] == [(2 * k + 1, 1, 0, ((1, 32),)) for k in range(128)]
    assert [ap(dst) for dst, _ in loads] == [(k, 1, 0, ((1, 32),)) for k in range(128)]
    assert [ap(dst) for dst, _ in stores] == [(2 * k, 1, 32, ((1, 32),)) for k in range(128)]


def test_hbm_free_pattern_leaving_its_row_is_refused():
    def kernel(a):
        t = nl.ndarray((128, 100), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a.ap([[64, 128], [1, 100]]))   # 100 elements of 64-element rows
        return returning(t)

    with pytest.raises(nki.KernelError, match="does not keep whole rows of its first dim"):
        accesses(kernel, ((512, 64), np.float32))


def test_dma_reaches_any_partition_but_engines_start_on_a_quadrant():
    def kernel(a):
        t = nl.load(a)
        row = nl.ndarray((1, 16), dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(row, t[5:6, :])
        return row

    x = np.arange(128 * 16, dtype=np.float32).reshape(128, 16)
    for backend in ("bir", "klr"):
        np.testing.assert_array_equal(nki.simulate(kernel, backend=backend)(x), x[5:6])

    def engine_kernel(a):
        t = nl.load(a)
        return returning(nisa.tensor_scalar(t[5:6, :], np.add, 1.0))

    with pytest.raises(nki.KernelError, match="starts at partition 5; it must start at 0 / 32 / 64 / 96"):
        nki.trace_kernel(engine_kernel, nki.ArgSpec((128, 16), np.float32))


def test_par_dim_blocks_and_multi_dim_tiles():
    def kernel(a):
        blocks = nl.ndarray((4, nl.par_dim(128), 16), dtype=nl.float32, buffer=nl.sbuf)
        cube = nl.ndarray((128, 4, 16), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=blocks[2], src=a)
        nisa.dma_copy(dst=cube[:, 1, 2:6], src=a[:, 0:4])
        return returning(cube)

    (d0, _), (d1, _), _ = accesses(kernel, ((128, 16), np.float32))
    assert ast.access_tensor(d0).shape == ast.Shape(128, (4, 16))
    assert ap(d0) == (0, 128, 32, ((1, 16),))
    assert ap(d1) == (0, 128, 18, ((1, 4),))


def test_hbm_layouts_one_and_three_dims():
    def kernel(a, g):
        row = nl.ndarray((1, 16), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=row, src=g.reshape((1, 16)))
        tile = nl.ndarray((128, 16), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=tile, src=a[1, 0:128, :])
        wide = nl.ndarray((128, 16), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=wide, src=g.reshape((1, 16)).broadcast_to((128, 16)))
        return returning(tile)

    traced = nki.trace_kernel(kernel, nki.ArgSpec((2, 256, 16), np.float32), nki.ArgSpec((16,), np.float32))
    a, g = traced.kernel.inputs
    assert a.shape == ast.Shape(2, (256, 16)) and g.shape == ast.Shape(1, (16,))
    (_, s0), (_, s1), (_, s2) = [(s.dst, s.src) for s in traced.kernel.body[:3]]
    assert isinstance(s0, ast.TensorName)
    assert ap(s1) == (1, 1, 0, ((16, 128), (1, 16)))
    assert ap(s2) == (0, 1, 0, ((0, 128), (1, 16)))


def test_zeros_full_load_store():
    def kernel(a):
        z = nl.zeros((128, 8), dtype=nl.int32)
        f = nl.full((128, 8), 2.5, dtype=nl.bfloat16, buffer=nl.psum, name="fill")
        t = nl.load(a, dtype=nl.bfloat16)
        out = nl.ndarray(a.shape, dtype=nl.int32, buffer=nl.hbm)
        nl.store(out, value=z)
        return out

    body = nki.trace_kernel(kernel, nki.ArgSpec((128, 8), np.float32)).kernel.body
    zero, fill, load, store = body
    assert (zero.value, zero.dtype) == (ast.Immediate(0), ast.Dtype.int32)
    assert (fill.value, ast.access_tensor(fill.dst).name) == (ast.Immediate(2.5), "fill")
    assert ast.access_tensor(load.dst).dtype is ast.Dtype.bfloat16
    assert isinstance(store, ast.NcDmaCopy) and ast.access_tensor(store.dst).address.memory is ast.Memory.hbm


def test_names_are_unique_and_loops_unroll():
    def kernel(a):
        for i in nl.affine_range(3):
            t = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.sbuf, name="t")
            nisa.memset(dst=t, value=float(i))
        return returning(t)

    body = nki.trace_kernel(kernel, nki.ArgSpec((1, 1), np.float32)).kernel.body
    assert [ast.access_tensor(s.dst).name for s in body[:3]] == ["t", "t_1", "t_2"]
    assert [s.value for s in body[:3]] == [ast.Immediate(0.0), ast.Immediate(1.0), ast.Immediate(2.0)]


def test_constant_arguments_pass_through_and_tuple_results():
    def kernel(a, scale, *, name_hint="r"):
        x = nl.load(a)
        nisa.tensor_scalar(dst=x, data=x, op0=nl.multiply, operand0=scale)
        return returning(x), returning(x)

    traced = nki.trace_kernel(kernel, nki.ArgSpec((128, 8), np.float32), 3.0)
    assert traced.returns_tuple and len(traced.kernel.outputs) == 2
    assert traced.kernel.body[1].imm0 == ast.Immediate(3.0)


def test_jit_trace_and_decorator_options():
    @nki.jit(mode="simulation")
    def kernel(a):
        return returning(nl.load(a))

    assert isinstance(kernel, nki.JitKernel) and kernel.__name__ == "kernel"
    assert kernel.trace(np.zeros((4, 4), np.float32)).outputs[0].shape == ast.Shape(4, (4,))
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    np.testing.assert_array_equal(kernel(x), x)


def test_bad_arguments_are_tilecc_errors():
    from tilecc.errors import TileccError

    def kernel(a):
        return returning(nl.load(a))

    with pytest.raises(TileccError, match="argument a: float64 is not an NKI dtype"):
        nki.trace_kernel(kernel, np.zeros((4, 4)))
    with pytest.raises(TileccError, match="missing a required argument"):
        nki.trace_kernel(kernel)
    with pytest.raises(TileccError, match="unknown backend"):
        nki.simulate(kernel, backend="gpu")


def test_explicit_access_patterns():
    def kernel(a, b):
        x = nl.ndarray((128, 16), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=x.ap([[16, 64], [2, 8]], offset=16 * 64 + 1), src=a.ap([[16, 64], [2, 8]]))
        col = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=col, src=b.ap(pattern=[[0, 128], [1, 1]], offset=3))   # one value, all partitions
        return returning(x)

    (d0, s0), (d1, s1), _ = accesses(kernel, ((64, 16), np.float32), ((8,), np.float32))
    assert ap(d0) == (64, 64, 1, ((2, 8),)) and ap(s0) == (0, 64, 0, ((2, 8),))
    assert ap(s1) == (0, 1, 3, ((0, 128), (1, 1)))

    x = np.arange(64 * 16, dtype=np.float32).reshape(64, 16)
    values = np.arange(8, dtype=np.float32) * 10

    @nki.jit
    def broadcast_value(a, b):
        col = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=col, src=b.ap(pattern=[[0, 128], [1, 1]], offset=3))
        return returning(col)

    np.testing.assert_array_equal(broadcast_value(x, values), np.full((128, 1), 30.0, np.float32))


def test_explicit_access_pattern_errors():
    def on_chip_two_partitions(a):
        x = nl.ndarray((128, 16), dtype=nl.float32, buffer=nl.sbuf)
        return returning(nl.load(x.ap([[32, 64], [1, 16]])))

    def outside(a):
        return returning(nl.load(a.ap([[16, 64], [1, 17]])))

    def indirect(a):
        return returning(nl.load(a.ap([[16, 64], [1, 16]], vector_offset=a)))

    for kernel, message in ((on_chip_two_partitions, "the first pair steps one partition"),
                            (outside, "elements 0..1024 are outside"),
                            (indirect, r"the index must be a \[P, 1\] int32 / uint32 tile on chip")):
        with pytest.raises(nki.KernelError, match=message):
            accesses(kernel, ((64, 16), np.float32))


def test_a_reshape_of_a_whole_hbm_tensor_is_returned_in_its_shape():
    # published kernels compute in a flattened shape and return `out.reshape(orig_shape)`
    x = np.random.default_rng(8).normal(size=(2, 3, 8, 4)).astype(np.float32)

    def kernel(a):
        flat = a.reshape((6, 32)).reshape((6, 8, 4)).reshape((6, 32))
        out = nl.ndarray((6, 32), dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.multiply(nl.load(flat), 3.0))
        return out.reshape((2, 3, 32)).reshape(a.shape)

    for backend in ("bir", "klr"):
        got = nki.simulate(kernel, backend=backend)(x)
        assert got.shape == (2, 3, 8, 4)
        np.testing.assert_array_equal(got, x * np.float32(3))

    def part(a):
        out = nl.ndarray((6, 32), dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.load(a.reshape((6, 32))))
        return out[0:3]

    with pytest.raises(nki.KernelError, match=r"return the whole HBM tensor out \(or a reshape of it\)"):
        nki.trace_kernel(part, x)
    with pytest.raises(nki.KernelError, match="only a whole HBM tensor .or a reshape of one. can be reshaped"):
        nki.trace_kernel(lambda a: a[0].reshape((96,)), x)


def test_bit_reinterpreting_views_are_a_located_error():
    def kernel(a):
        bits = nl.ndarray((128, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.memset(dst=bits, value=1 << 30)
        return returning(nisa.tensor_scalar(nl.load(a), np.greater_equal, bits.view(nl.float32)))

    with pytest.raises(nki.KernelError, match=r"\.view\('float32'\) reinterprets the bits as another dtype"):
        nki.trace_kernel(kernel, nki.ArgSpec((128, 16), np.float32))


def test_index_expressions_give_the_grid_order_whatever_dims_use_the_axes():
    # 2 x 2 max pooling with stride 1 over a 3 x 3 window grid: the access
    # t[i0, i1 + i3, i2 + i4] is [c, i1, i2, i3, i4] (numpy's broadcast shape), so axis=[3, 4]
    # reduces the window; in the order the dims use the axes it would be [c, i1, i3, i2, i4]
    # and the same call would reduce (i2, i4), silently, since both pairs are 2 x 2 here
    x = np.random.default_rng(10).normal(size=(8, 3, 3)).astype(np.float32)

    def kernel(a):
        c, h, w = a.shape
        i0 = nl.arange(c)[:, None, None, None, None]
        i1 = nl.arange(2)[None, :, None, None, None]
        i2 = nl.arange(2)[None, None, :, None, None]
        i3 = nl.arange(2)[None, None, None, :, None]
        i4 = nl.arange(2)[None, None, None, None, :]
        t = nl.load(a)
        view = t[i0, i1 + i3, i2 + i4]
        assert view.shape == (c, 2, 2, 2, 2)
        return returning(nl.max(view, axis=[3, 4]))

    want = np.max([x[:, a:a + 2, b:b + 2] for a in range(2) for b in range(2)], axis=0)
    for backend in ("bir", "klr"):
        np.testing.assert_array_equal(nki.simulate(kernel, backend=backend)(x), want)
