"""Read and write KLR kernels as JSON: KLR HEAD's Lean-derived form and the klr 0.0.12 tool's.

Contract:
- `read_kernel_json(text, path)` detects the form and returns a `klr.ast.Kernel`;
  `write_kernel_json(kernel)` writes the HEAD form; read(write(k)) == k.
- HEAD form (Lean's deriving handlers): a structure is an object keyed by field name, a
  nullary constructor a string, a constructor with fields `{"ctor": {...}}`, `Option`
  null or a missing key (the writer omits `none`, as Lean's handler does). Kernel {name,
  inputs, outputs, body}; body is a list of blocks {label, body: [Stmt]} (concatenated in
  order; a plain list of statements is read too; the writer emits one block "entry"); a
  statement is `{"oper": {"op": Operator, "name"?, "pos"?}}` (name is ignored; pos
  {line, column, lineEnd?, columnEnd?, filename?} becomes the operator's `pos`, line 0
  column 0 = None, which the writer writes for None); a TensorRef is
  `{"abstract": Access}`; Immediate `{"int": {"i": n}}` / `{"float": {"f": x}}`;
  AccessPattern.freeOffset is in BYTES (as KLR), converted to elements. Floats may be the
  strings "inf", "-inf", "nan"; float immediates are rounded to float32, int immediates
  must fit Int32. Key order never matters. An AccessBasic's partition slice has step 1.
- The 0.0.12 form (README of tests/fixtures/klr0012, tool facts in
  tests/fixtures/klr0012_corpus/README.md) is converted to the same AST: `load` and `save`
  become NcDmaCopy (one per row when a side takes every n-th partition), `{"memset": v}`
  MemSet, `tensorScalar` TensorScalar (dst = store.dst, src = store.args[0]); an mgrid
  pattern's offset is its first partition and its zero free steps (a tracer bug) read as
  consecutive elements (`json_klr0012.Klr0012Reader.access_pattern`). Kernel arguments, which that tool places in "sbuf",
  become HBM tensors; outputs are the declared outputs plus every argument written by a
  `save`; inputs are the other arguments plus any argument that is also loaded.
- Invariants checked: every tensor name has one definition; shape fits the address;
  SBUF / PSUM tensors have at most 128 partitions; kernel arguments are in HBM.
- Malformed input -> ParseError(path, 0, 0, message, field=<path inside the document>),
  e.g. `body[3].store.op.tensorScalar.op0: unknown AluOp 'mul'`; invalid JSON ->
  ParseError(path, line, col, ...). Both the same whichever path decoded the text: one
  fast path (`klr.json_fast`, HEAD documents in blocks) and the checked decoder of the
  whole text, which takes everything else and locates every error.
"""

from __future__ import annotations

import json
import math
import re
from enum import IntEnum
from pathlib import Path
from typing import Any

from tilecc.errors import ParseError, TileccError
from tilecc.fileio import parse_json_text, read_text
from tilecc.klr import ast as k
from tilecc.klr.json_fast import NotFast, fast_head_kernel
from tilecc.klr.json_fields import Bad
from tilecc.klr.json_head import HeadReader
from tilecc.klr.json_klr0012 import Klr0012Reader


def read_kernel_file(path: str) -> k.Kernel:
    try:
        text = read_text(path)
    except TileccError:
        if path != "-" and Path(path).is_file() and Path(path).read_bytes()[:3] == _CBOR_SELF_DESCRIBED:
            raise ParseError(path, 0, 0, "a binary (CBOR) KLR file: tilecc reads KLR as JSON, as "
                             "`klr nki-to-klr -j FILE.py KERNEL` writes it", field="$") from None
        raise
    return read_kernel_json(text, "<stdin>" if path == "-" else path)


# KLR's binary files open with CBOR's self-described tag 55799 (klr-bir.md, On disk)
_CBOR_SELF_DESCRIBED = b"\xd9\xd9\xf7"
# The klr tool's default (--pretty) output is Lean syntax: `{ name := "m.kernel", ...`
_LEAN_PRETTY = re.compile(r"\s*\{\s*\w+ :=")


def read_kernel_json(text: str, path: str = "<string>") -> k.Kernel:
    """HEAD documents take `klr.json_fast`; what it declines (the 0.0.12 form, a plain list
    of statements, any error) is decoded by the checked reader, so errors are located the
    same way whatever the document."""
    try:
        return fast_head_kernel(text)
    except NotFast:
        pass
    if _LEAN_PRETTY.match(text):
        raise ParseError(path, 1, 1, "the klr tool's human-readable (--pretty) output, not JSON: "
                         "trace with `klr nki-to-klr -j FILE.py KERNEL`",
                         source_line=text.split("\n", 1)[0])
    return read_kernel_doc(parse_json_text(text, path), path)


def read_kernel_doc(doc: Any, path: str = "<string>") -> k.Kernel:
    """A kernel from an already decoded JSON document (either form)."""
    try:
        return decode_kernel(doc)
    except Bad as bad:
        raise ParseError(path, 0, 0, bad.message, field=bad.path() or "$") from None
    except RecursionError:
        raise ParseError(path, 0, 0, "document nested too deeply", field="$") from None


def decode_kernel(doc: Any) -> k.Kernel:
    """The kernel of a decoded document, or Bad."""
    if is_klr0012_doc(doc):
        return Klr0012Reader().kernel(doc)
    return HeadReader().kernel(doc)


def is_klr0012_doc(doc: Any) -> bool:
    """0.0.12 files have `store` statements and addresses with `size`; HEAD has neither."""
    if not isinstance(doc, dict):
        return False
    body = doc.get("body")
    if isinstance(body, list) and body and isinstance(body[0], dict):
        return "store" in body[0]
    for key in ("inputs", "outputs"):
        args = doc.get(key)
        for arg in args if isinstance(args, list) else []:
            if isinstance(arg, dict) and isinstance(arg.get("address"), dict):
                return "size" in arg["address"]
    return False


# ---------------------------------------------------------------- writer (HEAD form)

BLOCK_LABEL = "entry"

def write_kernel_json(kernel: k.Kernel) -> str:
    return json.dumps(kernel_to_doc(kernel), separators=(",", ":"))


def kernel_to_doc(kernel: k.Kernel) -> dict[str, Any]:
    return {
        "name": kernel.name,
        "inputs": [_w_tensor(t) for t in kernel.inputs],
        "outputs": [_w_tensor(t) for t in kernel.outputs],
        "body": [{"label": BLOCK_LABEL, "body": [
            {"oper": {"op": _w_operator(op), "pos": _w_pos(op.pos)}}
            for op in kernel.body]}],
    }


def _w_pos(pos: k.Pos | None) -> dict[str, Any]:
    if pos is None:
        return {"line": 0, "column": 0}
    doc: dict[str, Any] = {"line": pos.line, "column": pos.column}
    for key, value in (("lineEnd", pos.line_end), ("columnEnd", pos.column_end),
                       ("filename", pos.filename)):
        if value is not None:
            doc[key] = value
    return doc


def _w_float(x: float) -> float | str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def _w_tensor(t: k.TensorName) -> dict[str, Any]:
    a = t.address
    return {"name": t.name, "dtype": t.dtype.name,
            "shape": {"parDim": t.shape.par_dim, "freeDims": list(t.shape.free_dims)},
            "address": _w_address(a)}


def _w_address(a: k.Address) -> dict[str, Any]:
    doc: dict[str, Any] = {"name": a.name, "memory": a.memory.name, "parSize": a.par_size,
                           "freeSize": a.free_size}
    if a.par_offset is not None:
        doc["parOffset"] = a.par_offset
    if a.free_offset is not None:
        doc["freeOffset"] = a.free_offset
    doc["isShared"] = a.is_shared
    return doc


def _w_pairs(pairs: tuple[k.APPair, ...]) -> list[dict[str, int]]:
    return [{"step": p.step, "num": p.num} for p in pairs]


def _w_access(a: k.Access) -> dict[str, Any]:
    if isinstance(a, k.TensorName):
        return {"simple": _w_tensor(a)}
    if isinstance(a, k.AccessBasic):
        return {"basic": {"tensor": _w_tensor(a.tensor), "indexes": [
            {"coord": {"e": i.e}} if isinstance(i, k.Coord)
            else {"slice": {"l": i.l, "u": i.u, "step": i.step}} for i in a.indexes]}}
    size = k.DTYPE_SIZE[a.tensor.dtype]
    return {"pattern": {"tensor": _w_tensor(a.tensor), "parNum": a.par_num,
                        "freePattern": _w_pairs(a.pattern), "parOffset": a.par_offset,
                        "freeOffset": a.free_offset * size}}


def _w_ref(a: k.Access) -> dict[str, Any]:
    return {"abstract": _w_access(a)}


def _w_imm(i: k.Immediate) -> dict[str, Any]:
    if isinstance(i.value, float):
        return {"float": {"f": _w_float(i.value)}}
    return {"int": {"i": i.value}}


def _w_operand(o: k.Operand) -> dict[str, Any]:
    if isinstance(o, k.Immediate):
        return {"imm": _w_imm(o)}
    return {"tile": _w_ref(o)}


def _w_value(v: Any, kind: str) -> Any:
    if kind == "TensorRef":
        return _w_ref(v)
    if kind == "Operand":
        return _w_operand(v)
    if kind == "Immediate":
        return _w_imm(v)
    if kind == "ImmediateList":
        return [_w_imm(i) for i in v]
    if kind == "DataPattern":
        return {"offset": v.offset, "pattern": _w_pairs(v.pattern),
                "channelMultiplier": v.channel_multiplier}
    if isinstance(v, IntEnum):
        return v.name
    return v


def _w_operator(op: k.Operator) -> dict[str, Any]:
    spec = HeadReader.OPERATORS[type(op)]
    fields = {}
    for attr, key, kind, _ in spec:
        value = getattr(op, attr)
        if value is not None:
            fields[key] = _w_value(value, kind)
    return {k.OPERATOR_CTOR[type(op)]: fields}

