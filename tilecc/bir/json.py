"""BIR programs as JSON: `write_program_json(p)` and `read_program_json(text, path)`.

Contract: read(write(p)) == p. Document:
  {"name", "memory_locations": [{name, kind, dtype, partitions, bytes_per_partition}],
   "inputs" / "outputs": [{name, dtype, shape}], "instructions": [Inst]}
An instruction is {"opcode": <class name without "Inst">, "name", "engine", "ins", "outs"},
then "pos": {"file", "line", "column"} when it has a kernel source position, plus its op-specific keys (reference/klr-bir.md), enums by NAME. An access pattern argument
is {"memref", "dtype", "offset", "ap": [[step, num], ...]}, an immediate {"dtype", "value"}
(non-finite floats as "inf" / "-inf" / "nan"). A TensorScalarPtr whose flags select no
variant (`bir.tensor_scalar_variant`) is refused. Unknown keys are errors here (BIR JSON is
tilecc's own format). Malformed input -> ParseError with the field path
(`instructions[3].op0: unknown AluOpType 'mul'`); so is a memory location or kernel tensor
of more elements than tilecc.limits' "elements" bound, or a tensor of more than
MAX_TENSOR_DIMS dimensions, before anything is allocated for it.
"""

from __future__ import annotations

import dataclasses
import json
import math
from enum import IntEnum
from json.encoder import encode_basestring_ascii
from typing import Any, Callable

from tilecc.bir import enums as e
from tilecc.bir.inst import (INST_CLASSES, AccessPattern, Argument, Immediate, Inst,
                             InstTensorScalarPtr, IOTensor, MemoryLocation, Program, SourcePos)
from tilecc.bir.tensor_scalar_variant import TensorScalarVariantError, tensor_scalar_variant
from tilecc.errors import ParseError
from tilecc.fileio import parse_json_text
from tilecc.klr.json_fields import (Bad, at, bad_at, enum_reader, expect_obj, field, json_type,
                                    read_bool, read_int, read_nat, read_str)
from tilecc.limits import limit, over

_HEADER = ("name", "engine", "ins", "outs", "pos")
# class -> [(attribute, writer kind)] of the op-specific fields, in declaration order
_OP_FIELDS: dict[type[Inst], list[tuple[str, str]]] = {
    cls: [(f.name, str(f.type)) for f in dataclasses.fields(cls) if f.name not in _HEADER]
    for cls in INST_CLASSES.values()}
_ENUMS: dict[str, type[IntEnum]] = {c.__name__: c for c in (
    e.AluOpType, e.ActivationFunctionType, e.EngineAccumulationType, e.AxisListType,
    e.TSCMode)}
# enum class -> member names by value (Enum.name is a slow property; the BIR enums are
# 0..n-1); opcode class -> JSON opcode
_NAMED_ENUMS: tuple[type[IntEnum], ...] = (*_ENUMS.values(), e.EngineType, e.BirDtype,
                                            e.MemoryKind)
_NAMES: dict[type[IntEnum], tuple[str, ...]] = {
    enum: tuple(m.name for m in enum) for enum in _NAMED_ENUMS}
_OPCODE_NAMES = {cls: name for name, cls in INST_CLASSES.items()}


def _nonfinite_name(x: float) -> str:
    return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")


def _w_float(x: float) -> float | str:
    return x if math.isfinite(x) else _nonfinite_name(x)


def _w_arg(a: Argument, cache: dict[int, tuple[Argument, dict[str, Any]]]) -> dict[str, Any]:
    # codegen shares AccessPattern objects between instructions: build each dict once
    hit = cache.get(id(a))
    if hit is not None and hit[0] is a:
        return hit[1]
    if isinstance(a, AccessPattern):
        doc: dict[str, Any] = {"memref": a.memref, "dtype": _NAMES[e.BirDtype][a.dtype],
                               "offset": a.offset, "ap": [list(p) for p in a.ap]}
    else:
        value = _w_float(a.value) if isinstance(a.value, float) else a.value
        doc = {"dtype": _NAMES[e.BirDtype][a.dtype], "value": value}
    cache[id(a)] = (a, doc)
    return doc


def _w_pos(pos: SourcePos) -> dict[str, Any]:
    return {"file": pos.file, "line": pos.line, "column": pos.column}


def _w_inst(inst: Inst, cache: dict[int, tuple[Argument, dict[str, Any]]]) -> dict[str, Any]:
    doc: dict[str, Any] = {"opcode": _OPCODE_NAMES[type(inst)], "name": inst.name,
                           "engine": _NAMES[e.EngineType][inst.engine],
                           "ins": [_w_arg(a, cache) for a in inst.ins],
                           "outs": [_w_arg(a, cache) for a in inst.outs]}
    if inst.pos is not None:
        doc["pos"] = _w_pos(inst.pos)
    for attr, _ in _OP_FIELDS[type(inst)]:
        v = getattr(inst, attr)
        if isinstance(v, IntEnum):
            doc[attr] = _NAMES[type(v)][v]
        elif isinstance(v, float):
            doc[attr] = _w_float(v)
        elif isinstance(v, tuple):
            doc[attr] = [list(p) for p in v]
        else:
            doc[attr] = v
    return doc


def program_to_doc(p: Program) -> dict[str, Any]:
    cache: dict[int, tuple[Argument, dict[str, Any]]] = {}
    return {
        "name": p.name,
        "memory_locations": [{"name": m.name, "kind": _NAMES[e.MemoryKind][m.kind],
                              "dtype": _NAMES[e.BirDtype][m.dtype], "partitions": m.partitions,
                              "bytes_per_partition": m.bytes_per_partition}
                             for m in p.memory_locations],
        "inputs": [{"name": t.name, "dtype": t.dtype.name, "shape": list(t.shape)}
                   for t in p.inputs],
        "outputs": [{"name": t.name, "dtype": t.dtype.name, "shape": list(t.shape)}
                    for t in p.outputs],
        "instructions": [_w_inst(i, cache) for i in p.instructions],
    }


def write_program_json(p: Program, pretty: bool = False) -> str:
    """Compact JSON, or `pretty`: one memory location / tensor / instruction per line.

    The compact text is exactly `json.dumps(program_to_doc(p), separators=(",", ":"))`, and
    each line of the pretty text `json.dumps(item)` of its item, both formatted directly:
    each shared argument is encoded once, each instruction by one join of precomputed
    fragments (building the dicts and dumping them costs ~3x more).
    """
    style = _PRETTY if pretty else _COMPACT
    cache: dict[int, str] = {}
    texts = style.inst_text
    insts = [texts[type(inst)](inst, cache) for inst in p.instructions]
    if not pretty:
        head = program_to_doc(Program(p.name, p.memory_locations, p.inputs, p.outputs, []))
        return json.dumps(head, separators=(",", ":"))[:-2] + ",".join(insts) + "]}"
    doc = program_to_doc(Program(p.name, p.memory_locations, p.inputs, p.outputs, []))
    parts = [f' "name": {json.dumps(doc["name"])}']
    for key in ("memory_locations", "inputs", "outputs"):
        parts.append(_pretty_list(key, [json.dumps(item) for item in doc[key]]))
    parts.append(_pretty_list("instructions", insts))
    return "{\n" + ",\n".join(parts) + "\n}"


def _pretty_list(key: str, items: list[str]) -> str:
    if not items:
        return f' "{key}": []'
    return f' "{key}": [\n  ' + ",\n  ".join(items) + "\n ]"


_str = encode_basestring_ascii  # json.dumps' own string encoder (ensure_ascii)


def _float_text(x: float) -> str:
    return repr(x) if math.isfinite(x) else _str(_nonfinite_name(x))


class _Style:
    """The text of instructions with json.dumps' separators `item` (between list items and
    object members) and `key` (after a key): one formatter generated per opcode."""

    def __init__(self, item: str, key: str) -> None:
        self.item, self.key = item, key
        self.inst_text: dict[type[Inst], Callable[[Inst, dict[int, str]], str]] = {
            cls: self.inst_formatter(name, cls) for name, cls in INST_CLASSES.items()}

    def pairs_text(self, pairs: tuple[tuple[int, int], ...]) -> str:
        i = self.item
        return "[" + i.join([f"[{s!r}{i}{n!r}]" for s, n in pairs]) + "]"

    def arg_text(self, a: Argument, cache: dict[int, str]) -> str:
        """The JSON text of an argument, remembered by id: codegen shares AccessPattern
        objects between instructions, and every argument stays alive (held by the program)
        for the whole write, so an id cannot be reused meanwhile."""
        i, k = self.item, self.key
        dtype = _QUOTED[e.BirDtype][a.dtype]
        if isinstance(a, AccessPattern):
            text = (f'{{"memref"{k}{_str(a.memref)}{i}"dtype"{k}{dtype}{i}'
                    f'"offset"{k}{a.offset!r}{i}"ap"{k}{self.pairs_text(a.ap)}}}')
        else:
            value = _float_text(a.value) if isinstance(a.value, float) else repr(a.value)
            text = f'{{"dtype"{k}{dtype}{i}"value"{k}{value}}}'
        cache[id(a)] = text
        return text

    def value_text(self, v: Any) -> str:
        """An op-specific field value as json.dumps writes what `_w_inst` puts in the dict."""
        if isinstance(v, IntEnum):
            return _QUOTED[type(v)][v]
        if v is True or v is False:
            return "true" if v else "false"
        if isinstance(v, float):
            return _float_text(v)
        if isinstance(v, tuple):
            return self.pairs_text(v)
        if isinstance(v, str):
            return _str(v)
        return "null" if v is None else repr(v)

    def pos_text(self, pos: SourcePos | None, cache: dict[int, str]) -> str:
        """`,"pos":{...}` in this style, or "" without a position (as the dict form omits it);
        remembered by id in `cache` (beside the arguments: codegen shares positions too)."""
        if pos is None:
            return ""
        text = self.pos_text_uncached(pos)
        cache[id(pos)] = text
        return text

    def pos_text_uncached(self, pos: SourcePos) -> str:
        file, line, column = pos.file, pos.line, pos.column
        if type(line) is not int or type(column) is not int or not (
                file is None or type(file) is str):   # what json.dumps would make of it
            return f'{self.item}"pos"{self.key}' + json.dumps(
                _w_pos(pos), separators=(self.item, self.key))
        i, k = self.item, self.key
        return (f'{i}"pos"{k}{{"file"{k}{"null" if file is None else _str(file)}{i}'
                f'"line"{k}{line!r}{i}"column"{k}{column!r}}}')

    def inst_formatter(self, opcode: str,
                       cls: type[Inst]) -> Callable[[Inst, dict[int, str]], str]:
        """One generated function per opcode (as dataclasses generates __init__): a single
        join of constant fragments and field texts, no per-field loop or dispatch."""
        i, k = self.item, self.key
        args = f'{i!r}.join([cache.get(id(a)) or arg(a, cache) for a in inst.%s])'
        pieces = [repr(f'{{"opcode"{k}{_str(opcode)}{i}"name"{k}'), "s(inst.name)",
                  repr(f'{i}"engine"{k}'), "Q_EngineType[inst.engine]", repr(f'{i}"ins"{k}['),
                  args % "ins", repr(f']{i}"outs"{k}['), args % "outs", repr("]"),
                  "(cache.get(id(inst.pos)) or pos_text(inst.pos, cache))"]
        for attr, kind in _OP_FIELDS[cls]:
            pieces += [repr(f'{i}"{attr}"{k}'), _field_expr(attr, kind)]
        pieces.append(repr("}"))
        source = ("def fmt(inst, cache):\n    return \"\".join((\n        "
                  + ",\n        ".join(pieces) + "))\n")
        scope: dict[str, Any] = {"s": _str, "arg": self.arg_text, "value_text": self.value_text,
                                 "pos_text": self.pos_text,
                                 **{f"Q_{enum.__name__}": q for enum, q in _QUOTED.items()},
                                 **{enum.__name__: enum for enum in _QUOTED}}
        exec(source, scope)  # noqa: S102 (source built from the dataclass fields above)
        fmt: Callable[[Inst, dict[int, str]], str] = scope["fmt"]
        return fmt


# enum class -> JSON text of each member name, by value
_QUOTED: dict[type[IntEnum], tuple[str, ...]] = {
    enum: tuple(_str(n) for n in names) for enum, names in _NAMES.items()}


def _field_expr(attr: str, kind: str) -> str:
    """Source of the JSON text of `inst.<attr>`; a value of another type than declared
    takes the generic `value_text`, so the text always equals the dumped dict form."""
    v = f"inst.{attr}"
    if kind in _ENUMS:
        return f"(Q_{kind}[{v}] if type({v}) is {kind} else value_text({v}))"
    if kind == "bool":
        return f'("true" if {v} is True else "false" if {v} is False else value_text({v}))'
    return f"value_text({v})"


_COMPACT = _Style(",", ":")
_PRETTY = _Style(", ", ": ")


# ---------------------------------------------------------------- reader

def read_program_json(text: str, path: str = "<string>") -> Program:
    doc = parse_json_text(text, path)
    try:
        return _program(doc)
    except Bad as bad:
        raise ParseError(path, 0, 0, bad.message, field=bad.path() or "$") from None


def _list(value: Any, read: Callable[[Any], Any]) -> list[Any]:
    if not isinstance(value, list):
        raise Bad(f"expected an array, found {json_type(value)}")
    return [at(i, read, v) for i, v in enumerate(value)]


def _only_keys(obj: dict[str, Any], allowed: set[str] | tuple[str, ...]) -> None:
    for key in obj:
        if key not in allowed:
            raise bad_at(key, "unknown key")


def _program(doc: Any) -> Program:
    obj = expect_obj(doc, "a BIR program")
    _only_keys(obj, ("name", "memory_locations", "inputs", "outputs", "instructions"))
    return Program(field(obj, "name", read_str),
                   field(obj, "memory_locations", lambda v: _list(v, _memloc)),
                   field(obj, "inputs", lambda v: _list(v, _io)),
                   field(obj, "outputs", lambda v: _list(v, _io)),
                   field(obj, "instructions", lambda v: _list(v, _inst)))


_dtype = enum_reader(e.BirDtype)


def _memloc(value: Any) -> MemoryLocation:
    obj = expect_obj(value, "a memory location")
    _only_keys(obj, ("name", "kind", "dtype", "partitions", "bytes_per_partition"))
    loc = MemoryLocation(field(obj, "name", read_str), field(obj, "kind",
                                                             enum_reader(e.MemoryKind)),
                         field(obj, "dtype", _dtype), field(obj, "partitions", read_nat),
                         field(obj, "bytes_per_partition", read_nat))
    # the simulator allocates an HBM location whole: its size is bounded before that
    elements = loc.partitions * (loc.bytes_per_partition // e.BIR_DTYPE_SIZE[loc.dtype])
    if elements > limit("elements"):
        raise bad_at("bytes_per_partition", over("elements", elements))
    return loc


# dimensions of a kernel tensor: numpy 1 makes no array of more (numpy 2: 64)
MAX_TENSOR_DIMS = 32


def _shape(value: Any) -> tuple[int, ...]:
    shape = tuple(_list(value, read_nat))
    if len(shape) > MAX_TENSOR_DIMS:
        raise Bad(f"{len(shape)} dimensions, more than the {MAX_TENSOR_DIMS} a tensor may have")
    if (elements := math.prod(shape)) > limit("elements"):
        raise Bad(over("elements", elements))
    return shape


def _io(value: Any) -> IOTensor:
    obj = expect_obj(value, "a kernel tensor")
    _only_keys(obj, ("name", "dtype", "shape"))
    return IOTensor(field(obj, "name", read_str), field(obj, "dtype", _dtype),
                    field(obj, "shape", _shape))


def _float(value: Any) -> float:
    if isinstance(value, str) and value in ("inf", "-inf", "nan"):
        return float(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Bad(f"expected a float, found {json_type(value)}")
    return float(value)


def _pairs(value: Any) -> tuple[tuple[int, int], ...]:
    def pair(v: Any) -> tuple[int, int]:
        if not (isinstance(v, list) and len(v) == 2):
            raise Bad(f"expected [step, num], found {json_type(v)}")
        return at(0, read_int, v[0]), at(1, read_nat, v[1])
    return tuple(_list(value, pair))


def _ap(value: Any) -> AccessPattern:
    obj = expect_obj(value, "an access pattern")
    _only_keys(obj, ("memref", "dtype", "offset", "ap"))
    return AccessPattern(field(obj, "memref", read_str), field(obj, "dtype", _dtype),
                         field(obj, "offset", read_nat), field(obj, "ap", _pairs))


def _arg(value: Any) -> Argument:
    obj = expect_obj(value, "an argument")
    if "memref" in obj:
        return _ap(obj)
    _only_keys(obj, ("dtype", "value"))
    dtype = field(obj, "dtype", _dtype)
    if dtype == e.BirDtype.float32:
        return Immediate(dtype, field(obj, "value", _float))
    return Immediate(dtype, field(obj, "value", read_int))


_FIELD_READERS: dict[str, Callable[[Any], Any]] = {
    "bool": read_bool, "int": read_int, "float": _float, "str": read_str,
    "float | None": lambda v: None if v is None else _float(v),
    "tuple[tuple[int, int], ...]": _pairs,
    **{name: enum_reader(cls) for name, cls in _ENUMS.items()}}


def _inst(value: Any) -> Inst:
    obj = expect_obj(value, "an instruction")
    opcode = field(obj, "opcode", read_str)
    cls = INST_CLASSES.get(opcode)
    if cls is None:
        raise bad_at("opcode", f"unknown opcode '{opcode}'")
    spec = _OP_FIELDS[cls]
    _only_keys(obj, {"opcode", *_HEADER, *(attr for attr, _ in spec)})
    args = {attr: field(obj, attr, _FIELD_READERS[kind]) for attr, kind in spec}
    pos = field(obj, "pos", _pos) if "pos" in obj else None
    inst = cls(field(obj, "name", read_str), field(obj, "engine", enum_reader(e.EngineType)),
               field(obj, "ins", lambda v: _list(v, _arg)),
               field(obj, "outs", lambda v: _list(v, _ap)), pos=pos, **args)
    if isinstance(inst, InstTensorScalarPtr):  # its flags must name one datapath
        try:
            tensor_scalar_variant(inst)
        except TensorScalarVariantError as err:
            raise Bad(f"TensorScalarPtr: {err}") from None
    return inst


def _pos(value: Any) -> SourcePos:
    obj = expect_obj(value, "a source position")
    _only_keys(obj, ("file", "line", "column"))
    file = field(obj, "file", lambda v: None if v is None else read_str(v))
    return SourcePos(file, field(obj, "line", read_nat), field(obj, "column", read_nat))
