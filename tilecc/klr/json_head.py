"""Decoding KLR HEAD's Lean-derived JSON into `klr.ast` (used by `klr.read`).

Contract: `HeadReader().kernel(doc)` returns a Kernel or raises `Bad` whose `path()` is
the location inside the document (`body[0].body[3].oper.op.tensorScalar.op0`). The success path
builds no path strings: a field reader that fails raises Bad, and every enclosing object
or list appends its key while the exception propagates. Operator fields are decoded from
the dataclass annotations of `klr.ast` (`AluOp | None` = Lean `Option AluOp`); the JSON key
is the snake_case field name in camelCase, except the spellings in KEY_OVERRIDES.
Tensor definitions are cached by name: a repeated definition is compared as raw JSON
(cheap) and must be identical. Shortcuts (a TensorRef whose tensor is in the cache, whole
or sliced by plain in-range slices, a float immediate, a position seen before) only ever
return what the full decode would; anything else falls through to it, which locates the
failure. Operators are decoded field by field with path tracking only: the fast path of
HEAD documents is `klr.json_fast`, which calls these readers once per distinct field text,
so this decoder is the one for whatever that path declines (and for every error). A statement's `pos` becomes the operator's `pos`
(`klr.ast`).
"""

from __future__ import annotations

import dataclasses
from enum import IntEnum
from functools import partial
from typing import Any, Callable

from tilecc.klr import ast as k
from tilecc.klr import ast_random
from tilecc.klr.json_fields import (Bad, at, bad_at, describe, enum_reader, expect_obj, field, json_type,
                                    one_ctor, read_bool, read_float32, read_int, read_int32,
                                    read_nat, read_str)

MAX_PARTITIONS = 128
_MISSING = object()
KEY_OVERRIDES = {"reducecmd": "reducecmd", "compute_op": "compute_op"}
ENUM_KINDS: dict[str, type[IntEnum]] = {  # reader kind -> enum
    e.__name__: e for e in (k.Dtype, k.Memory, k.Engine, k.AluOp, k.ActivationFunc,
                            k.AccumCmd, k.TensorSubDim, k.TensorScalarReverseOps,
                            k.DgeComputeOp, k.MatmulPerfMode, k.TransposeOps, k.DmaBounds,
                            *ast_random.ENUMS)}


class HeadReader:
    """Decoder of one document; holds the tensor cache of that document."""

    # class -> [(attribute, json key, reader kind, is Option)], built once below
    OPERATORS: dict[type, list[tuple[str, str, str, bool]]] = {}

    def __init__(self) -> None:
        self.tensors: dict[str, tuple[Any, k.TensorName]] = {}
        self.positions: dict[tuple[int, int], k.Pos] = {}  # (line, column) -> Pos
        self.float_immediates: dict[float, k.Immediate] = {}
        self.slices: dict[tuple[int, int, int], k.Slice] = {}  # (l, u, step) -> Slice
        self.ctor_class = {name: cls for cls, name in k.OPERATOR_CTOR.items()}
        self.kind_readers: dict[str, Callable[[Any], Any]] = {
            "TensorRef": self.tensor_ref, "Operand": self.operand,
            "Immediate": self.immediate, "DataPattern": self.data_pattern,
            "bool": read_bool, "int": read_nat, "str": read_str,
            "NatList": lambda v: tuple(self.list_of(v, read_nat)),
            "ImmediateList": lambda v: tuple(self.list_of(v, self.immediate)),
            **{name: enum_reader(e) for name, e in ENUM_KINDS.items()}}

    # -------------------------------------------------------------- kernel
    def kernel(self, doc: Any) -> k.Kernel:
        obj = expect_obj(doc, "a kernel")
        name = field(obj, "name", read_str)
        inputs = field(obj, "inputs", lambda v: self.list_of(v, self.kernel_arg))
        outputs = field(obj, "outputs", lambda v: self.list_of(v, self.kernel_arg))
        body = field(obj, "body", self.body)
        return k.Kernel(name, inputs, outputs, body)

    def body(self, value: Any) -> list[k.Operator]:
        """KLR HEAD's `List Block` (each {label, body: [Stmt]}), or a plain `[Stmt]`.

        Blocks are concatenated in order: without branch operators (none is supported)
        control falls through from one block to the next.
        """
        if not isinstance(value, list):
            raise Bad(f"expected an array, found {json_type(value)}")
        ops: list[k.Operator] = []
        for i, item in enumerate(value):
            if isinstance(item, dict) and "label" in item:
                at(i, lambda b: at("label", read_str, b.get("label")), item)
                ops += at(i, lambda b: field(b, "body", lambda v: self.list_of(v, self.stmt)),
                          item)
            else:
                ops.append(at(i, self.stmt, item))
        return ops

    def list_of(self, value: Any, read: Callable[[Any], Any]) -> list[Any]:
        if not isinstance(value, list):
            raise Bad(f"expected an array, found {json_type(value)}")
        return [at(i, read, v) for i, v in enumerate(value)]

    def kernel_arg(self, value: Any) -> k.TensorName:
        t = self.tensor_name(value)
        if t.address.memory not in k.HBM_MEMORIES:
            raise Bad(f"kernel argument '{t.name}' must be in HBM, found "
                      f"{t.address.memory.name}")
        return t

    def stmt(self, value: Any) -> k.Operator:
        ctor, payload = one_ctor(value, "a statement")
        if ctor != "oper":
            raise Bad(f"unsupported statement '{ctor}' (expected 'oper')")
        return at("oper", self.oper, payload)

    def oper(self, value: Any) -> k.Operator:
        """KLR `Stmt.oper op name pos`: the operator, with the statement's position."""
        obj = expect_obj(value, "oper")
        result = field(obj, "op", self.operator)
        if obj.get("pos") is not None:
            result.pos = field(obj, "pos", self.pos)
        return result

    def pos(self, value: Any) -> k.Pos | None:
        """KLR `Pos` {line, column := 0, lineEnd?, columnEnd?, filename?}; line 0 column 0
        alone is the writers' "no position" (None). Decoded once per distinct value."""
        if type(value) is dict and len(value) == 2:
            line, column = value.get("line"), value.get("column")
            if type(line) is int and type(column) is int:
                if line == 0 and column == 0:
                    return None
                hit = self.positions.get((line, column))
                if hit is not None:
                    return hit
        obj = expect_obj(value, "a Pos")

        def optional(key: str, read: Callable[[Any], Any]) -> Any:
            v = obj.get(key)
            return None if v is None else at(key, read, v)
        pos = k.Pos(field(obj, "line", read_nat), optional("column", read_nat) or 0,
                    optional("lineEnd", read_nat), optional("columnEnd", read_nat),
                    optional("filename", read_str))
        if pos == k.Pos(0):
            return None
        if len(obj) == 2 and "column" in obj:
            self.positions[(pos.line, pos.column)] = pos
        return pos

    def operator(self, value: Any) -> k.Operator:
        ctor, payload = one_ctor(value, "an operator")
        cls = self.ctor_class.get(ctor)
        if cls is None:
            raise Bad(f"unsupported operator '{ctor}'")
        return at(ctor, lambda v: self.operator_fields(cls, v), payload)

    def operator_fields(self, cls: type, value: Any) -> k.Operator:
        obj = expect_obj(value, cls.__name__)
        args: dict[str, Any] = {}
        for attr, key, kind, option in self.OPERATORS[cls]:
            v = obj.get(key, _MISSING)
            if v is _MISSING or (v is None and option):
                if option:
                    args[attr] = None
                    continue
                if attr in _DEFAULTED[cls]:
                    continue
                raise Bad(f"missing field '{key}'")
            args[attr] = at(key, self.kind_readers[kind], v)
        return cls(**args)

    # -------------------------------------------------------------- tensors
    def tensor_name(self, value: Any) -> k.TensorName:
        obj = expect_obj(value, "a TensorName")
        name = field(obj, "name", read_str)
        cached = self.tensors.get(name)
        if cached is not None:
            if cached[0] == obj:
                return cached[1]
            tensor = self.decode_tensor_name(obj, name)
            if tensor != cached[1]:
                raise Bad(f"tensor '{name}' is defined twice, differently")
            return tensor
        tensor = self.decode_tensor_name(obj, name)
        self.tensors[name] = (obj, tensor)
        return tensor

    def decode_tensor_name(self, obj: dict[str, Any], name: str) -> k.TensorName:
        dtype = field(obj, "dtype", enum_reader(k.Dtype))
        shape = field(obj, "shape", self.shape)
        address = field(obj, "address", lambda v: self.address(v, name))
        return check_tensor(k.TensorName(name, dtype, shape, address))

    def shape(self, value: Any) -> k.Shape:
        obj = expect_obj(value, "a Shape")
        return k.Shape(field(obj, "parDim", read_nat),
                       tuple(field(obj, "freeDims", lambda v: self.list_of(v, read_nat))))

    def address(self, value: Any, name: str) -> k.Address:
        obj = expect_obj(value, "an Address")

        def opt_nat(key: str) -> int | None:
            v = obj.get(key)
            return None if v is None else at(key, read_nat, v)
        return k.Address(field(obj, "name", read_str), field(obj, "memory",
                                                            enum_reader(k.Memory)),
                         field(obj, "parSize", read_nat), field(obj, "freeSize", read_nat),
                         opt_nat("parOffset"), opt_nat("freeOffset"),
                         at("isShared", read_bool, obj.get("isShared", False)))

    def tensor_ref(self, value: Any) -> k.Access:
        # fast paths: `{"abstract": {"simple" | "basic": ...}}` on a tensor seen before,
        # identical; any other shape fails a lookup (KeyError / TypeError) or a test and
        # takes the checked path
        try:
            inner = value["abstract"]
            if "simple" in inner:
                raw = inner["simple"]
                cached = self.tensors[raw["name"]]
            else:
                basic = inner["basic"]
                raw = basic["tensor"]
                cached = self.tensors[raw["name"]]
                if cached[0] == raw and len(value) == 1 and len(inner) == 1:
                    indexes = self.basic_indexes(cached[1], basic["indexes"])
                    if indexes is not None:
                        return k.AccessBasic(cached[1], indexes)
                cached = None
        except (KeyError, TypeError, IndexError):
            cached = None
        if (cached is not None and cached[0] == raw and len(value) == 1
                and len(inner) == 1):
            return cached[1]
        ctor, payload = one_ctor(value, "a TensorRef")
        if ctor != "abstract":
            raise Bad(f"unsupported TensorRef '{ctor}' (expected 'abstract')")
        return at(ctor, self.access, payload)

    def access(self, value: Any) -> k.Access:
        ctor, payload = one_ctor(value, "an Access")
        if ctor == "simple":
            return at(ctor, self.tensor_name, payload)
        if ctor == "basic":
            return at(ctor, self.access_basic, payload)
        if ctor == "pattern":
            return at(ctor, self.access_pattern, payload)
        if ctor == "birPattern":
            return at(ctor, self.bir_pattern, payload)
        raise Bad(f"unknown Access '{ctor}'")

    def access_basic(self, value: Any) -> k.AccessBasic:
        obj = expect_obj(value, "an AccessBasic")
        tensor = field(obj, "tensor", self.tensor_name)
        dims = (tensor.shape.par_dim,) + tensor.shape.free_dims

        def indexes(v: Any) -> tuple[k.Index, ...]:
            if not isinstance(v, list) or len(v) != len(dims):
                raise Bad(f"expected {len(dims)} indexes for the dimensions of "
                          f"'{tensor.name}', found {describe(v)}")
            return tuple(at(i, partial(self.index, dim=d, partition=i == 0), v[i])
                         for i, d in enumerate(dims))
        return k.AccessBasic(tensor, field(obj, "indexes", indexes))

    def basic_indexes(self, tensor: k.TensorName, value: Any) -> tuple[k.Index, ...] | None:
        """The indexes of an AccessBasic when each is a slice `{"slice": {"l", "u", "step"}}`
        of plain integers that `index` accepts, as `index` makes them (one shared Slice per
        bounds); otherwise None, for the checked path."""
        shape = tensor.shape
        dims = (shape.par_dim, *shape.free_dims)
        if type(value) is not list or len(value) != len(dims):
            return None
        out = []
        for i, (item, dim) in enumerate(zip(value, dims)):
            if type(item) is not dict or len(item) != 1 or type(b := item.get("slice")) is not dict:
                return None
            lo, hi, step = b.get("l"), b.get("u"), b.get("step")
            if not (type(lo) is int and type(hi) is int and type(step) is int
                    and 0 <= lo <= dim and 0 <= hi <= dim and (step == 1 or (step and i))):
                return None
            bounds = (lo, hi, step)
            if (piece := self.slices.get(bounds)) is None:
                piece = self.slices[bounds] = k.Slice(lo, hi, step)
            out.append(piece)
        return tuple(out)

    def index(self, value: Any, dim: int, partition: bool = False) -> k.Index:
        """One Index of an AccessBasic; on the partition dim (`partition`) a slice must
        have step 1, the only partition step KLR and BIR access patterns have."""
        ctor, payload = one_ctor(value, "an Index")
        if ctor == "coord":
            e = at(ctor, lambda v: field(expect_obj(v, "coord"), "e", read_nat), payload)
            if e >= dim:
                raise Bad(f"index {e} out of range for a dimension of size {dim}")
            return k.Coord(e)
        if ctor != "slice":
            raise Bad(f"unknown Index '{ctor}'")
        lo, hi, step = at(ctor, self.slice_bounds, payload)
        if step == 0:
            raise Bad("slice step cannot be 0")
        if partition and step != 1:
            raise Bad(f"slice {lo}:{hi}:{step} on the partition dimension: the partition "
                      f"step must be 1")
        if not (0 <= lo <= dim and 0 <= hi <= dim) and not (step < 0 and lo < dim):
            raise Bad(f"slice {lo}:{hi}:{step} out of range for a dimension of size {dim}")
        return k.Slice(lo, hi, step)

    def slice_bounds(self, value: Any) -> tuple[int, int, int]:
        obj = expect_obj(value, "a Slice")
        return field(obj, "l", read_nat), field(obj, "u", read_nat), field(obj, "step", read_int)

    def pairs(self, value: Any) -> tuple[k.APPair, ...]:
        def pair(v: Any) -> k.APPair:
            o = expect_obj(v, "an APPair")
            if o.get("offset", 0) != 0:
                raise Bad("APPair offsets are not supported (fold them into the offset)")
            return k.APPair(field(o, "step", read_int), field(o, "num", read_nat))
        return tuple(self.list_of(value, pair))

    def access_pattern(self, value: Any) -> k.AccessPattern:
        obj = expect_obj(value, "an AccessPattern")
        tensor = field(obj, "tensor", self.tensor_name)
        key = "freePattern" if "freePattern" in obj else "pattern"
        size = k.DTYPE_SIZE[tensor.dtype]
        free_bytes = at("freeOffset", read_nat, obj.get("freeOffset", 0))
        if free_bytes % size:
            raise Bad(f"freeOffset {free_bytes} is not a multiple of the {tensor.dtype.name} "
                      f"size {size}")
        return k.AccessPattern(tensor, field(obj, "parNum", read_nat), field(obj, key, self.pairs),
                               at("parOffset", read_nat, obj.get("parOffset", 0)),
                               free_bytes // size)

    def bir_pattern(self, value: Any) -> k.AccessPattern:
        obj = expect_obj(value, "a BirAccessPattern")
        for key in ("vectorOffset", "scalarOffset"):
            if obj.get(key) is not None:   # a dynamic (indirect) access: not this AST's form
                raise bad_at(key, "dynamic offsets in an access are not supported; an "
                                  "indirect DMA is the operator indirectDmaCopy")
        tensor = field(obj, "tensor", self.tensor_name)
        offset = field(obj, "offset", read_nat)
        pairs = field(obj, "pattern", self.pairs)
        if not pairs:
            raise Bad("a BirAccessPattern needs the partition pair first")
        row = max(tensor.shape.free_elements, 1)
        return k.AccessPattern(tensor, pairs[0].num, pairs[1:], offset // row, offset % row)

    # -------------------------------------------------------------- operands
    def operand(self, value: Any) -> k.Operand:
        if type(value) is dict and len(value) == 1:
            if "tile" in value:
                return at("tile", self.tensor_ref, value["tile"])
            # fast path: {"imm": {"float": {"f": <number>}}}
            inner = value.get("imm")
            single = inner.get("float") if type(inner) is dict and len(inner) == 1 else None
            x = single.get("f") if type(single) is dict and len(single) == 1 else None
            if (type(x) is float or type(x) is int) and x:
                # one shared (frozen) Immediate per nonzero value; 0.0 and -0.0 are equal
                # keys, so zeros are not cached
                imm = self.float_immediates.get(x)
                if imm is None:
                    imm = self.float_immediates[x] = k.Immediate(read_float32(x))
                return imm
            if type(x) is float or type(x) is int:
                return k.Immediate(read_float32(x))
        ctor, payload = one_ctor(value, "an Operand")
        if ctor == "imm":
            return at(ctor, self.immediate, payload)
        if ctor == "tile":
            return at(ctor, self.tensor_ref, payload)
        raise Bad(f"unknown Operand '{ctor}'")

    def immediate(self, value: Any) -> k.Immediate:
        ctor, payload = one_ctor(value, "an Immediate")
        if ctor == "int":
            return k.Immediate(at(ctor, lambda v: field(expect_obj(v, "int"), "i", read_int32),
                                  payload))
        if ctor == "float":
            return k.Immediate(at(ctor, lambda v: field(expect_obj(v, "float"), "f",
                                                        read_float32), payload))
        raise Bad(f"unsupported Immediate '{ctor}' (expected int or float)")

    def data_pattern(self, value: Any) -> k.DataPattern:
        obj = expect_obj(value, "a DataPattern")
        return k.DataPattern(field(obj, "offset", read_int), field(obj, "pattern", self.pairs),
                             field(obj, "channelMultiplier", read_int))


def check_tensor(t: k.TensorName) -> k.TensorName:
    """The TensorName invariants of klr.ast (shape fits the address; <= 128 partitions)."""
    a = t.address
    if t.shape.par_dim > a.par_size:
        raise Bad(f"tensor '{t.name}': {t.shape.par_dim} partitions do not fit its address of "
                  f"{a.par_size}")
    need = t.shape.free_elements * k.DTYPE_SIZE[t.dtype]
    if need > a.free_size:
        raise Bad(f"tensor '{t.name}': {need} bytes per partition do not fit its address of "
                  f"{a.free_size}")
    if a.memory in (k.Memory.sbuf, k.Memory.psum) and a.par_size > MAX_PARTITIONS:
        raise Bad(f"tensor '{t.name}': {a.par_size} partitions exceed the {MAX_PARTITIONS} of "
                  f"{a.memory.name}")
    return t


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def _operator_spec(cls: type) -> list[tuple[str, str, str, bool]]:
    spec = []
    for f in dataclasses.fields(cls):
        if f.name == "pos":
            continue  # the statement's position, a sibling of the operator in KLR
        annotation = str(f.type)
        option = annotation.endswith(" | None")
        kind = annotation.removesuffix(" | None")
        spec.append((f.name, KEY_OVERRIDES.get(f.name, camel(f.name)), kind, option))
    return spec


HeadReader.OPERATORS = {cls: _operator_spec(cls) for cls in k.OPERATOR_CTOR}
# attributes whose key may be missing: they have a Python default (KLR field added later)
FIELD_DEFAULTS: dict[type, dict[str, Any]] = {
    cls: {f.name: f.default for f in dataclasses.fields(cls)
          if f.default is not dataclasses.MISSING and f.name != "pos"}
    for cls in k.OPERATOR_CTOR}
_DEFAULTED: dict[type, frozenset[str]] = {cls: frozenset(d) for cls, d in FIELD_DEFAULTS.items()}
