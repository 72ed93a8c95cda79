"""The msgspec fast path of the KLR reader: it takes every HEAD document a writer emits,
gives the checked decoder's kernel, and declines (NotFast) whatever it does not take."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tilecc.klr import ast as k
from tilecc.klr.json_fast import NotFast, fast_head_kernel
from tilecc.klr.json_fields import Bad, at
from tilecc.klr.json_head import HeadReader
from tilecc.klr.read import kernel_to_doc, read_kernel_json, write_kernel_json

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
HEAD_FILES = sorted((FIXTURES / "klr").glob("*.klr.json"))
KLR0012_FILES = sorted((FIXTURES / "klr0012").glob("*.klr.json"))


def checked(doc: Any) -> k.Kernel:
    return HeadReader().kernel(doc)


@pytest.mark.parametrize("path", HEAD_FILES, ids=lambda p: p.name)
def test_takes_every_head_fixture(path: Path) -> None:
    text = path.read_text()
    kernel = fast_head_kernel(text)
    assert kernel == checked(json.loads(text))
    assert [op.pos for op in kernel.body] == [op.pos for op in checked(json.loads(text)).body]
    assert fast_head_kernel(text.encode()) == kernel


@pytest.mark.parametrize("path", KLR0012_FILES[:5], ids=lambda p: p.name)
def test_declines_the_klr_tool_form(path: Path) -> None:
    with pytest.raises(NotFast):
        fast_head_kernel(path.read_text())
    assert read_kernel_json(path.read_text()).body  # the checked path reads it


def small_doc() -> dict[str, Any]:
    a = k.make_tensor("a", k.Dtype.float32, (128, 8), k.Memory.hbm)
    x = k.make_tensor("x", k.Dtype.float32, (128, 8), k.Memory.sbuf)
    col = k.make_tensor("col", k.Dtype.float32, (128, 1), k.Memory.sbuf)
    body: list[k.Operator] = [
        k.NcDmaCopy(x, a),
        k.TensorScalar(x, x, k.Immediate(1.0), k.AluOp.add),
        k.NcActivate(x, x, k.AccumCmd.Idle, k.ActivationFunc.exp, col),
        k.TensorScalar(x, x, k.Immediate(-0.0), k.AluOp.mult, k.Immediate(3), k.AluOp.add),
    ]
    body[1].pos = k.Pos(4, 2, filename="kernel.py")
    body[3].pos = k.Pos(4, 2, filename="kernel.py")
    return kernel_to_doc(k.Kernel("h", [a], [a], body))


def ops(doc: dict[str, Any]) -> list[dict[str, Any]]:
    stmts: list[dict[str, Any]] = doc["body"][0]["body"]
    return stmts


def same(doc: dict[str, Any]) -> k.Kernel:
    """The fast path takes the document and agrees with the checked decoder, positions too."""
    text = json.dumps(doc)
    got, want = fast_head_kernel(text), checked(json.loads(text))
    assert got == want and [op.pos for op in got.body] == [op.pos for op in want.body]
    return got


def test_values_and_positions() -> None:
    kernel = same(small_doc())
    assert kernel.body[1].pos == k.Pos(4, 2, filename="kernel.py")
    assert kernel.body[0].pos is None
    imm0 = kernel.body[3].imm0  # type: ignore[attr-defined]
    assert imm0 == k.Immediate(-0.0) and str(imm0.value) == "-0.0"
    assert kernel.body[3].imm1 == k.Immediate(3)  # type: ignore[attr-defined]
    assert isinstance(kernel.body[3].imm1.value, int)  # type: ignore[attr-defined]
    assert kernel.inputs == kernel.outputs and kernel.inputs is not kernel.outputs


def test_a_repeated_payload_is_a_new_operator_with_its_own_position() -> None:
    doc = small_doc()
    stmts = ops(doc)
    stmts[3]["oper"]["op"] = json.loads(json.dumps(stmts[1]["oper"]["op"]))  # same text
    stmts[3]["oper"]["pos"] = {"line": 9, "column": 1}
    stmts.append({"oper": {"op": stmts[1]["oper"]["op"]}})  # again, without a position
    # the payload text of an ncActivate under another constructor: another class
    stmts.append({"oper": {"op": {"activationReduce": stmts[2]["oper"]["op"]["ncActivate"]}}})
    kernel = same(doc)
    assert type(kernel.body[2]) is k.NcActivate and type(kernel.body[5]) is k.ActivationReduce
    first, again, last = kernel.body[1], kernel.body[3], kernel.body[4]
    assert first == again == last and first is not again and again is not last
    assert (first.pos, again.pos, last.pos) == (k.Pos(4, 2, filename="kernel.py"),
                                                k.Pos(9, 1), None)
    again.imm0 = k.Immediate(7.0)  # type: ignore[attr-defined]
    assert first.imm0 == last.imm0 == k.Immediate(1.0)  # type: ignore[attr-defined]


def test_keys_the_checked_path_ignores_are_ignored() -> None:
    doc = small_doc()
    ops(doc)[1]["oper"]["op"]["tensorScalar"]["comment"] = {"any": [1, 2]}
    ops(doc)[1]["oper"]["name"] = "ts"
    doc["body"][0]["note"] = "x"
    doc["version"] = 3
    same(doc)


def test_missing_and_null_options_and_positions() -> None:
    doc = small_doc()
    del ops(doc)[0]["oper"]["pos"]
    ops(doc)[1]["oper"]["pos"] = None
    ops(doc)[2]["oper"]["op"]["ncActivate"]["bias"] = None
    ops(doc)[3]["oper"]["op"]["tensorScalar"]["dtype"] = None
    kernel = same(doc)
    assert kernel.body[0].pos is None and kernel.body[1].pos is None


def test_duplicate_keys_keep_the_last_as_json_loads() -> None:
    text = json.dumps(small_doc()).replace('"op0": "add"', '"op0": "mult", "op0": "add"', 1)
    assert text.count('"op0": "mult", "op0": "add"') == 1
    assert fast_head_kernel(text) == checked(json.loads(text))


@pytest.mark.parametrize("edit", [
    "plain statement list", "two constructors", "no constructor", "unknown constructor",
    "null payload", "statement with two keys", "missing required field", "null required field",
    "null defaulted field", "bad enum", "bad float", "string body", "invalid json",
    "second definition of a tensor", "label not a string", "bool as a number",
    "negative natural", "natural as a bool", "natural as a float", "null defaulted enum",
    "enum as a number", "NaN literal", "number beyond double"])
def test_declined_documents(edit: str) -> None:
    doc = small_doc()
    stmt = ops(doc)[1]
    payload = stmt["oper"]["op"]["tensorScalar"]
    if edit == "plain statement list":
        doc["body"] = ops(doc)
    elif edit == "two constructors":
        stmt["oper"]["op"]["reciprocal"] = {"dst": payload["dst"], "src": payload["src"]}
    elif edit == "no constructor":
        stmt["oper"]["op"] = {}
    elif edit == "unknown constructor":
        stmt["oper"]["op"] = {"tensorScalarAddr": payload}
    elif edit == "null payload":
        stmt["oper"]["op"] = {"tensorScalar": None}
    elif edit == "statement with two keys":
        stmt["name"] = "x"
    elif edit == "missing required field":
        del payload["op0"]
    elif edit == "null required field":
        payload["dst"] = None
    elif edit == "null defaulted field":
        payload["engine"] = None
    elif edit == "bad enum":
        payload["op0"] = "plus"
    elif edit == "bad float":
        payload["imm0"] = {"imm": {"float": {"f": "one"}}}
    elif edit == "string body":
        doc["body"] = "x"
    elif edit == "second definition of a tensor":
        payload["dst"]["abstract"]["simple"]["shape"]["freeDims"] = [4]
    elif edit in ("NaN literal", "number beyond double"):  # json.loads takes them
        payload["imm0"] = {"imm": {"float": {"f": "LITERAL"}}}
    elif edit == "label not a string":
        doc["body"][0]["label"] = 1
    elif edit != "invalid json":  # the typed scalars of a DMA copy
        dma = ops(doc)[0]["oper"]["op"]["ncDmaCopy"]
        key, value = {"bool as a number": ("uniqueIndices", 1),
                      "negative natural": ("dgeMode", -1),
                      "natural as a bool": ("dgeMode", True),
                      "natural as a float": ("dgeMode", 1.0),
                      "null defaulted enum": ("compute_op", None),
                      "enum as a number": ("engine", 2)}[edit]
        dma[key] = value
    text = json.dumps(doc) if edit != "invalid json" else json.dumps(doc)[:-1]
    text = text.replace('"LITERAL"', "NaN" if edit == "NaN literal" else "1e400")
    with pytest.raises(NotFast):
        fast_head_kernel(text)
    try:
        want: Any = checked(json.loads(text))
    except Exception as err:  # noqa: BLE001 (the checked path's error, whatever it is)
        want = type(err)
    try:
        got: Any = read_kernel_json(text)
    except Exception as err:  # noqa: BLE001
        got = type(err)
    # what the fast path declines, the checked path reads or refuses on its own
    if isinstance(want, k.Kernel):  # compared as written: a NaN immediate != itself
        assert isinstance(got, k.Kernel) and write_kernel_json(got) == write_kernel_json(want)
    else:
        assert not isinstance(got, k.Kernel)


def test_generated_kernel_round_trips_on_the_fast_path() -> None:
    F32, S = k.Dtype.float32, k.Memory.sbuf
    t = k.make_tensor("t", F32, (128, 64), S)
    col = k.make_tensor("col", F32, (128, 1), S)
    body: list[k.Operator] = []
    for i in range(200):
        part = k.AccessPattern(t, 32, (k.APPair(2, 16),), 32 * (i % 4), i % 32)
        body.append(k.TensorScalar(part, part, k.Immediate(float(i)), k.AluOp.add))
        body.append(k.TensorReduce(col, t, k.AluOp.max, k.TensorSubDim.X, negated=i % 2 == 1))
        body[-1].pos = k.Pos(i + 1, 4)
    kernel = k.Kernel("g", [], [], body)
    got = fast_head_kernel(write_kernel_json(kernel))
    assert got == kernel and [op.pos for op in got.body] == [op.pos for op in body]


def _basic_ref(tensor: dict[str, Any], indexes: Any) -> dict[str, Any]:
    return {"abstract": {"basic": {"tensor": tensor, "indexes": indexes}}}


def _slice(lo: Any, hi: Any, step: Any = 1) -> dict[str, Any]:
    return {"slice": {"l": lo, "u": hi, "step": step}}


@pytest.mark.parametrize("free", [
    _slice(0, 8), _slice(8, 8), _slice(7, 0, -1), _slice(7, 20, -1), _slice(2, 6, 2),
    _slice(0, 9), _slice(0, 8, 0), _slice(0, 8, True), _slice(0.0, 8), _slice(-1, 8),
    {"coord": {"e": 3}}, {"coord": {"e": 8}}, {"slice": {"l": 0, "u": 8}},
    {"slice": {"l": 0, "u": 8, "step": 1}, "coord": {"e": 0}}, "slice"])
@pytest.mark.parametrize("par", [_slice(0, 32), _slice(32, 64), _slice(0, 128, 2), _slice(0, 129)])
def test_basic_access_shortcut_reads_as_the_checked_decoder(par: Any, free: Any) -> None:
    """HeadReader.tensor_ref's shortcut for an AccessBasic of a known tensor gives the value
    or the failure (message and path) of the checked decode, and shares its Slices."""
    x = k.make_tensor("x", k.Dtype.float32, (128, 8), k.Memory.sbuf)
    tensor = kernel_to_doc(k.Kernel("h", [], [], [k.NcCopy(x, x)]))["body"][0]["body"][0][
        "oper"]["op"]["ncCopy"]["dst"]["abstract"]["simple"]
    value = _basic_ref(tensor, [par, free])

    def read(shortcut: bool) -> Any:
        reader = HeadReader()
        reader.tensor_name(tensor)  # known: the shortcut applies
        try:
            if shortcut:
                return reader.tensor_ref(value), reader.tensor_ref(json.loads(json.dumps(value)))
            again = json.loads(json.dumps(value))["abstract"]
            return at("abstract", reader.access, value["abstract"]), reader.access(again)
        except Bad as bad:
            return bad.message, bad.path()
    fast, slow = read(True), read(False)
    assert fast == slow
    in_range = [_slice(0, 8), _slice(8, 8), _slice(7, 0, -1), _slice(2, 6, 2)]
    texts = {json.dumps(x) for x in in_range}  # by text: True == 1
    if par in (_slice(0, 32), _slice(32, 64)) and json.dumps(free) in texts:  # the shortcut's
        assert fast[0].indexes[0] is fast[1].indexes[0]
