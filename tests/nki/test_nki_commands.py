"""`tilecc trace` and `tilecc run` on Python kernels, and the nki demo stage."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from tilecc.cli import main
from tilecc.klr.read import read_kernel_json
from tilecc.nki.driver import trace_kernel

ROOT = Path(__file__).resolve().parents[2]
SOFTMAX = ROOT / "examples" / "kernels" / "softmax_row.py"
PARTITION = ROOT / "examples" / "kernels" / "partition_reduce.py"


@pytest.fixture
def inputs(tmp_path):
    rng = np.random.default_rng(3)
    a = rng.normal(size=(128, 64)).astype(np.float32)
    np.save(tmp_path / "a.npy", a)
    return a


def test_trace_writes_klr_json_that_reads_back(tmp_path, inputs, capsys):
    out = tmp_path / "softmax.klr.json"
    assert main(["trace", f"{SOFTMAX}:softmax_row", "--input", f"a={tmp_path / 'a.npy'}", "-o", str(out)]) == 0
    kernel = read_kernel_json(out.read_text(), str(out))
    import importlib.util
    spec = importlib.util.spec_from_file_location("softmax_row", SOFTMAX)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert kernel == trace_kernel(module.softmax_row, inputs).kernel
    assert [t.name for t in kernel.inputs] == ["a"] and kernel.name == "softmax_row.softmax_row"


def test_run_writes_one_npy_per_output(tmp_path, inputs, capsys):
    x = np.random.default_rng(4).normal(size=(128, 64)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    out_dir = tmp_path / "results" / "nested"
    assert main(["run", f"{PARTITION}:partition_reduce", "--input", f"x={tmp_path / 'x.npy'}",
                 "--out", str(out_dir)]) == 0
    np.testing.assert_allclose(np.load(out_dir / "col_sum.npy"), x.sum(axis=0, keepdims=True), rtol=1e-4,
                               atol=1e-4)
    np.testing.assert_array_equal(np.load(out_dir / "col_max.npy"), x.max(axis=0, keepdims=True))
    assert "col_max.npy: float32[1, 64]" in capsys.readouterr().out


BAD_KERNEL = '''\
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


def kernel(a):
    x = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=x, data=x, op0=nl.bitwise_and, operand0=3)
    return a


def crash(a):
    return a.missing_attribute
'''


@pytest.mark.parametrize("function, line, message", [
    ("kernel", 7, "nisa.tensor_scalar: bitvec operator bitwise_and needs integer dtypes, but data is float32"),
    ("crash", 12, "the kernel raised AttributeError"),
])
def test_kernel_errors_are_one_line_at_the_kernel_line(tmp_path, inputs, capsys, function, line, message):
    path = tmp_path / "bad.py"
    path.write_text(BAD_KERNEL)
    out = tmp_path / "out.json"
    assert main(["trace", f"{path}:{function}", "--input", f"a={tmp_path / 'a.npy'}", "-o", str(out)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"{path}:{line}:") and message in err[0]
    assert err[1] == BAD_KERNEL.splitlines()[line - 1] and err[2].strip() == "^"
    assert not out.exists()


@pytest.mark.parametrize("argv, message", [
    (["trace", "nothere.py:k", "--input", "a=a.npy"], "nothere.py: no such file"),
    (["trace", "{softmax}:nope", "--input", "a={a}"], "no function 'nope'"),
    (["trace", "{softmax}:softmax_row", "--input", "b={a}"], "has no parameter 'b'"),
    (["trace", "{softmax}:softmax_row"], "no --input for parameter(s) a"),
    (["trace", "{softmax}:softmax_row", "--input", "a"], "expected NAME=FILE.npy"),
    (["trace", "{softmax}:softmax_row", "--input", "a={tmp}/none.npy"], "cannot read"),
    (["run", "{softmax}:softmax_row", "--input", "a={a}", "--out", "{tmp}/o", "--replicas", "2"],
     "--replicas / --partitions apply to HLO modules"),
])
def test_bad_command_lines(tmp_path, inputs, capsys, argv, message):
    argv = [a.format(softmax=SOFTMAX, a=tmp_path / "a.npy", tmp=tmp_path) for a in argv]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.splitlines()) == 1


def test_syntax_error_in_kernel_file(tmp_path, capsys):
    path = tmp_path / "broken.py"
    path.write_text("def kernel(a):\n    return a +\n")
    np.save(tmp_path / "a.npy", np.zeros((2, 2), np.float32))
    assert main(["trace", f"{path}:kernel", "--input", f"a={tmp_path / 'a.npy'}"]) == 1
    assert capsys.readouterr().err.startswith(f"{path}:2:")


def test_demo_stage_prints_bir_and_passes():
    from tilecc.demo_stages import nki as stage
    out = io.StringIO()
    assert stage.run_stage(ROOT / "examples", out)
    text = out.getvalue()
    assert "Exponential-2" in text and "DveReadAccumulator" in text
    assert text.count("[ok]") == 2


SPMD_PRODUCT = Path(__file__).resolve().parent / "corpus" / "spmd_tile_product.py"


def test_trace_and_run_a_launch_grid_target(tmp_path):
    rng = np.random.default_rng(6)
    a = rng.random((256, 1024)).astype(np.float16)
    b = rng.random((256, 1024)).astype(np.float16)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    inputs = ["--input", f"x_input={tmp_path / 'a.npy'}", "--input", f"y_input={tmp_path / 'b.npy'}"]
    out = tmp_path / "spmd.klr.json"
    assert main(["trace", f"{SPMD_PRODUCT}:spmd_product[2,2]", *inputs, "-o", str(out)]) == 0
    kernel = read_kernel_json(out.read_text(), str(out))
    assert len(kernel.body) == 4 * 4                  # 4 programs x (2 loads, multiply, store)
    assert main(["run", f"{SPMD_PRODUCT}:spmd_product[2,2]", *inputs, "--out",
                 str(tmp_path / "o")]) == 0
    np.testing.assert_array_equal(np.load(tmp_path / "o" / "z_output.npy"), a * b)


@pytest.mark.parametrize("target", ["k.py:fn[0]", "k.py:fn[2,]", "k.py:fn[a]"])
def test_bad_launch_grid_target_is_one_line_error(target, capsys):
    assert main(["trace", target]) == 1
    assert "expected FILE.py:FUNCTION or FILE.py:FUNCTION[GX,GY]" in capsys.readouterr().err


BF16_KERNEL = '''\
import tilecc.nki.language as nl


def halve(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.multiply(nl.load(x), 0.5))
    return out
'''


def test_run_and_trace_read_bfloat16_npy_inputs(tmp_path, capsys):
    # numpy saves bfloat16 as raw 2-byte records ('<V2'); they are bfloat16 arguments
    import ml_dtypes
    (tmp_path / "k.py").write_text(BF16_KERNEL)
    x = np.array([[1.5, -3.0, 1e30, -0.0], [2.0, np.inf, -7.25, 3.0]], ml_dtypes.bfloat16)
    np.save(tmp_path / "x.npy", x)
    assert np.load(tmp_path / "x.npy").dtype.kind == "V"
    target = f"{tmp_path / 'k.py'}:halve"
    assert main(["run", target, "--input", f"x={tmp_path / 'x.npy'}", "--out", str(tmp_path / "o")]) == 0
    got = np.load(tmp_path / "o" / "out.npy").view(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(got.astype(np.float32), x.astype(np.float32) * 0.5)
    assert main(["trace", target, "--input", f"x={tmp_path / 'x.npy'}", "-o", str(tmp_path / "k.json")]) == 0
    assert read_kernel_json((tmp_path / "k.json").read_text(), "k.json").inputs[0].dtype.name == "bfloat16"


def test_raw_one_byte_records_are_a_clear_error(tmp_path, capsys):
    import ml_dtypes
    (tmp_path / "k.py").write_text(BF16_KERNEL)
    np.save(tmp_path / "x.npy", np.zeros((2, 4), ml_dtypes.float8_e4m3fn))
    assert main(["run", f"{tmp_path / 'k.py'}:halve", "--input", f"x={tmp_path / 'x.npy'}",
                 "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert "raw 1-byte records" in err and "Traceback" not in err


VECTOR_KERNEL = '''\
import numpy as np
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


def affine(v):
    out = nl.ndarray(v.shape, dtype=v.dtype, buffer=nl.shared_hbm)
    nl.store(out, nisa.tensor_scalar(nl.load(v), np.multiply, -3.0, op1=np.add, operand1=1.0))
    return out
'''


def test_trace_codegen_sim_of_a_1d_argument(tmp_path, capsys):
    # KLR gives a 1-d tensor of n elements the shape [1, n]; `tilecc sim` takes the 1-d .npy
    (tmp_path / "k.py").write_text(VECTOR_KERNEL)
    v = np.random.default_rng(5).normal(size=(100,)).astype(np.float32)
    np.save(tmp_path / "v.npy", v)
    spec = f"v={tmp_path / 'v.npy'}"
    assert main(["trace", f"{tmp_path / 'k.py'}:affine", "--input", spec, "-o", str(tmp_path / "k.json")]) == 0
    assert main(["codegen", str(tmp_path / "k.json"), "-o", str(tmp_path / "b.json")]) == 0
    assert main(["sim", str(tmp_path / "b.json"), "--input", spec, "--out", str(tmp_path / "o")]) == 0
    got = np.load(tmp_path / "o" / "out.npy")
    assert got.shape == (1, 100)
    np.testing.assert_array_equal(got[0], v * np.float32(-3) + np.float32(1))


PUBLIC_IMPORTS = '''\
import numpy as np
{imports}


@nki.jit
def scaled_add(a_input, b_input):
    c_output = nl.ndarray(a_input.shape, dtype=a_input.dtype, buffer=nl.shared_hbm)
    a_tile = nl.load(a_input)
    b_tile = nl.load(b_input)
    nl.store(c_output, value=nisa.tensor_tensor(a_tile, nl.multiply(b_tile, 2.0), op=np.add))
    return c_output
'''


@pytest.mark.parametrize("imports", [
    "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\nimport neuronxcc.nki.isa as nisa",
    "from neuronxcc import nki\nfrom neuronxcc.nki import language as nl, isa as nisa",
    "import nki\nimport nki.language as nl\nimport nki.isa as nisa",
])
def test_published_kernels_run_with_their_own_imports(tmp_path, capsys, imports):
    import sys
    names = ("neuronxcc", "neuronxcc.nki", "nki", "nki.language")
    before = {name: sys.modules.get(name) for name in names}
    (tmp_path / "k.py").write_text(PUBLIC_IMPORTS.format(imports=imports))
    rng = np.random.default_rng(6)
    a, b = (rng.normal(size=(64, 32)).astype(np.float32) for _ in range(2))
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    assert main(["run", f"{tmp_path / 'k.py'}:scaled_add", "--input", f"a_input={tmp_path / 'a.npy'}",
                 "--input", f"b_input={tmp_path / 'b.npy'}", "--out", str(tmp_path / "o")]) == 0
    np.testing.assert_array_equal(np.load(tmp_path / "o" / "c_output.npy"), a + b * np.float32(2))
    assert {name: sys.modules.get(name) for name in names} == before   # the aliases are gone


POOL_KERNEL = '''\
import tilecc.nki.language as nl


def mean_pool(x, size, gain):
    rows, cols = x.shape
    out = nl.ndarray((rows, cols // size), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    windows = t.ap([[cols, rows], [size, cols // size], [1, size]])
    nl.store(out, nl.multiply(nl.sum(windows, axis=[2]), gain / size))
    return out
'''


def test_scalar_arguments_are_numbers_or_0d_npy_files(tmp_path, capsys):
    (tmp_path / "k.py").write_text(POOL_KERNEL)
    x = np.random.default_rng(9).normal(size=(16, 12)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "gain.npy", np.float32(2.0))   # a 0-d array
    args = ["--input", f"x={tmp_path / 'x.npy'}", "--input", "size=3", "--input", f"gain={tmp_path / 'gain.npy'}"]
    assert main(["run", f"{tmp_path / 'k.py'}:mean_pool", *args, "--out", str(tmp_path / "o")]) == 0
    np.testing.assert_allclose(np.load(tmp_path / "o" / "out.npy"), x.reshape(16, 4, 3).mean(axis=2) * 2,
                               rtol=1e-6)
    assert main(["trace", f"{tmp_path / 'k.py'}:mean_pool", *args, "-o", str(tmp_path / "k.json")]) == 0
    kernel = read_kernel_json((tmp_path / "k.json").read_text(), "k.json")
    assert [t.name for t in kernel.inputs] == ["x"]
