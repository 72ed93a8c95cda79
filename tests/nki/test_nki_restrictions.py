"""Every documented restriction of nki.isa / nki.language is a KernelError that names the
instruction and argument and points at the kernel's own line (the line marked `# <-`)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl
from tilecc.nki import KernelError

R = nisa.reduce_cmd


def sb(shape, dtype=nl.float32):
    return nl.ndarray(shape, dtype=dtype, buffer=nl.sbuf)


def ps(shape, dtype=nl.float32):
    return nl.ndarray(shape, dtype=dtype, buffer=nl.psum)


def marked_line(fn) -> int:
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if "# <-" in line)


# ---------------------------------------------------------------- the cases

def partition_over_128(a):
    nl.ndarray((256, 4), dtype=nl.float32, buffer=nl.sbuf)  # <-


def psum_capacity(a):
    nl.ndarray((128, 8192), dtype=nl.float32, buffer=nl.psum)  # <-


def shape_mismatch(a):
    x, y = sb((128, 8)), sb((128, 4))
    nisa.tensor_tensor(dst=x, data1=x, data2=y, op=nl.add)  # <-


def partition_mismatch(a):
    x, y = sb((128, 8)), sb((64, 8))
    nisa.reciprocal(dst=y, data=x)  # <-


def scalar_for_tile(a):
    x = sb((128, 8))
    nisa.tensor_tensor(dst=x, data1=x, data2=1.0, op=nl.add)  # <-


def wide_tile_for_scalar(a):
    x = sb((128, 8))
    nisa.tensor_scalar(dst=x, data=x, op0=nl.add, operand0=x)  # <-


def hbm_for_tile(a):
    x = sb((128, 8))
    nisa.tensor_scalar(dst=x, data=a, op0=nl.add, operand0=1.0)  # <-


def partition_reduce_subtract(a):
    x, z = sb((128, 32)), sb((1, 32))
    nisa.tensor_partition_reduce(dst=z, op=nl.subtract, data=x)  # <-


def partition_reduce_banks(a):
    x, z = sb((128, 8)), sb((1, 8))
    nisa.tensor_partition_reduce(dst=z, op=nl.add, data=x)  # <-


def scalar_reduce_divide(a):
    x, c = sb((128, 8)), sb((128, 1))
    nisa.tensor_scalar_reduce(dst=x, data=x, op0=nl.add, operand0=1.0, reduce_op=nl.divide, reduce_res=c)  # <-


def cumulative_divide(a):
    x = sb((128, 8))
    nisa.tensor_scalar_cumulative(dst=x, src=x, op0=nl.add, op1=nl.divide, imm0=0.0)  # <-


def activation_reduce_max(a):
    x, c = sb((128, 8)), sb((128, 1))
    nisa.activation(dst=x, op=nl.exp, data=x, reduce_op=nl.maximum, reduce_res=c, reduce_cmd=R.reset_reduce)  # <-


def activation_alu_as_func(a):
    x = sb((128, 8))
    nisa.activation(dst=x, op=nl.add, data=x)  # <-


def activate2_bad_pair(a):
    x = sb((128, 8))
    nisa.activate2(dst=x, op=nl.relu, data=x, imm0=1.0, imm1=1.0, op0=nl.add, op1=nl.add)  # <-


def activate2_reverse_bypass(a):
    x = sb((128, 8))
    nisa.activate2(dst=x, op=nl.relu, data=x, imm0=0.0, imm1=0.0, op0=nl.bypass, op1=nl.bypass, reverse0=True)  # <-


def stt_bitvec(a):
    x = sb((128, 8), nl.int32)
    nisa.scalar_tensor_tensor(dst=x, data=x, op0=nl.bitwise_and, operand0=1, op1=nl.add, operand1=x)  # <-


def scan_unary(a):
    x = sb((128, 8))
    nisa.tensor_tensor_scan(dst=x, data0=x, data1=x, initial=0.0, op0=nl.abs, op1=nl.add)  # <-


def bitvec_on_float_ts(a):
    x = sb((128, 8))
    nisa.tensor_scalar(dst=x, data=x, op0=nl.bitwise_and, operand0=1)  # <-


def bitvec_on_float_tt(a):
    x, i = sb((128, 8)), sb((128, 8), nl.int32)
    nisa.tensor_tensor(dst=x, data1=i, data2=i, op=nl.bitwise_or)  # <-


def bitvec_on_float_reduce(a):
    x, c = sb((128, 8)), sb((128, 1))
    nisa.tensor_reduce(dst=c, op=nl.bitwise_xor, data=x, axis=1)  # <-


def mixed_op_kinds(a):
    x = sb((128, 8), nl.int32)
    nisa.tensor_scalar(dst=x, data=x, op0=nl.bitwise_and, operand0=3, op1=nl.add, operand1=1.0)  # <-


def op1_without_operand1(a):
    x = sb((128, 8))
    nisa.tensor_scalar(dst=x, data=x, op0=nl.add, operand0=1.0, op1=nl.multiply)  # <-


def unary_with_operand(a):
    x = sb((128, 8))
    nisa.tensor_scalar(dst=x, data=x, op0=nl.abs, operand0=2.0)  # <-


def scalar_engine_combo(a):
    x = sb((128, 8))
    nisa.tensor_scalar(dst=x, data=x, op0=nl.subtract, operand0=1.0, engine=nisa.scalar_engine)  # <-


def gpsimd_not_rsqrt(a):
    x = sb((128, 8))
    nisa.tensor_scalar(dst=x, data=x, op0=nl.add, operand0=1.0, engine=nisa.gpsimd_engine)  # <-


def reduce_axis_zero(a):
    x, c = sb((128, 8)), sb((128, 1))
    nisa.tensor_reduce(dst=c, op=nl.add, data=x, axis=0)  # <-


def reduce_axis_not_last(a):
    x, c = sb((128, 4, 8)), sb((128, 8))
    nisa.tensor_reduce(dst=c, op=nl.add, data=x, axis=1)  # <-


def reduce_negate_bitvec(a):
    x, c = sb((128, 8), nl.int32), sb((128, 1), nl.int32)
    nisa.tensor_reduce(dst=c, op=nl.bitwise_and, data=x, axis=1, negate=True)  # <-


def reduce_dst_size(a):
    x, c = sb((128, 4, 8)), sb((128, 8))
    nisa.tensor_reduce(dst=c, op=nl.add, data=x, axis=(1, 2))  # <-


def scalar_reduce_reverse(a):
    x, c = sb((128, 8)), sb((128, 1))
    nisa.tensor_scalar_reduce(dst=x, data=x, op0=nl.subtract, operand0=1.0, reduce_op=nl.add, reduce_res=c, reverse0=True)  # <-


def scalar_reduce_accumulate(a):
    x, c = sb((128, 8)), sb((128, 1))
    nisa.tensor_scalar_reduce(dst=x, data=x, op0=nl.add, operand0=1.0, reduce_op=nl.add, reduce_res=c, reduce_cmd=R.reduce)  # <-


def cumulative_int32(a):
    x = sb((128, 8), nl.int32)
    nisa.tensor_scalar_cumulative(dst=x, src=x, op0=nl.add, op1=nl.add, imm0=0.0)  # <-


def cumulative_load_without_imm1(a):
    x = sb((128, 8))
    nisa.tensor_scalar_cumulative(dst=x, src=x, op0=nl.add, op1=nl.add, imm0=0.0, reduce_cmd=R.load_reduce)  # <-


def exponential_init_without_load(a):
    x = sb((128, 8))
    nisa.exponential(dst=x, src=x, reduce_init=1.0)  # <-


def exponential_uint32_dst(a):
    x, u = sb((128, 8)), sb((128, 8), nl.uint32)
    nisa.exponential(dst=u, src=x)  # <-


def exponential_int_reduce_res(a):
    x, c = sb((128, 8)), sb((128, 1), nl.int32)
    nisa.exponential(dst=x, src=x, reduce_res=c, reduce_cmd=R.reset_reduce)  # <-


def bitvec_float_operand_tile(a):
    i, c = sb((128, 8), nl.int32), sb((128, 1))
    nisa.tensor_scalar(dst=i, data=i, op0=nl.bitwise_and, operand0=c)  # <-


def bf16_scale_tile(a):
    x, c = sb((128, 8)), sb((128, 1), nl.bfloat16)
    nisa.activation(dst=x, op=nl.exp, data=x, scale=c)  # <-


def memset_fraction_into_int(a):
    i = sb((128, 8), nl.int32)
    nisa.memset(dst=i, value=0.5)  # <-


def start_partition(a):
    x = sb((128, 8))
    nisa.memset(dst=x[40:80, :], value=0.0)  # <-


def activation_reduce_without_res(a):
    x = sb((128, 8))
    nisa.activation_reduce(dst=x, op=nl.exp, data=x, reduce_op=nl.add, reduce_res=None)  # <-


def exponential_tf32_src(a):
    x, t = sb((128, 8)), sb((128, 8), nl.tfloat32)
    nisa.exponential(dst=x, src=t)  # <-


def activate2_imm_dtypes(a):
    x, c, h = sb((128, 8)), sb((128, 1)), sb((128, 1), nl.bfloat16)
    nisa.activate2(dst=x, op=nl.relu, data=x, imm0=c, imm1=h, op0=nl.multiply, op1=nl.add)  # <-


def scalar_reduce_init(a):
    x, c = sb((128, 8)), sb((128, 1))
    nisa.tensor_scalar_reduce(dst=x, data=x, op0=nl.add, operand0=1.0, reduce_op=nl.add, reduce_res=c, reduce_init=2.0)  # <-


def iota_bad_pattern(a):
    x = sb((128, 8))
    nisa.iota(dst=x, pattern=[8])  # <-


def dma_engine_without_hwdge(a):
    x = sb((128, 8))
    nisa.dma_copy(dst=x, src=a, engine=nisa.engine.sync)  # <-


def reduce_res_shape(a):
    x, c = sb((128, 8)), sb((128, 2))
    nisa.exponential(dst=x, src=x, reduce_res=c, reduce_cmd=R.reset_reduce)  # <-


def dma_count(a):
    x = sb((128, 4))
    nisa.dma_copy(dst=x, src=a)  # <-


def dma_psum(a):
    p = ps((128, 8))
    nisa.dma_copy(dst=p, src=a)  # <-


def copy_gpsimd_psum(a):
    x, p = sb((128, 8)), ps((128, 8))
    nisa.tensor_copy(dst=x, src=p, engine=nisa.gpsimd_engine)  # <-


def iota_count(a):
    x = sb((128, 8))
    nisa.iota(dst=x, pattern=[[1, 4]])  # <-


def iota_psum(a):
    p = ps((128, 8))
    nisa.iota(dst=p, pattern=[[1, 8]])  # <-


def memset_string(a):
    x = sb((128, 8))
    nisa.memset(dst=x, value="zero")  # <-


def both_psum(a):
    p, q = ps((128, 8)), ps((128, 8))
    nisa.tensor_tensor(dst=p, data1=p, data2=q, op=nl.add)  # <-


def bad_reduce_cmd(a):
    x = sb((128, 8))
    nisa.activation(dst=x, op=nl.exp, data=x, reduce_cmd="reset")  # <-


def bad_engine(a):
    x = sb((128, 8))
    nisa.memset(dst=x, value=0.0, engine=nisa.scalar_engine)  # <-


def tile_op_arity(a):
    x = sb((128, 8))
    nl.add(x)  # <-


def isa_not_traced(a):
    x = sb((128, 8))
    nisa.nc_matmul_mx(dst=x, stationary=x, moving=x, stationary_scale=x, moving_scale=x)  # <-


def tile_op_on_hbm(a):
    nl.exp(a)  # <-


def tile_level_function(a):
    x = sb((128, 8))
    nl.matmul(x, x)  # <-


def index_out_of_bounds(a):
    x = sb((128, 8))
    x[:, 4:12]  # <-


def mgrid_out_of_bounds(a):
    ix, iy = nl.mgrid[0:128, 0:8]
    nl.load(a[ix + 1, iy])  # <-


def mask_compare(a):
    ix, iy = nl.mgrid[0:128, 0:8]
    nl.load(a[ix, iy], mask=(ix + iy < 64))  # <-


def mask_excludes_all(a):
    ix, iy = nl.mgrid[0:128, 0:8]
    nl.load(a[ix, iy], mask=(ix < 0))  # <-


def mask_on_a_missing_grid_axis(a):
    ix, iy, iz = nl.mgrid[0:128, 0:8, 0:2]
    nl.exp(sb((128, 8)), mask=(iz < 1))  # <-


def broadcast_wide_dim(a):
    x = sb((128, 8))
    x.broadcast_to((128, 16))  # <-


def tile_arithmetic_shapes(a):
    x, y = sb((128, 8)), sb((128, 4))
    x / y  # <-


def condition_on_tile(a):
    x = sb((128, 8))
    if x:  # <-
        pass


def not_a_dtype(a):
    nl.ndarray((128, 8), dtype=np.float64, buffer=nl.sbuf)  # <-


def returns_a_number(a):  # <-
    sb((128, 8))
    return 3


def returns_nothing(a):  # <-
    sb((128, 8))


CASES = [
    (partition_over_128, r"partition dimension 256 .* exceeds 128"),
    (psum_capacity, r"psum partition holds 16384"),
    (shape_mismatch, r"tensor_tensor: shape mismatch: data2 \[128, 4\] and data1 \[128, 8\]"),
    (partition_mismatch, r"reciprocal: dst has 64 partitions but data has 128"),
    (scalar_for_tile, r"tensor_tensor: data2 must be a tile in SBUF or PSUM, got 1.0"),
    (wide_tile_for_scalar, r"tensor_scalar: operand0 must be a scalar or a \[128, 1\] tile"),
    (hbm_for_tile, r"tensor_scalar: data must be a tile in SBUF or PSUM, got a \[128, 8\] hbm"),
    (partition_reduce_subtract, r"tensor_partition_reduce: op=nl.subtract is not allowed; .*supports add, average, bitwise_and, bitwise_or, max"),
    (partition_reduce_banks, r"element counts must be multiples of 32, data is \[128, 8\]"),
    (scalar_reduce_divide, r"tensor_scalar_reduce: reduce_op=nl.divide is not allowed"),
    (cumulative_divide, r"tensor_scalar_cumulative: op1=nl.divide is not allowed"),
    (activation_reduce_max, r"activation: reduce_op=nl.maximum is not allowed; activation supports add"),
    (activation_alu_as_func, r"activation: op=nl.add is not an activation function"),
    (activate2_bad_pair, r"activate2: \(op0, op1\) = \(nl.add, nl.add\) is not supported"),
    (activate2_reverse_bypass, r"activate2: reverse0 requires op0 to be set"),
    (stt_bitvec, r"scalar_tensor_tensor: op0=nl.bitwise_and is a bitvec operator"),
    (scan_unary, r"tensor_tensor_scan: op0=nl.abs is unary"),
    (bitvec_on_float_ts, r"tensor_scalar: bitvec operator bitwise_and needs integer dtypes, but data is float32"),
    (bitvec_on_float_tt, r"tensor_tensor: bitvec operator bitwise_or needs integer dtypes, but dst is float32"),
    (bitvec_on_float_reduce, r"tensor_reduce: bitvec operator bitwise_xor needs integer dtypes"),
    (mixed_op_kinds, r"must both be bitvec or both be arithmetic"),
    (op1_without_operand1, r"op1 and operand1 must both be given or both be None"),
    (unary_with_operand, r"operand0 must be None or 0 for the unary operator nl.abs"),
    (scalar_engine_combo, r"Scalar Engine supports op0=nl.multiply"),
    (gpsimd_not_rsqrt, r"GpSimd Engine is only allowed for nl.rsqrt"),
    (reduce_axis_zero, r"axis 0 \(the partition axis\) cannot be reduced"),
    (reduce_axis_not_last, r"axis \[1\] must be the last contiguous free dimension"),
    (reduce_negate_bitvec, r"negate is only applicable to arithmetic operators"),
    (reduce_dst_size, r"leaves 1 elements per partition, but dst \[128, 8\] has 8"),
    (scalar_reduce_reverse, r"reverse0 is not supported yet"),
    (scalar_reduce_accumulate, r"reduce_cmd=reduce_cmd.reduce cannot be expressed in KLR"),
    (cumulative_int32, r"src dtype int32 is not supported"),
    (cumulative_load_without_imm1, r"load_reduce needs imm1"),
    (exponential_init_without_load, r"reduce_init should be unset or 0.0"),
    (exponential_uint32_dst, r"exponential: dst dtype uint32 is not supported"),
    (exponential_int_reduce_res, r"reduce_res must have a float dtype, got int32"),
    (bitvec_float_operand_tile, r"operand0 tile of a bitvec operator must hold integers, got float32"),
    (bf16_scale_tile, r"activation: scale tile must be float32, got bfloat16"),
    (memset_fraction_into_int, r"value 0.5 does not fit the integer dtype int32"),
    (start_partition, r"an access of 40 partitions of sbuf starts at partition 40; it must start at 0 / 64"),
    (activation_reduce_without_res, r"activation_reduce: reduce_op and reduce_res are required"),
    (exponential_tf32_src, r"exponential: src dtype tfloat32 is not supported"),
    (activate2_imm_dtypes, r"activate2: imm0 \(float32\) and imm1 \(bfloat16\) tiles must have the same dtype"),
    (scalar_reduce_init, r"reduce_init should only be set when reduce_cmd is load_reduce"),
    (iota_bad_pattern, r"iota: pattern is a list of \[step, num\] int pairs"),
    (dma_engine_without_hwdge, r"engine is only valid with dge_mode=nisa.dge_mode.hwdge"),
    (reduce_res_shape, r"reduce_res must be a \[128, 1\] tile"),
    (dma_count, r"dma_copy: dst \[128, 4\] and src \[128, 8\] must hold the same number of elements"),
    (dma_psum, r"dma_copy: dst must be a tile in HBM or SBUF"),
    (copy_gpsimd_psum, r"GpSimd Engine cannot access PSUM"),
    (iota_count, r"pattern covers 4 elements but dst has 8"),
    (iota_psum, r"iota: dst must be a tile in SBUF"),
    (memset_string, r"memset: value must be a compile-time number"),
    (both_psum, r"data1 and data2 cannot both be in PSUM"),
    (bad_reduce_cmd, r"reduce_cmd must be one of nisa.reduce_cmd.idle"),
    (bad_engine, r"memset: engine must be one of nisa.engine.vector, nisa.engine.gpsimd"),
    (tile_op_arity, r"nl.add takes two operands, got 1 argument"),
    (tile_op_on_hbm, r"nl.exp: <hbm tensor a\[128, 8\] float32> is in HBM; load it into a tile first"),
    (isa_not_traced, r"nisa.nc_matmul_mx is not supported by tilecc: the MX quantized family"),
    (tile_level_function, r"nl.matmul: x \[128, 8\] and y \[128, 8\]: x's free size must be y's "
                          r"partition size"),
    (index_out_of_bounds, r"slice 4:12 is out of bounds for a dimension of size 8"),
    (mgrid_out_of_bounds, r"index range \[1, 128\] is out of bounds for a dimension of size 128 .*a mask= keeping"),
    (mask_compare, r"nl.load: the mask \(k0 \+ k1 < 64\) keeps a region that is not a box"),
    (mask_excludes_all, r"nl.load: the mask \(k0 < 0\) excludes the whole tile"),
    (mask_on_a_missing_grid_axis, r"nl.exp: the mask bounds grid axis 2 but .* has 2 dims"),
    (broadcast_wide_dim, r"cannot broadcast a dim of size 8"),
    (tile_arithmetic_shapes, r"nl.divide: shape mismatch: \[128, 8\] and \[128, 4\]"),
    (condition_on_tile, r"has no values while the kernel is traced"),
    (not_a_dtype, r"float64 is not an NKI dtype"),
    (returns_a_number, r"kernel results must be HBM tensors, got 3"),
    (returns_nothing, r"must return its output tensor\(s\) \(HBM tensors\) or write into an argument"),
]


@pytest.mark.parametrize("kernel, message", CASES, ids=[c[0].__name__ for c in CASES])
def test_error_points_at_the_kernel_line(kernel, message):
    with pytest.raises(KernelError, match=message) as info:
        nki.trace_kernel(kernel, nki.ArgSpec((128, 8), np.float32))
    err = info.value
    assert err.path == __file__
    assert err.line == marked_line(kernel)
    assert err.col > 0 and "# <-" in err.source_line
    assert err.render().splitlines()[1] == err.source_line.rstrip("\n")
    assert str(err).startswith(f"{__file__}:{err.line}:{err.col}: error: ")


def test_error_inside_a_helper_points_at_the_helper_line():
    def helper(tile):
        nisa.reciprocal(dst=tile, data=1.0)  # <-

    def kernel(a):
        helper(sb((128, 8)))

    with pytest.raises(KernelError) as info:
        nki.trace_kernel(kernel, nki.ArgSpec((128, 8), np.float32))
    assert info.value.line == marked_line(helper)


def test_isa_outside_a_trace():
    with pytest.raises(KernelError, match="need a kernel traced by tilecc.nki.jit") as info:
        nl.ndarray((128, 8), dtype=nl.float32)  # <-
    assert info.value.line == marked_line(test_isa_outside_a_trace)


def test_unknown_names_stay_attribute_errors():
    with pytest.raises(AttributeError):
        nisa.no_such_instruction
    with pytest.raises(AttributeError):
        nl.no_such_name

