"""KLR JSON reader / writer: the real klr 0.0.12 files, HEAD round trips, and bad input."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any, Callable

import pytest

from tilecc.errors import CodegenError, ParseError
from tilecc.klr import ast as k
from tilecc.klr.read import (kernel_to_doc, read_kernel_doc, read_kernel_file, read_kernel_json,
                             write_kernel_json)

KLR_0012 = Path(__file__).resolve().parents[1] / "fixtures" / "klr0012"


def load_0012(name: str) -> dict[str, Any]:
    return json.loads((KLR_0012 / f"{name}.klr.json").read_text())


def test_k01_converted_to_head_ast() -> None:
    kern = read_kernel_file(str(KLR_0012 / "k01_ts_basic_f32.klr.json"))
    assert kern.name == "k01_ts_basic_f32.kernel"
    assert [t.name for t in kern.inputs] == ["a"] and [t.name for t in kern.outputs] == ["out"]
    assert all(t.address.memory == k.Memory.hbm for t in kern.inputs + kern.outputs)
    load, ts, save = kern.body
    assert isinstance(load, k.NcDmaCopy) and load.src == kern.inputs[0]
    assert isinstance(load.dst, k.TensorName) and load.dst.address.memory == k.Memory.sbuf
    assert isinstance(ts, k.TensorScalar)
    assert (ts.op0, ts.imm0, ts.op1, ts.imm1) == (k.AluOp.subtract, k.Immediate(1.0),
                                                  k.AluOp.bypass, k.Immediate(0.0))
    assert ts.reverse == k.TensorScalarReverseOps.none and ts.src is load.dst
    assert isinstance(save, k.NcDmaCopy) and save.dst == kern.outputs[0]
    assert load.dst.shape == k.Shape(128, (512,)) and load.dst.address.free_size == 2048


def test_k05_int_ops_and_k12_memset() -> None:
    k05 = read_kernel_file(str(KLR_0012 / "k05_ts_int32_bitwise.klr.json"))
    ops = [op.op0.name for op in k05.body if isinstance(op, k.TensorScalar)]
    assert ops == ["bitwise_and", "bitwise_or", "bitwise_xor", "logical_shift_left",
                   "logical_shift_right", "bitwise_not", "bitwise_not"]
    k12 = read_kernel_file(str(KLR_0012 / "k12_zeros_memset.klr.json"))
    sets = [op for op in k12.body if isinstance(op, k.MemSet)]
    assert [(s.value, s.dtype) for s in sets] == [(k.Immediate(0.0), k.Dtype.float32),
                                                 (k.Immediate(0), k.Dtype.int32)]
    assert isinstance(sets[1].value.value, int)
    # written but never loaded arguments are outputs only, even if not returned (outi)
    assert k12.inputs == [] and [t.name for t in k12.outputs] == ["out", "outi"]


def test_k06_basic_slice_and_dtype_change() -> None:
    k06 = read_kernel_file(str(KLR_0012 / "k06_ts_bf16.klr.json"))
    load16 = k06.body[3]
    assert isinstance(load16, k.NcDmaCopy) and isinstance(load16.src, k.AccessBasic)
    assert load16.src.indexes == (k.Slice(0, 128, 1), k.Slice(0, 256, 1))
    assert k.access_shape(load16.src) == (128, (256,))
    assert k.access_tensor(load16.src).dtype == k.Dtype.bfloat16
    assert k.access_tensor(load16.dst).dtype == k.Dtype.float16
    assert [t.name for t in k06.outputs] == ["out", "out16"]


def test_partition_slice_steps() -> None:
    """KLR's access patterns have consecutive partitions: a load of every n-th row (the
    tracer accepts a[1:9:3]) becomes one DMA copy per row; the row counts must agree, and
    an engine operand with a partition step is an error, located."""
    doc = load_0012("k06_ts_bf16")

    def stepped(d: dict[str, Any]) -> None:
        d["body"][3]["store"]["args"][0]["access"]["a"]["basic"]["indexes"][0] = {
            "slice": {"slice": [1, [4, 2]]}}
    err = bad(doc, stepped)
    assert err.field == "body[3].store"
    assert err.message == "a copy from 2 partitions to 128"

    def two_rows(node: Any) -> None:  # every mention of the loaded tile, with 2 partitions
        if isinstance(node, dict):
            if node.get("name") == d3_tile:
                node["shape"]["parDim"] = node["address"]["size"][0] = 2
            for child in node.values():
                two_rows(child)
        elif isinstance(node, list):
            for child in node:
                two_rows(child)
    fitted = copy.deepcopy(doc)
    d3_tile = fitted["body"][3]["store"]["dst"]["simple"]["name"]
    stepped(fitted)
    two_rows(fitted)
    body = read_kernel_json(json.dumps(fitted)).body
    rows = body[3:5]
    assert [op.src.indexes[0] for op in rows] == [k.Coord(1), k.Coord(3)]
    assert [op.dst.indexes[0] for op in rows] == [k.Coord(0), k.Coord(1)]

    def engine_stepped(d: dict[str, Any]) -> None:
        arg = d["body"][4]["store"]["args"][0]["access"]["a"]
        tensor = arg.pop("simple")
        arg["basic"] = {"tensor": tensor, "indexes": [{"slice": {"slice": [0, [128, 2]]}},
                                                      {"slice": {"slice": [0, [256, 1]]}}]}
    err = bad(doc, engine_stepped)
    assert err.field == "body[4].store.args"
    assert "partition step 2 in an operand of 'tensorScalar'" in err.message

    def free_stepped(d: dict[str, Any]) -> None:
        d["body"][3]["store"]["args"][0]["access"]["a"]["basic"]["indexes"][1] = {
            "slice": {"slice": [1, [9, 2]]}}
    free_stepped(doc)
    src = read_kernel_doc(doc).body[3].src  # type: ignore[union-attr]
    assert isinstance(src, k.AccessBasic) and src.indexes[1] == k.Slice(1, 9, 2)
    assert k.access_shape(src) == (128, (4,))
    ap = k.to_pattern(src)
    assert (ap.par_offset, ap.par_num, ap.free_offset, ap.pattern) == (0, 128, 1,
                                                                       (k.APPair(2, 4),))


def test_to_pattern_rejects_a_partition_step() -> None:
    t = k.make_tensor("t", k.Dtype.float32, (8, 16), k.Memory.sbuf)
    for step in (2, -1):
        access = k.AccessBasic(t, (k.Slice(1, 4, step), k.Slice(0, 16, 1)))
        with pytest.raises(CodegenError, match=f"partition slice 1:4:{step} has step {step}"):
            k.to_pattern(access)
    ok = k.to_pattern(k.AccessBasic(t, (k.Slice(1, 4, 1), k.Coord(3))))
    assert (ok.par_offset, ok.par_num, ok.free_offset) == (1, 3, 3)


def test_0012_key_order_and_float_strings() -> None:
    doc = load_0012("k02_ts_two_ops")
    ts = doc["body"][1]["store"]["op"]["tensorScalar"]
    ts["const0"], ts["const1"] = "-inf", "nan"
    doc["body"][1]["store"] = dict(reversed(list(doc["body"][1]["store"].items())))
    kern = read_kernel_json(json.dumps(doc))
    op = kern.body[1]
    assert isinstance(op, k.TensorScalar)
    assert op.imm0.value == -math.inf and math.isnan(op.imm1.value)  # type: ignore[union-attr]
    again = read_kernel_json(write_kernel_json(kern))
    assert math.isnan(again.body[1].imm1.value)  # type: ignore[union-attr]


def test_float32_rounding_and_int32() -> None:
    doc = load_0012("k01_ts_basic_f32")
    doc["body"][1]["store"]["op"]["tensorScalar"]["const0"] = 0.1
    op = read_kernel_json(json.dumps(doc)).body[1]
    assert op.imm0.value == 0.10000000149011612  # type: ignore[union-attr]


def test_head_round_trip_all_golden_kernels() -> None:
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "codegen"))
    import codegen_golden_kernels as golden
    for build in golden.CASES.values():
        kern = build()
        text = write_kernel_json(kern)
        assert read_kernel_json(text) == kern
        assert write_kernel_json(read_kernel_json(text)) == text


def test_0012_file_round_trips_through_head_form() -> None:
    for path in sorted(KLR_0012.glob("*.klr.json")):
        kern = read_kernel_file(str(path))
        assert read_kernel_json(write_kernel_json(kern)) == kern


def _head_doc() -> dict[str, Any]:
    a = k.make_tensor("a", k.Dtype.float32, (128, 8), k.Memory.hbm)
    x = k.make_tensor("x", k.Dtype.float32, (128, 8), k.Memory.sbuf)
    kern = k.Kernel("h", [a], [], [k.NcDmaCopy(x, a),
                                    k.TensorScalar(x, x, k.Immediate(1.0), k.AluOp.add)])
    doc = kernel_to_doc(kern)
    (block,) = doc["body"]
    doc["body"] = block["body"]  # the flat statement list, which the reader also takes
    return doc


def test_head_blocks_are_concatenated_and_located() -> None:
    doc = kernel_to_doc(read_kernel_doc(_head_doc()))
    assert [b["label"] for b in doc["body"]] == ["entry"]
    stmts = doc["body"][0]["body"]
    assert stmts[0]["oper"]["pos"] == {"line": 0, "column": 0}
    doc["body"] = [{"label": "a", "body": stmts[:1]}, {"label": "b", "body": stmts[1:]}]
    kern = read_kernel_doc(doc)
    assert [type(op).__name__ for op in kern.body] == ["NcDmaCopy", "TensorScalar"]
    doc["body"][1]["body"][0]["oper"]["op"]["tensorScalar"]["op0"] = "plus"
    with pytest.raises(ParseError) as info:
        read_kernel_doc(doc, "k.json")
    assert info.value.field == "body[1].body[0].oper.op.tensorScalar.op0"
    doc["body"][1]["label"] = 7
    with pytest.raises(ParseError) as info:
        read_kernel_doc(doc, "k.json")
    assert info.value.field == "body[1].label"


def test_none_options_are_omitted() -> None:
    text = write_kernel_json(read_kernel_doc(_head_doc()))
    assert "null" not in text and '"imm1"' not in text and '"parOffset"' not in text


def test_head_pattern_free_offset_in_bytes_and_bir_pattern() -> None:
    doc = _head_doc()
    ts = doc["body"][1]["oper"]["op"]["tensorScalar"]
    tensor = ts["dst"]["abstract"]["simple"]
    ts["src"] = {"abstract": {"pattern": {"tensor": tensor, "parNum": 32,
                                          "freePattern": [{"step": 2, "num": 4}],
                                          "parOffset": 32, "freeOffset": 4}}}
    ts["dst"] = {"abstract": {"birPattern": {"tensor": tensor, "offset": 8 * 32 + 1,
                                             "pattern": [{"step": 8, "num": 32},
                                                         {"step": 2, "num": 4}],
                                             "scalarOffset": None}}}
    op = read_kernel_doc(doc).body[1]
    assert isinstance(op, k.TensorScalar)
    assert op.src == op.dst == k.AccessPattern(op.src.tensor, 32, (k.APPair(2, 4),), 32, 1)


def bad(doc: dict[str, Any], edit: Callable[[dict[str, Any]], None]) -> ParseError:
    """The error of the edited document, which is the same whether it is written with
    spaces (decoded as it is) or compactly (tensor definitions shared)."""
    doc = copy.deepcopy(doc)
    edit(doc)
    errors = []
    for separators in ((", ", ": "), (",", ":")):
        with pytest.raises(ParseError) as info:
            read_kernel_json(json.dumps(doc, separators=separators), "k.json")
        errors.append(info.value)
    spaced, compact = errors
    assert (str(spaced), spaced.line, spaced.col) == (str(compact), compact.line, compact.col)
    return spaced


def test_error_unknown_alu_op_names_the_field() -> None:
    doc = load_0012("k02_ts_two_ops")

    def edit(d: dict[str, Any]) -> None:
        d["body"][1]["store"]["op"]["tensorScalar"]["op0"] = "mul"
    err = bad(doc, edit)
    assert str(err) == "k.json:body[1].store.op.tensorScalar.op0: error: unknown AluOp 'mul'"
    assert (err.line, err.col, err.field) == (0, 0, "body[1].store.op.tensorScalar.op0")


@pytest.mark.parametrize("edit, field, message", [
    (lambda d: d["body"][1]["oper"]["op"]["tensorScalar"].pop("op0"),
     "body[1].oper.op.tensorScalar", "missing field 'op0'"),
    (lambda d: d["body"][1]["oper"]["op"]["tensorScalar"].update(
        imm0={"imm": {"int": {"i": 2 ** 31}}}),
     "body[1].oper.op.tensorScalar.imm0.imm.int.i", "does not fit Int32"),
    (lambda d: d["body"][1]["oper"]["op"].update(tensorScalar=None, matMul={}),
     "body[1].oper.op", "expected an operator"),
    (lambda d: d["body"][1]["oper"].update(op={"matMul": {}}),
     "body[1].oper.op", "unsupported operator 'matMul'"),
    (lambda d: d["body"][0]["oper"]["op"]["ncDmaCopy"].update(dst={"sbuf": {}}),
     "body[0].oper.op.ncDmaCopy.dst", "unsupported TensorRef 'sbuf'"),
    (lambda d: d["inputs"][0]["address"].update(memory="sbuf"),
     "inputs[0]", "must be in HBM"),
    (lambda d: d["body"][1]["oper"]["op"]["tensorScalar"]["dst"]["abstract"]["simple"][
        "shape"].update(parDim=129),
     "body[1].oper.op.tensorScalar.dst.abstract.simple", "do not fit its address"),
    (lambda d: d["body"][1]["oper"]["op"]["tensorScalar"]["src"]["abstract"]["simple"][
        "address"].update(freeSize=64),
     "body[1].oper.op.tensorScalar.src.abstract.simple", "defined twice"),
    (lambda d: d["body"][1]["oper"]["op"]["tensorScalar"].update(reverse=3),
     "body[1].oper.op.tensorScalar.reverse", "unknown TensorScalarReverseOps the number 3"),
    (lambda d: d.update(body={}), "body", "expected an array"),
    (lambda d: d["body"].append({"ret": {}}), "body[2]", "unsupported statement 'ret'"),
])
def test_head_reader_errors(edit: Callable[[dict[str, Any]], None], field: str,
                            message: str) -> None:
    err = bad(_head_doc(), edit)
    assert err.field == field and message in err.message


def test_0012_reader_errors() -> None:
    doc = load_0012("k06_ts_bf16")

    def slice_out_of_range(d: dict[str, Any]) -> None:
        d["body"][3]["store"]["args"][0]["access"]["a"]["basic"]["indexes"][1] = {
            "slice": {"slice": [0, [600, 1]]}}
    err = bad(doc, slice_out_of_range)
    assert err.field == "body[3].store.args[0].access.a.basic.indexes[1]"
    assert "out of range" in err.message

    def scalar_addr(d: dict[str, Any]) -> None:
        d["body"][1]["store"]["op"] = {"tensorScalarAddr": {}}
    assert bad(doc, scalar_addr).field == "body[1].store.op"

    def var_arg(d: dict[str, Any]) -> None:
        d["body"][1]["store"]["args"] = [{"var": {"x": "t"}}]
    assert "unsupported argument value 'var'" in bad(doc, var_arg).message


def test_invalid_json_has_line_and_column() -> None:
    with pytest.raises(ParseError) as info:
        read_kernel_json('{"name": "k",\n  "inputs": [,]}', "k.json")
    assert (info.value.line, info.value.col) == (2, 14)
    assert info.value.render().endswith("^")


def test_odd_texts_read_as_written() -> None:
    kern = read_kernel_doc(_head_doc())
    compact = write_kernel_json(kern)
    assert read_kernel_json(compact) == kern
    # a name holding "}}" and an escaped `"simple":`, a name holding NUL: the same kernel
    odd = k.make_tensor('q}}\\"simple":{', k.Dtype.float32, (4, 2), k.Memory.sbuf)
    body: list[k.Operator] = [k.Reciprocal(odd, odd)]
    odd_kernel = k.Kernel("o", [], [], body)
    assert read_kernel_json(write_kernel_json(odd_kernel)) == odd_kernel
    nul = k.Kernel("n\x00", kern.inputs, kern.outputs, kern.body)
    assert read_kernel_json(write_kernel_json(nul)) == nul
    # invalid JSON inside a tensor definition: the line and column of the text
    broken = compact.replace('"parDim":128', '"parDim":12 8', 1)
    with pytest.raises(ParseError) as info:
        read_kernel_json(broken, "b.json")
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(broken)
    assert (info.value.line, info.value.col) == (expected.value.lineno, expected.value.colno)
    assert "invalid JSON" in info.value.message


def test_statement_positions_round_trip() -> None:
    kern = read_kernel_doc(_head_doc())
    load, ts = kern.body
    load.pos = k.Pos(7, 4, filename="kern.py")
    ts.pos = k.Pos(9, 0, 9, 30)
    doc = kernel_to_doc(kern)
    stmts = doc["body"][0]["body"]
    assert stmts[0]["oper"]["pos"] == {"line": 7, "column": 4, "filename": "kern.py"}
    assert stmts[1]["oper"]["pos"] == {"line": 9, "column": 0, "lineEnd": 9, "columnEnd": 30}
    for text in (write_kernel_json(kern), json.dumps(doc)):  # shared and plain paths
        back = read_kernel_json(text)
        assert [op.pos for op in back.body] == [k.Pos(7, 4, None, None, "kern.py"),
                                                k.Pos(9, 0, 9, 30)]
    ts.pos = None  # written as line 0 (KLR's "no position"), read back as None
    assert stmts[1]["oper"]["pos"] != kernel_to_doc(kern)["body"][0]["body"][1]["oper"]["pos"]
    assert read_kernel_json(write_kernel_json(kern)).body[1].pos is None
    # positions are not part of operator equality: the same kernel traced elsewhere
    assert read_kernel_json(write_kernel_json(kern)) == read_kernel_doc(_head_doc())
    # a statement without pos (older writers) has none
    doc = _head_doc()
    del doc["body"][0]["oper"]["pos"]
    assert read_kernel_doc(doc).body[0].pos is None


@pytest.mark.parametrize("pos, field, message", [
    ({"line": -1, "column": 0}, "body[1].oper.pos.line", "natural number"),
    ({"line": True, "column": 0}, "body[1].oper.pos.line", "natural number"),
    ({"column": 3}, "body[1].oper.pos", "missing field 'line'"),
    ({"line": 3, "column": 0, "filename": 5}, "body[1].oper.pos.filename", "a string"),
    ([3, 0], "body[1].oper.pos", "expected a Pos"),
])
def test_malformed_positions(pos: Any, field: str, message: str) -> None:
    def edit(d: dict[str, Any]) -> None:
        d["body"][0]["oper"]["pos"] = {"line": 1, "column": 0}  # cached before the bad one
        d["body"][1]["oper"]["pos"] = pos
    err = bad(_head_doc(), edit)
    assert err.field == field and message in err.message


def test_float_immediates_keep_their_sign_of_zero() -> None:
    x = k.make_tensor("x", k.Dtype.float32, (4, 2), k.Memory.sbuf)
    values = [0.0, -0.0, 2.5, -0.0, 0.0, 2.5, 3]
    body: list[k.Operator] = [k.TensorScalar(x, x, k.Immediate(float(v)), k.AluOp.add)
                              for v in values]
    for text in (write_kernel_json(k.Kernel("z", [], [], body)),
                 json.dumps(kernel_to_doc(k.Kernel("z", [], [], body)))):
        imms = [op.imm0.value for op in read_kernel_json(text).body]  # type: ignore[union-attr]
        assert imms == values
        assert [math.copysign(1.0, v) for v in imms] == [1, -1, 1, -1, 1, 1, 1]
        assert all(type(v) is float for v in imms)


def test_mgrid_pattern_of_the_0012_tracer() -> None:
    """`i, j = mgrid[4:8, 0:10]; a[i, j]`: the tool writes offset 4 (the first partition)
    and free step 0 (its bug); read as rows 4..7, consecutive elements from element 0."""
    corpus = Path(__file__).resolve().parents[1] / "fixtures" / "klr0012_corpus"
    kern = read_kernel_file(str(corpus / "c31_mgrid_partition_offset.klr.json"))
    doc = json.loads((corpus / "c31_mgrid_partition_offset.klr.json").read_text())
    raw = doc["body"][0]["store"]["args"][0]["access"]["a"]["pattern"]
    assert (raw["offset"], raw["parNum"], raw["freePattern"]) == (4, 4, [{"step": 0, "num": 10}])
    src = kern.body[0].src
    assert src == k.AccessPattern(src.tensor, 4, (k.APPair(1, 10),), 4, 0)
