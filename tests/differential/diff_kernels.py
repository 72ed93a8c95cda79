"""Building KLR kernels for the differential tests and running them on both executors.

`run_both(kernel, inputs)` lowers the kernel with the real codegen, verifies the BIR,
round-trips it through BIR JSON, simulates it, interprets the KLR directly, and returns
both result dicts. `assert_agree` is the comparison contract of these tests:
- integer outputs: bit-exact;
- float outputs of element-wise arithmetic (exact=True): bit-exact, NaN == NaN (both sides
  compute in float32 and convert the same way);
- otherwise (reductions, whose summation order differs, and activation functions, which
  the interpreter evaluates in float64): |sim - ref| <= atol + rtol * |ref| in float32
  (defaults rtol 2e-6, atol 1e-6), NaN / inf at the same places; a bf16 or fp8 output may
  also differ by one unit in the last place of its format (the float32 values may round
  to neighbouring bf16 values).
"""

from __future__ import annotations

import numpy as np

from tilecc.bir.json import read_program_json, write_program_json
from tilecc.bir.verifier import verify_program
from tilecc.codegen.klr_to_bir import codegen_kernel
from tilecc.errors import InterpError, SimError
from tilecc.klr import ast as k
from tilecc.klr.interp import interpret_kernel, np_dtype
from tilecc.sim.execute import simulate

F32 = k.Dtype.float32
BF16 = k.Dtype.bfloat16
I32 = k.Dtype.int32
U32 = k.Dtype.uint32

FLOAT_SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 3e38, -1e-30, 0.5],
                          np.float32)


def values(dtype: k.Dtype, shape: tuple[int, ...], rng: np.random.Generator,
           specials: bool = True, low: float = -8.0, high: float = 8.0) -> np.ndarray:
    """Random values of `dtype`; floats and ints get their corner values sprinkled in."""
    npd = np_dtype(dtype)
    size = int(np.prod(shape))
    if npd.kind in "iu":
        info = np.iinfo(npd)
        flat = rng.integers(info.min, info.max, size=size, endpoint=True, dtype=np.int64).astype(npd)
        corners = np.array([info.min, info.max, 0, 1, info.max - 1, info.min + 1, 255, 7], np.int64)
        if specials:
            n = min(size, len(corners))
            flat[:n] = corners[:n].astype(npd)
        return flat.reshape(shape)
    flat = rng.uniform(low, high, size=size).astype(np.float32)
    if specials:
        n = min(size, len(FLOAT_SPECIALS))
        pos = rng.permutation(size)[:n]
        flat[pos] = FLOAT_SPECIALS[:n]
    return flat.astype(npd).reshape(shape)


class KernelBuilder:
    """HBM arguments, SB tiles and a body of KLR operators."""

    def __init__(self, name: str = "diff") -> None:
        self.name = name
        self.inputs: list[k.TensorName] = []
        self.outputs: list[k.TensorName] = []
        self.body: list[k.Operator] = []
        self.values: dict[str, np.ndarray] = {}

    def arg(self, name: str, value: np.ndarray, dtype: k.Dtype) -> k.TensorName:
        t = k.make_tensor(name, dtype, value.shape, k.Memory.hbm)
        self.inputs.append(t)
        self.values[name] = value
        return t

    def out(self, name: str, dtype: k.Dtype, shape: tuple[int, ...]) -> k.TensorName:
        t = k.make_tensor(name, dtype, shape, k.Memory.hbm)
        self.outputs.append(t)
        return t

    def tile(self, name: str, dtype: k.Dtype, shape: tuple[int, ...]) -> k.TensorName:
        return k.make_tensor(name, dtype, shape, k.Memory.sbuf)

    def load(self, name: str, value: np.ndarray, dtype: k.Dtype) -> k.TensorName:
        """An HBM input `name` and its SB copy `name_sb`."""
        hbm = self.arg(name, value, dtype)
        sb = self.tile(f"{name}_sb", dtype, value.shape)
        self.body.append(k.NcDmaCopy(sb, hbm))
        return sb

    def store(self, name: str, tile: k.TensorName) -> k.TensorName:
        shape = (tile.shape.par_dim,) + tuple(tile.shape.free_dims)
        hbm = self.out(name, tile.dtype, shape)
        self.body.append(k.NcDmaCopy(hbm, tile))
        return hbm

    def add(self, op: k.Operator) -> None:
        self.body.append(op)

    def kernel(self) -> k.Kernel:
        return k.Kernel(self.name, self.inputs, self.outputs, self.body)

    def run(self) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        return run_both(self.kernel(), self.values)

    def run_or_reject(self) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]] | None:
        """Both results, or None when BOTH executors reject the kernel (one rejecting
        alone fails the test)."""
        kernel = self.kernel()
        program = codegen_kernel(kernel)
        verify_program(program)
        sim = ref = None
        try:
            sim = simulate(program, self.values)
        except SimError as err:
            sim_error: Exception | None = err
        else:
            sim_error = None
        try:
            ref = interpret_kernel(kernel, self.values)
        except InterpError as err:
            ref_error: Exception | None = err
        else:
            ref_error = None
        assert (sim_error is None) == (ref_error is None), (
            f"only one executor rejects: simulator {sim_error!r}, interpreter {ref_error!r}")
        return None if sim is None or ref is None else (sim, ref)


def run_both(kernel: k.Kernel, inputs: dict[str, np.ndarray]
             ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    program = codegen_kernel(kernel)
    verify_program(program)
    program = read_program_json(write_program_json(program))
    return simulate(program, inputs), interpret_kernel(kernel, inputs)


def _ulp_neighbours(sim: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Elements whose raw bits differ by at most one unit in the last place."""
    bits = np.dtype(f"i{sim.dtype.itemsize}")
    a = sim.view(bits).astype(np.int64)
    b = ref.view(bits).astype(np.int64)
    return np.abs(a - b) <= 1


def assert_agree(sim: dict[str, np.ndarray], ref: dict[str, np.ndarray], *, exact: bool = False,
                 rtol: float = 2e-6, atol: float = 1e-6) -> None:
    assert sim.keys() == ref.keys()
    for name in ref:
        s, r = sim[name], ref[name]
        assert s.dtype == r.dtype and s.shape == r.shape, name
        if s.dtype.kind in "iu":
            np.testing.assert_array_equal(s, r, err_msg=name)
            continue
        s32, r32 = s.astype(np.float32), r.astype(np.float32)
        if exact:
            np.testing.assert_array_equal(s32, r32, err_msg=name)
            continue
        same_special = (np.isnan(s32) == np.isnan(r32)).all() and (
            np.isinf(s32) == np.isinf(r32)).all()
        assert same_special, f"{name}: NaN / inf at different places"
        finite = np.isfinite(r32)
        with np.errstate(invalid="ignore", over="ignore"):
            close = np.abs(s32 - r32) <= atol + rtol * np.abs(r32)
        if s.dtype != np.float32:
            close |= _ulp_neighbours(s, r)
        bad = finite & ~close
        assert not bad.any(), (f"{name}: {int(bad.sum())} elements differ, first at "
                               f"{np.argwhere(bad)[0].tolist()}: sim {s32[bad][0]!r} "
                               f"ref {r32[bad][0]!r}")
        np.testing.assert_array_equal(s32[~finite], r32[~finite], err_msg=name)
