"""Kernel report data: BIR dependencies through memory, operator origins, source lines,
the check and its error map; page JSON escaping."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tilecc.bir.enums import BirDtype, EngineType, MemoryKind
from tilecc.bir.inst import AccessPattern, Immediate, InstDveReadAccumulator, InstMemset, \
    InstTensorCopy, MemoryLocation, Program
from tilecc.codegen.klr_to_bir import codegen_kernel
from tilecc.demo_stages.nki import load_example
from tilecc.nki.driver import trace_kernel
from tilecc.viz.bir_deps import access_elements, memory_dependencies
from tilecc.viz.kernel_views import check_outputs, kernel_section, lower_with_origins
from tilecc.viz.page import embed_json
from tilecc.viz.plots import error_map

EXAMPLES = Path(__file__).parents[2] / "examples"
F32 = BirDtype.float32


def _softmax():
    example = load_example(EXAMPLES / "kernels" / "softmax_row.py")
    traced = trace_kernel(example.KERNEL, *example.make_inputs(np.random.default_rng(0)))
    return traced.kernel


def test_access_elements_cover_partition_and_free_pairs_with_broadcast_and_reverse():
    ap = AccessPattern("t", F32, 5, ((8, 2), (1, 3)))
    assert access_elements(ap).tolist() == [5, 6, 7, 13, 14, 15]
    assert access_elements(AccessPattern("t", F32, 0, ((8, 2), (0, 3)))).tolist() == \
        [0, 0, 0, 8, 8, 8]
    assert access_elements(AccessPattern("t", F32, 3, ((4, 1), (-1, 4)))).tolist() == \
        [3, 2, 1, 0]


def test_read_after_write_edges_name_the_last_writer_of_each_element():
    loc = MemoryLocation("t", MemoryKind.SB, F32, 2, 32)   # 2 partitions x 8 floats
    other = MemoryLocation("u", MemoryKind.SB, F32, 2, 32)
    left = AccessPattern("t", F32, 0, ((8, 2), (1, 4)))
    right = AccessPattern("t", F32, 4, ((8, 2), (1, 4)))
    whole = AccessPattern("t", F32, 0, ((8, 2), (1, 8)))
    dst = AccessPattern("u", F32, 0, ((8, 2), (1, 8)))
    insts = [InstMemset("m0", EngineType.Pool, [Immediate(F32, 0.0)], [left]),
             InstMemset("m1", EngineType.Pool, [Immediate(F32, 1.0)], [right]),
             InstMemset("m2", EngineType.Pool, [Immediate(F32, 2.0)], [left]),   # m0 is dead
             InstTensorCopy("c", EngineType.Pool, [whole], [dst]),
             InstDveReadAccumulator("d", EngineType.DVE, [dst], [])]
    program = Program("p", [loc, other], [], [], insts)
    # the drain d only writes u: no edge from c
    assert memory_dependencies(program) == [(1, 3, "t"), (2, 3, "t")]


def test_softmax_dependencies_and_origins():
    program, origins = lower_with_origins(_softmax())
    names = [i.name for i in program.instructions]
    assert names == [i.name for i in codegen_kernel(_softmax()).instructions]
    edges = {(names[w], names[r], m) for w, r, m in memory_dependencies(program)}
    assert {("NcDmaCopy-0", "TensorReduce-1", "x"), ("TensorReduce-1", "Exponential-2", "row_max"),
            ("DveReadAccumulator-3", "Reciprocal-4", "row_sum"),
            ("TensorScalar-5", "NcDmaCopy-6", "y")} <= edges
    # two row tiles: every instruction of the second comes from the second half of the KLR
    assert origins == sorted(origins) and len(set(origins)) == 12


def test_kernel_section_links_operators_to_their_kernel_lines():
    section = kernel_section(_softmax(), prefix="t")
    data = section.data
    source = data["source"]
    assert data["file"].endswith("softmax_row.py") and source
    for op in data["klr"]:
        assert op["line"] is not None and op["bir"]
        called = source[op["line"] - 1]
        assert "nisa." in called or "nl." in called       # the kernel line that emitted it
    assert "dma_copy" in source[data["klr"][0]["line"] - 1]
    assert {b["klr"] for b in data["bir"]} == set(range(len(data["klr"])))


def test_error_map_blanks_equal_cells_nan_included_and_marks_non_finite():
    got = np.array([[1.0, np.nan, np.inf, -2.0], [0.0, 5.0, -np.inf, 3.0]], dtype=np.float32)
    want = np.array([[1.0, np.nan, 1.0, -2.5], [0.0, np.nan, -np.inf, 3.0]], dtype=np.float32)
    diff = error_map(got, want)
    assert np.isnan(diff[0, 0]) and np.isnan(diff[0, 1]) and np.isnan(diff[1, 2])
    assert diff[0, 2] == np.inf and diff[1, 1] == np.inf and diff[0, 3] == 0.5


def test_check_outputs_counts_differences_and_honours_a_tolerance():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    b = a.copy()
    b[1, 2] = np.iinfo(np.int32).min            # wrap-around value
    exact = check_outputs([("out", a, a)], "ref")
    assert exact.ok and exact.text == "out: equal to the ref (6 elements)"
    off = check_outputs([("out", a, b)], "ref")
    assert not off.ok and "1 of 6 elements differ" in off.text
    assert off.image is not None and off.image.startswith("data:image/png;base64,")
    x = np.array([1.0, 2.0], dtype=np.float32)
    near = check_outputs([("y", x, x + 1e-7)], "ref", {"rtol": 1e-5, "atol": 1e-6})
    assert near.ok and "within rtol=1e-05, atol=1e-06" in near.text
    shape = check_outputs([("y", x, x[:1])], "ref")
    assert not shape.ok and "shape [2]" in shape.text


def test_embedded_json_cannot_end_its_script_element():
    text = embed_json({"line": "</script><script>alert(1)</script> & <!--"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"line": "</script><script>alert(1)</script> & <!--"}
