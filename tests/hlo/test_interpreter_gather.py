"""gather and scatter, interpreter against XLA CPU on hand-written modules covering the
dimension-number variants: implicit / leading / trailing index_vector_dim, collapsed and
batching dims, offset dims between batch dims, clamped (gather) and skipped (scatter)
out-of-bounds starts, duplicate targets with add / max / min / multiply / overwrite / a
non-commutative combiner, narrow floats summed in XLA's order and variadic scatter."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from tilecc.errors import InterpError
from tilecc.hlo.interpreter import evaluate_module
from tilecc.hlo.parser import parse_module
from tilecc.hlo.random_inputs import random_inputs
from tilecc.hlo.xla import XlaJob, run_many_on_xla, run_on_xla

pytestmark = pytest.mark.oracle

REPLICAS = 2


def _reducer(name: str, t: str, body: str) -> str:
    return (f"{name} {{\n  a = {t}[] parameter(0)\n  b = {t}[] parameter(1)\n"
            f"  ROOT c = {t}[] {body}\n}}\n")


ADD_S32 = _reducer("add", "s32", "add(a, b)")
ADD_F32 = _reducer("add", "f32", "add(a, b)")
CASES: dict[str, str] = {
    "gather take rows, implicit index vector": """HloModule g
ENTRY e {
  p = s32[5,3] parameter(0)
  idx = s32[4] parameter(1)
  ROOT g = s32[4,3] gather(p, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}
}
""",
    "gather 2-d starts, nothing collapsed": """HloModule g
ENTRY e {
  p = f32[4,5,6] parameter(0)
  idx = s32[3,2] parameter(1)
  ROOT g = f32[3,1,2,4] gather(p, idx), offset_dims={1,2,3}, collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,2,4}
}
""",
    "gather with batching dims": """HloModule g
ENTRY e {
  p = f32[3,5,4] parameter(0)
  idx = s32[3] parameter(1)
  ROOT g = f32[3,4] gather(p, idx), offset_dims={1}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=1, slice_sizes={1,1,4}
}
""",
    "gather leading index vector, offsets around batch dims": """HloModule g
ENTRY e {
  p = s32[6,7,8] parameter(0)
  idx = s32[2,3,4] parameter(1)
  ROOT g = s32[3,3,4,2] gather(p, idx), offset_dims={0,3}, collapsed_slice_dims={0}, start_index_map={2,0}, index_vector_dim=0, slice_sizes={1,3,2}, indices_are_sorted=false
}
""",
    "gather u8 indices, batching dim not first": """HloModule g
ENTRY e {
  p = s16[5,3,4] parameter(0)
  idx = u8[2,3,1] parameter(1)
  ROOT g = s16[2,3,2] gather(p, idx), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, operand_batching_dims={1}, start_indices_batching_dims={1}, index_vector_dim=2, slice_sizes={1,1,2}
}
""",
    "scatter add s32, duplicates and out of bounds": ADD_S32 + """ENTRY e {
  p = s32[5,3] parameter(0)
  idx = s32[6,1] parameter(1)
  u = s32[6,3] parameter(2)
  ROOT s = s32[5,3] scatter(p, idx, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
""",
    "scatter overwrite f32, last update wins": """HloModule s
set {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}
ENTRY e {
  p = f32[4] parameter(0)
  idx = s32[9] parameter(1)
  u = f32[9] parameter(2)
  ROOT s = f32[4] scatter(p, idx, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=set
}
""",
    "scatter max / min / multiply f32": _reducer("mx", "f32", "maximum(a, b)")
    + _reducer("mn", "f32", "minimum(a, b)") + _reducer("ml", "f32", "multiply(a, b)") + """
ENTRY e {
  p = f32[4] parameter(0)
  idx = s32[9,1] parameter(1)
  u = f32[9] parameter(2)
  a = f32[4] scatter(p, idx, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=mx
  b = f32[4] scatter(p, idx, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=mn
  c = f32[4] scatter(p, idx, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=ml
  ROOT t = (f32[4], f32[4], f32[4]) tuple(a, b, c)
}
""",
    "scatter windows partly out of bounds are skipped whole": ADD_S32 + """ENTRY e {
  p = s32[6,4] parameter(0)
  idx = s32[5,2] parameter(1)
  u = s32[5,2,3] parameter(2)
  ROOT s = s32[6,4] scatter(p, idx, u), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={1,0}, index_vector_dim=1, to_apply=add
}
""",
    "scatter with batching dims, leading index vector": ADD_S32 + """ENTRY e {
  p = s32[3,5] parameter(0)
  idx = s32[1,4,3] parameter(1)
  u = s32[4,3] parameter(2)
  ROOT s = s32[3,5] scatter(p, idx, u), update_window_dims={}, inserted_window_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={2}, scatter_dims_to_operand_dims={1}, index_vector_dim=0, to_apply=add
}
""",
    "scatter bf16 add in XLA's order, non-commutative combiner": """HloModule s
addb {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT c = bf16[] add(a, b)
}
twice {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  two = s32[] constant(2)
  m = s32[] multiply(a, two)
  ROOT c = s32[] subtract(m, b)
}
ENTRY e {
  p = bf16[3] parameter(0)
  idx = s32[40] parameter(1)
  u = bf16[40] parameter(2)
  q = s32[3] parameter(3)
  v = s32[40] parameter(4)
  a = bf16[3] scatter(p, idx, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=addb
  b = s32[3] scatter(q, idx, v), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=twice
  ROOT t = (bf16[3], s32[3]) tuple(a, b)
}
""",
    "scatter s32 multiply / maximum / xor with wrap-around": _reducer("ml", "s32", "multiply(a, b)")
    + _reducer("mx", "s32", "maximum(a, b)") + _reducer("xr", "s32", "xor(a, b)") + """
ENTRY e {
  p = s32[4] parameter(0)
  idx = s32[12,1] parameter(1)
  u = s32[12] parameter(2)
  a = s32[4] scatter(p, idx, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=ml
  b = s32[4] scatter(p, idx, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=mx
  c = s32[4] scatter(p, idx, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=xr
  ROOT t = (s32[4], s32[4], s32[4]) tuple(a, b, c)
}
""",
    "scatter f32 add, 3000 updates into 6 elements in XLA's order": _reducer("add", "f32", "add(a, b)")
    + """ENTRY e {
  p = f32[6] parameter(0)
  idx = s32[3000] parameter(1)
  u = f32[3000] parameter(2)
  ROOT s = f32[6] scatter(p, idx, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
""",
    "scatter f32 add, partly overlapping windows": _reducer("add", "f32", "add(a, b)") + """
ENTRY e {
  p = f32[7,2] parameter(0)
  idx = s32[30,1] parameter(1)
  u = f32[30,3,2] parameter(2)
  ROOT s = f32[7,2] scatter(p, idx, u), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
""",
    # a transposed operand is a strided view: every path must write a result of its own
    "scatter into a transposed operand: rows, elements, a computation": ADD_F32
    + ADD_S32.replace("add {", "addi {") + """
set {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}
ENTRY e {
  p = f32[4,3] parameter(0)
  t = f32[3,4] transpose(p), dimensions={1,0}
  q = s32[4,3] parameter(1)
  r = s32[3,4] transpose(q), dimensions={1,0}
  idx = s32[5] parameter(2)
  u = f32[5,4] parameter(3)
  v = s32[5,4] parameter(4)
  a = f32[3,4] scatter(t, idx, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  b = s32[3,4] scatter(r, idx, v), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=addi
  c = f32[3,4] scatter(t, idx, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=set
  ROOT o = (f32[3,4], s32[3,4], f32[3,4]) tuple(a, b, c)
}
""",
    "variadic scatter": """HloModule s
pair {
  a = s32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = f32[] parameter(3)
  s = s32[] add(a, c)
  m = f32[] maximum(b, d)
  ROOT t = (s32[], f32[]) tuple(s, m)
}
ENTRY e {
  p = s32[4,2] parameter(0)
  q = f32[4,2] parameter(1)
  idx = s32[5,1] parameter(2)
  u = s32[5,2] parameter(3)
  v = f32[5,2] parameter(4)
  ROOT s = (s32[4,2], f32[4,2]) scatter(p, q, idx, u, v), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=pair, unique_indices=false
}
""",
}


def case_inputs(module, seed: int) -> list[np.ndarray]:
    """Random inputs; parameters named idx* get small indices (negative and past the end
    included) so that in-bounds, clamped and skipped starts all occur."""
    inputs = random_inputs(module, REPLICAS, seed)
    rng = np.random.default_rng(100 + seed)
    for k, param in enumerate(module.entry.parameters):
        if param.name.startswith("idx"):
            low = 0 if inputs[k].dtype.kind == "u" else -2
            inputs[k] = rng.integers(low, 8, size=inputs[k].shape).astype(inputs[k].dtype)
        elif param.shape.to_text().startswith(("bf16", "f32[3000]", "f32[30,3,2]")):  # sums that stay finite
            inputs[k] = rng.standard_normal(inputs[k].shape).astype(inputs[k].dtype)
    return inputs


def compare(cases: dict[str, str], seeds: tuple[int, ...] = (0, 1)) -> None:
    jobs, runs = [], []
    for name, text in cases.items():
        if not text.startswith("HloModule"):
            text = "HloModule m\n" + text
        module = parse_module(text, name)
        for seed in seeds:
            inputs = case_inputs(module, seed)
            jobs.append(XlaJob("run", text, inputs, REPLICAS))
            runs.append((f"{name} seed {seed}", module, inputs))
    for (label, module, inputs), want in zip(runs, run_many_on_xla(jobs)):
        if isinstance(want, Exception):
            raise want
        got = evaluate_module(module, inputs, REPLICAS)
        assert len(got) == len(want), label
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape, label
            if g.dtype.kind not in "iub":  # floats (bf16 too): NaN == NaN, bit-exact otherwise
                g, w = g.astype(np.float64), w.astype(np.float64)
            np.testing.assert_array_equal(g, w, err_msg=label)


def test_gather_and_scatter_equal_xla() -> None:
    compare(CASES)


def test_segments_rng_fixture_scatters_equal_xla() -> None:
    """The segments_rng program (scatter-add / scatter-max of segment sums) with its Shardy
    marker custom-call replaced by a copy, and its optimized dump, against XLA."""
    programs = Path(__file__).resolve().parents[1] / "fixtures" / "hlo" / "programs"
    text = re.sub(r'custom-call\((\S+)\), custom_call_target="Sharding"[^\n]*', r"copy(\1)",
                  (programs / "segments_rng.short.hlo").read_text())
    assert "custom-call" not in text
    module = parse_module(text, "segments_rng")
    optimized = parse_module((programs / "segments_rng.optimized.hlo").read_text(), "optimized")
    for seed in (0, 1):
        inputs = random_inputs(module, 1, seed)
        want = run_on_xla(text, inputs, 1)
        for mod in (module, optimized):
            got = evaluate_module(mod, inputs, 1)
            assert len(got) == len(want) == 6
            for g, w in zip(got, want):
                assert g.dtype == w.dtype and g.shape == w.shape
                if g.dtype.kind == "f":
                    np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-6, equal_nan=True)
                else:
                    np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("text, message", [
    ("""HloModule g
ENTRY e {
  p = s32[5,3] parameter(0)
  idx = s32[4] parameter(1)
  ROOT g = s32[4,3] gather(p, idx), offset_dims={1}, collapsed_slice_dims={0}, index_vector_dim=1, slice_sizes={1,3}
}
""", "gather needs the start_index_map attribute"),
    ("""HloModule g
ENTRY e {
  p = s32[5,3] parameter(0)
  idx = s32[4] parameter(1)
  ROOT g = s32[4,3] gather(p, idx), offset_dims={1}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}
}
""", "1 offset_dims for 2 uncollapsed slice dims"),
    (ADD_S32.join(["HloModule s\n", """ENTRY e {
  p = s32[5,3] parameter(0)
  idx = s32[6,1] parameter(1)
  u = s32[6,3] parameter(2)
  ROOT s = s32[5,3] scatter(p, idx, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=3, to_apply=add
}
"""]), "index_vector_dim=3 is outside the indices' rank 2"),
])
def test_bad_dimension_numbers_are_refused(text: str, message: str) -> None:
    module = parse_module(text, "bad")
    inputs = [np.zeros((1,) + p.shape.dims, np.int32) for p in module.entry.parameters]
    with pytest.raises(InterpError, match=re.escape(message)):
        evaluate_module(module, inputs, 1)


def test_scatter_add_of_rows_flushes_subnormals_as_xla() -> None:
    """Whole-row windows (rows combined per round) and single elements: every update adds
    with XLA CPU's denormals-are-zero / flush-to-zero, so a ufunc.at shortcut would differ."""
    text = "HloModule m\n" + ADD_F32 + """ENTRY e {
  p = f32[4,3] parameter(0)
  idx = s32[6] parameter(1)
  u = f32[6,3] parameter(2)
  rows = f32[4,3] scatter(p, idx, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  q = f32[12] reshape(p)
  w = f32[18] reshape(u)
  idx2 = s32[18] parameter(3)
  cells = f32[12] scatter(q, idx2, w), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  ROOT t = (f32[4,3], f32[12]) tuple(rows, cells)
}
"""
    tiny = np.float32(np.finfo(np.float32).tiny)
    rng = np.random.default_rng(5)
    p = (rng.integers(-3, 4, (REPLICAS, 4, 3)) * tiny / 4).astype(np.float32)
    u = (rng.integers(-3, 4, (REPLICAS, 6, 3)) * tiny / 2).astype(np.float32)
    idx = rng.integers(0, 4, (REPLICAS, 6)).astype(np.int32)
    idx2 = rng.integers(0, 12, (REPLICAS, 18)).astype(np.int32)
    inputs = [p, idx, u, idx2]
    module = parse_module(text, "subnormal_scatter")
    want = run_on_xla(text, inputs, REPLICAS)
    got = evaluate_module(module, inputs, REPLICAS)
    for g, w in zip(got, want):
        assert g.tobytes() == w.tobytes()
    naive = p.reshape(REPLICAS, -1).copy()
    for lane in range(REPLICAS):
        np.add.at(naive[lane], idx2[lane], u[lane].reshape(-1))
    assert naive.tobytes() != got[1].tobytes()  # the inputs do reach the flush
