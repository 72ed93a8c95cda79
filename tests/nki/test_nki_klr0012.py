"""Differential check against KLR's own NKI frontend: the real kernels in tests/fixtures/klr0012
(each with the KLR JSON the klr 0.0.12 tool wrote for it),
with only their imports changed to tilecc.nki, trace with tilecc; the tool's KLR (read by
tilecc.klr.read) and tilecc's trace give the same outputs on the same random inputs, on the
KLR interpreter and through BIR on the simulator."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import tilecc.nki as nki
from tilecc.klr.interp import interpret_kernel
from tilecc.klr.read import read_kernel_file
from tilecc.nki.driver import run_traced

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "klr0012"
KERNELS = sorted(p.stem for p in FIXTURES.glob("*.py"))
IMPORTS = {"import nki\n": "import tilecc.nki as nki\n",
           "import nki.isa as nisa\n": "import tilecc.nki.isa as nisa\n",
           "import nki.language as nl\n": "import tilecc.nki.language as nl\n"}


def load_ported(stem: str, tmp_path: Path):
    source = (FIXTURES / f"{stem}.py").read_text()
    for old, new in IMPORTS.items():
        source = source.replace(old, new)
    path = tmp_path / f"{stem}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, path


def random_array(rng, shape, dtype):
    if dtype == "int32":
        return rng.integers(-2**31, 2**31, size=shape, dtype=np.int64).astype(np.int32)
    values = rng.normal(0.0, 4.0, size=shape)
    return values.astype(ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype))


@pytest.mark.parametrize("stem", [k for k in KERNELS if k != "k05_ts_int32_bitwise"])
def test_same_results_as_the_klr_tool(stem, tmp_path):
    module, _ = load_ported(stem, tmp_path)
    specs = module.KLR_ARGS["kernel"]
    rng = np.random.default_rng(12)
    params = list(module.kernel.__code__.co_varnames[:len(specs)])
    arrays = {name: random_array(rng, shape, dtype) for name, (shape, dtype) in zip(params, specs)}

    tool = read_kernel_file(str(FIXTURES / f"{stem}.klr.json"))
    want = interpret_kernel(tool, {t.name: arrays[t.name] for t in tool.inputs})

    traced = nki.trace_kernel(module.kernel, **arrays)
    assert sorted(t.name for t in traced.kernel.outputs) == sorted(want)
    for backend in ("klr", "bir"):
        got = dict(zip((t.name for t in traced.kernel.outputs), run_traced(traced, arrays, backend)))
        for name, expected in want.items():
            assert got[name].dtype == expected.dtype
            np.testing.assert_array_equal(got[name], expected, err_msg=f"{name} ({backend})")


def test_mixed_bitvec_and_arithmetic_ops_are_rejected(tmp_path):
    """k05 ends with tensor_scalar(op0=bitwise_invert, op1=add), which the 0.0.12 tool traced
    but the NKI docs forbid ("op0 and op1 must be of the same type")."""
    module, path = load_ported("k05_ts_int32_bitwise", tmp_path)
    with pytest.raises(nki.KernelError, match="must both be bitvec or both be arithmetic") as info:
        nki.trace_kernel(module.kernel, nki.ArgSpec((128, 512), np.int32), nki.ArgSpec((128, 512), np.int32))
    lines = path.read_text().splitlines()
    assert info.value.path == str(path) and "np.bitwise_invert" in lines[info.value.line - 1]
