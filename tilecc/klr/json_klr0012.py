"""Decoding the JSON of the `klr` tool 0.0.12 (`klr nki-to-klr -j`) into `klr.ast`.

Contract (format notes: shared/klr-0.0.12/README.md): Kernel {name, inputs, outputs, body};
TensorName address {memory, size: [partitions, bytes], partitionOffset, freeOffset,
parent}; statements `{"store": {"dst": Access, "op": Operator, "args": [Value]}}` with
Operator "load" | "save" | {"memset": v} | {"tensorScalar": {op0, const0, reverse0, op1,
const1, reverse1}}; Value {"access": {"a": Access}}; a slice index
`{"slice": {"slice": [l, [u, step]]}}`; an access pattern {tensor, parNum, freePattern,
offset} (mgrid indexing: offset = the first partition, free steps repaired, see
`access_pattern`). A load / save whose partition slice has a step becomes one DMA copy per
partition; engine operands need consecutive partitions. The conversion to HEAD's AST is
described in `klr.read`. Other statements and operators (tensorScalarAddr, var / int
values ...) are rejected with the path of the offending field.
"""

from __future__ import annotations

from typing import Any

from tilecc.klr import ast as k
from tilecc.klr.json_fields import (Bad, at, bad_at, enum_reader, expect_obj, field, one_ctor,
                                    read_bool, read_float32, read_int, read_nat, read_str)
from tilecc.klr.json_head import HeadReader

_REVERSE = {(False, False): k.TensorScalarReverseOps.none,
            (True, False): k.TensorScalarReverseOps.first,
            (False, True): k.TensorScalarReverseOps.second,
            (True, True): k.TensorScalarReverseOps.both}


class Klr0012Reader(HeadReader):
    def __init__(self) -> None:
        super().__init__()
        self.arg_names: set[str] = set()
        self.saved: list[str] = []
        self.loaded: set[str] = set()

    def kernel(self, doc: Any) -> k.Kernel:
        obj = expect_obj(doc, "a kernel")
        for key in ("inputs", "outputs"):
            args = obj.get(key)
            for arg in args if isinstance(args, list) else []:
                if isinstance(arg, dict) and isinstance(arg.get("name"), str):
                    self.arg_names.add(arg["name"])
        name = field(obj, "name", read_str)
        inputs = field(obj, "inputs", lambda v: self.list_of(v, self.tensor_name))
        outputs = field(obj, "outputs", lambda v: self.list_of(v, self.tensor_name))
        body = [op for ops in field(obj, "body", lambda v: self.list_of(v, self.stmt_ops))
                for op in ops]
        declared = {t.name for t in outputs}
        by_name = {t.name: t for t in inputs + outputs}
        outputs += [by_name[n] for n in dict.fromkeys(self.saved)
                    if n not in declared and n in by_name]
        written = set(self.saved)
        inputs = [t for t in inputs if t.name not in written or t.name in self.loaded]
        return k.Kernel(name, inputs, outputs, body)

    def address(self, value: Any, name: str) -> k.Address:
        obj = expect_obj(value, "an Address")
        size = field(obj, "size", lambda v: self.list_of(v, read_nat))
        if len(size) != 2:
            raise bad_at("size", f"expected [partitions, bytes], found {len(size)} numbers")
        if obj.get("parent") is not None:
            raise Bad("sub-allocated tensors (a non-null parent) are not supported")
        memory = k.Memory.hbm if name in self.arg_names else field(
            obj, "memory", enum_reader(k.Memory))
        par_off = obj.get("partitionOffset")
        free_off = obj.get("freeOffset")
        return k.Address(name, memory, size[0], size[1],
                         None if par_off is None else at("partitionOffset", read_nat, par_off),
                         None if free_off is None else at("freeOffset", read_nat, free_off))

    def slice_bounds(self, value: Any) -> tuple[int, int, int]:
        obj = expect_obj(value, "a Slice")
        raw = obj.get("slice")
        if (isinstance(raw, list) and len(raw) == 2 and isinstance(raw[1], list)
                and len(raw[1]) == 2):
            return (at("slice", lambda v: read_nat(v[0]), raw),
                    at("slice", lambda v: read_nat(v[1][0]), raw),
                    at("slice", lambda v: read_int(v[1][1]), raw))
        raise Bad("expected a slice as {\"slice\": [l, [u, step]]}")

    def access_pattern(self, value: Any) -> k.AccessPattern:
        """The pattern the 0.0.12 tracer writes for mgrid indexing (`i, j = mgrid[...]`,
        `a[i, j]`). Its `offset` is the partition index's first value (the tracer takes the
        first index's value at 0 and drops the others'), and every free step comes out 0 (the
        tracer bug the format notes list). The step-0 pairs are read as the mgrid access
        they were traced from: consecutive elements along each free dimension (row-major
        strides of the tensor), starting at free element 0 -- right for mgrid[p0:p1, 0:n],
        the way kernels index whole rows; the free start and step of mgrid[p0:p1, f0:f1:s]
        are not in the file at all, so such an access reads as f0 = 0, s = 1."""
        obj = expect_obj(value, "an AccessPattern")
        tensor = field(obj, "tensor", self.tensor_name)
        pairs = field(obj, "freePattern", self.pairs)
        if pairs and all(p.step == 0 for p in pairs):
            strides = k.row_strides(tensor.shape)[-len(pairs):]
            pairs = tuple(k.APPair(s, p.num) for s, p in zip(strides, pairs))
        return k.AccessPattern(tensor, field(obj, "parNum", read_nat), pairs,
                               at("offset", read_nat, obj.get("offset", 0)), 0)

    def index(self, value: Any, dim: int, partition: bool = False) -> k.Index:
        # a strided partition slice is read here and split into one copy per partition
        # by `store` (DMA only); engine operands keep HEAD's step-1 rule
        return super().index(value, dim, False)

    def stmt_ops(self, value: Any) -> list[k.Operator]:
        """A 0.0.12 statement (a store), which decodes to one or more KLR operators."""
        ctor, payload = one_ctor(value, "a statement")
        if ctor != "store":
            raise Bad(f"unsupported statement '{ctor}' (expected 'store')")
        return at("store", self.store, payload)

    def store(self, value: Any) -> list[k.Operator]:
        obj = expect_obj(value, "a store")
        dst = field(obj, "dst", self.access)
        args = field(obj, "args", lambda v: self.list_of(v, self.value))
        op, payload = at("op", lambda v: one_ctor(v, "an operator"), obj.get("op"))
        if op in ("load", "save", "tensorScalar") and len(args) != 1:
            raise bad_at("args", f"'{op}' takes one argument, found {len(args)}")
        if op == "load":
            self.loaded.add(k.access_tensor(args[0]).name)
            return dma_copies(dst, args[0])
        if op == "save":
            self.saved.append(k.access_tensor(dst).name)
            return dma_copies(dst, args[0])
        for where, access in (("dst", dst), ("args", args[0] if args else dst)):
            if (step := partition_step(access)) != 1:
                raise bad_at(where, f"partition step {step} in an operand of '{op}': engine "
                                    f"accesses need consecutive partitions")
        if op == "memset":
            dtype = k.access_tensor(dst).dtype
            v = at("op", lambda p: at("memset", read_float32, p), payload)
            imm = k.Immediate(int(v) if dtype in k.INT_DTYPES and float(v).is_integer() else v)
            return [k.MemSet(dst, imm, dtype)]
        if op == "tensorScalar":
            return [at("op", lambda p: at("tensorScalar", lambda q: self.tensor_scalar(
                dst, args[0], q), p), payload)]
        raise bad_at("op", f"unsupported operator '{op}'")

    def tensor_scalar(self, dst: k.Access, src: k.Access, value: Any) -> k.TensorScalar:
        obj = expect_obj(value, "tensorScalar")
        alu = enum_reader(k.AluOp)
        op0, op1 = field(obj, "op0", alu), field(obj, "op1", alu)
        c0, c1 = field(obj, "const0", read_float32), field(obj, "const1", read_float32)
        rev = (field(obj, "reverse0", read_bool), field(obj, "reverse1", read_bool))
        return k.TensorScalar(dst, src, k.Immediate(c0), op0, k.Immediate(c1), op1,
                              _REVERSE[rev])

    def value(self, value: Any) -> k.Access:
        ctor, payload = one_ctor(value, "a Value")
        if ctor != "access":
            raise Bad(f"unsupported argument value '{ctor}' (expected an access)")
        return at(ctor, lambda v: field(expect_obj(v, "access"), "a", self.access), payload)


def partition_step(access: k.Access) -> int:
    if isinstance(access, k.AccessBasic) and isinstance(access.indexes[0], k.Slice):
        return access.indexes[0].step
    return 1


def dma_copies(dst: k.Access, src: k.Access) -> list[k.Operator]:
    """load / save as DMA copies: one copy, or one per partition when either side takes
    every n-th partition (`a[1:9:3]`, which the tracer accepts and KLR's access patterns,
    with consecutive partitions only, cannot say; DMA queues address rows one by one)."""
    if partition_step(dst) == 1 and partition_step(src) == 1:
        return [k.NcDmaCopy(dst, src)]
    count, src_count = partition_count(dst), partition_count(src)
    if count != src_count:
        raise Bad(f"a copy from {src_count} partitions to {count}")
    return [k.NcDmaCopy(row_of(dst, r), row_of(src, r)) for r in range(count)]


def partition_count(access: k.Access) -> int:
    if (isinstance(access, k.AccessBasic) and isinstance(par := access.indexes[0], k.Slice)
            and par.step != 1):
        return par.size
    return k.access_shape(access)[0]


def row_of(access: k.Access, r: int) -> k.Access:
    """Partition `r` of `access` (counted within the access) as an access of its own."""
    if isinstance(access, k.TensorName):
        return k.AccessBasic(access, (k.Coord(r),) + tuple(
            k.Slice(0, d) for d in access.shape.free_dims))
    if isinstance(access, k.AccessPattern):
        return k.AccessPattern(access.tensor, 1, access.pattern, access.par_offset + r,
                               access.free_offset)
    par = access.indexes[0]
    row = par.e if isinstance(par, k.Coord) else par.l + r * par.step
    return k.AccessBasic(access.tensor, (k.Coord(row),) + access.indexes[1:])
