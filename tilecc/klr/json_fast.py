"""The fast path of reading KLR HEAD JSON: msgspec splits the document, each distinct
operator text and each distinct field text is decoded once by the checked reader
(`klr.json_head`).

Contract: `fast_head_kernel(text)` returns the Kernel that `HeadReader().kernel(json.loads(
text))` returns, or raises `NotFast`; it never reports an error itself. The caller then
decodes the text with the checked path, which accepts what this path declines (a plain
list of statements instead of blocks, the klr 0.0.12 form) and locates every error.

How: msgspec decodes the statement skeleton (kernel {name, inputs, outputs, body: [block
{label, body: [{"oper": {"op": {ctor: payload}, "pos"?}}]}]}) in C, each operator payload,
`pos`, `inputs` and `outputs` kept as raw JSON text (`msgspec.Raw`). A kernel repeats
operators (a traced loop body), so the constructor arguments are remembered per distinct
payload text and constructor: a repeated statement costs one lookup and one constructor
call. A new payload text is decoded by msgspec into its constructor's Struct, whose
scalar fields (enum names, bools, naturals) are typed there with the checked readers'
rules and every other field stays raw; the value of a raw field is the checked reader of
its kind applied to the raw text decoded (msgspec's untyped decode: the value `json.loads`
gives, or a refusal where json.loads would take a non-standard literal such as NaN or
1e400, a lone surrogate), remembered per distinct raw text and kind (KLR
repeats the whole tensor definition at every access). Raw texts are read in document
order (inputs, outputs, then each new payload's fields in dataclass order), so the checked
reader's tensor table sees definitions in the order the checked path would; a repeated
payload text defines no tensor that its first occurrence did not.

Why the results are equal: the skeleton's rules are the checked path's (a statement is an
object with exactly the key "oper"; an operator an object with exactly one known
constructor key; payload keys outside the operator's fields are ignored, as are the other
keys of kernel, block and oper), a raw text decodes to the value `json.loads` gives at that
place of the whole document, and every value is made by the checked reader. Whatever else
(a missing or null required field, an unknown constructor, invalid JSON, anything msgspec
or json.loads refuses) is NotFast.
"""

from __future__ import annotations

from typing import Annotated, Any, Callable

import msgspec

from tilecc.klr import ast as k
from tilecc.klr.json_fields import Bad
from tilecc.klr.json_head import ENUM_KINDS, FIELD_DEFAULTS, HeadReader

Raw = msgspec.Raw
_decode = msgspec.json.decode  # untyped: dict / list / str / int / float / bool / None
_MISS = object()


class NotFast(Exception):
    """This path does not take the document: decode it with the checked path."""


# the scalar kinds msgspec checks itself, as the checked readers do: an enum is one of its
# member names (checked in `read`), bool strictly true / false, int a natural number
_ENUMS = {name: {m.name: m for m in e} for name, e in ENUM_KINDS.items()}
_SCALARS: dict[str, Any] = {**{name: str for name in _ENUMS}, "bool": bool,
                            "int": Annotated[int, msgspec.Meta(ge=0)]}


def _payload_field(cls: type, attr: str, key: str, kind: str, option: bool) -> tuple[Any, ...]:
    """A payload field: a scalar kind typed (Option: null or missing = None; a Python
    default: missing = UNSET, null refused; otherwise required), any other kind raw
    (None = missing, so that the read tells a missing field from null)."""
    scalar = _SCALARS.get(kind)
    if scalar is None:
        return (key, Raw, None)
    if option:
        return (key, scalar | None, None)
    if attr in FIELD_DEFAULTS[cls]:
        return (key, scalar | msgspec.UnsetType, msgspec.UNSET)
    return (key, scalar)


def _payload_struct(cls: type) -> type:
    """msgspec Struct of an operator payload: one field per JSON key."""
    fields = [_payload_field(cls, attr, key, kind, option)
              for attr, key, kind, option in HeadReader.OPERATORS[cls]]
    return msgspec.defstruct(f"{cls.__name__}Fields", fields, kw_only=True)


_PAYLOADS: dict[type, type] = {cls: _payload_struct(cls) for cls in k.OPERATOR_CTOR}
_PAYLOAD_DECODERS: dict[str, msgspec.json.Decoder[Any]] = {
    k.OPERATOR_CTOR[cls]: msgspec.json.Decoder(s) for cls, s in _PAYLOADS.items()}


class _Oper(msgspec.Struct):
    op: dict[str, Raw]  # {ctor: payload}: exactly one key, checked in the loop
    pos: Raw = Raw(b"null")  # missing = null = no position, as in the checked path


class _Stmt(msgspec.Struct, forbid_unknown_fields=True):
    oper: _Oper


class _Block(msgspec.Struct):
    label: str
    body: list[_Stmt]


class _Kernel(msgspec.Struct):
    name: str
    inputs: Raw
    outputs: Raw
    body: list[_Block]


SKELETON = msgspec.json.Decoder(_Kernel)  # the statement skeleton of a HEAD document


def _field_source(index: int, key: str, kind: str, option: bool, defaulted: bool) -> str:
    """Source of one constructor argument; `p` is the payload struct. A scalar: E_<kind> maps
    an enum member name to the member (KeyError: not a member). A raw field: `b` is its
    bytes, C_<kind> the memo of the kind (raw -> value), F_<kind> decodes a raw text not in
    the memo."""
    if kind in _SCALARS:
        value = f"E_{kind}[v]" if kind in _ENUMS else "v"
        if option:
            return f"None if (v := p.{key}) is None else {value}"
        if defaulted:
            return f"D[{index}] if (v := p.{key}) is U else {value}"
        return f"E_{kind}[p.{key}]" if kind in _ENUMS else f"p.{key}"
    value = f"(h if (h := C_{kind}.get(b, M)) is not M else F_{kind}(b))"
    if option:  # missing or null: None
        return f'None if (v := p.{key}) is None or (b := bytes(v)) == b"null" else {value}'
    if defaulted:  # missing: the Python default; null goes to the reader, which refuses it
        return f"D[{index}] if (v := p.{key}) is None else ((b := bytes(v)), {value})[1]"
    return f"((b := bytes(p.{key})), {value})[1]"  # missing: bytes(None) is a TypeError


Make = Callable[[dict[str, dict[bytes, Any]], dict[str, Callable[[bytes], Any]]],
                Callable[[Any], Any]]


def _compile_reader(cls: type) -> Make:
    """`make(C, F)` -> `read(payload_struct)` -> the constructor arguments of `cls`, one
    straight-line tuple."""
    spec = HeadReader.OPERATORS[cls]
    defaults = FIELD_DEFAULTS[cls]
    kinds = sorted({kind for _, _, kind, _ in spec if kind not in _SCALARS})
    args = [_field_source(i, key, kind, option, attr in defaults)
            for i, (attr, key, kind, option) in enumerate(spec)]
    source = ("def make(C, F):\n"
              + "".join(f"    C_{kind} = C[{kind!r}]\n    F_{kind} = F[{kind!r}]\n"
                        for kind in kinds)
              + "    def read(p):\n        return (\n            "
              + ",\n            ".join(args) + ",)\n    return read\n")
    scope: dict[str, Any] = {"M": _MISS, "U": msgspec.UNSET,
                             **{f"E_{name}": members for name, members in _ENUMS.items()},
                             "D": tuple(defaults.get(attr) for attr, _, _, _ in spec)}
    exec(source, scope)  # noqa: S102 (source built from the dataclass fields)
    make: Make = scope["make"]
    return make


_MAKERS = {k.OPERATOR_CTOR[cls]: (cls, _compile_reader(cls)) for cls in _PAYLOADS}


def _filler(memo: dict[bytes, Any], read: Callable[[Any], Any]) -> Callable[[bytes], Any]:
    """Decodes a raw text not yet in `memo` with the checked reader and remembers it."""
    def fill(raw: bytes) -> Any:
        value = memo[raw] = read(_decode(raw))
        return value
    return fill


def fast_head_kernel(text: str | bytes) -> k.Kernel:
    try:
        doc = SKELETON.decode(text)
        reader = HeadReader()
        memos: dict[str, dict[bytes, Any]] = {kind: {} for kind in reader.kind_readers}
        fillers = {kind: _filler(memos[kind], read)
                   for kind, read in reader.kind_readers.items()}
        # ctor -> (class, payload decoder, arguments of the payload struct, arguments by text)
        ctors: dict[str, tuple[type, Callable[[bytes], Any], Callable[[Any], Any],
                               dict[bytes, Any]]] = {
            ctor: (cls, _PAYLOAD_DECODERS[ctor].decode, make(memos, fillers), {})
            for ctor, (cls, make) in _MAKERS.items()}
        positions: dict[bytes, k.Pos | None] = {}
        pos = _filler(positions, reader.pos)
        inputs = reader.list_of(_decode(doc.inputs), reader.kernel_arg)
        outputs = reader.list_of(_decode(doc.outputs), reader.kernel_arg)
        body: list[k.Operator] = []
        append = body.append
        for block in doc.body:
            for stmt in block.body:
                oper = stmt.oper
                ((ctor, raw),) = oper.op.items()  # not exactly one key: ValueError
                cls, decode, read, known = ctors[ctor]
                payload = bytes(raw)
                args = known.get(payload)
                if args is None:
                    args = known[payload] = read(decode(payload))
                op = cls(*args)
                raw_pos = bytes(oper.pos)
                if raw_pos != b"null":
                    op.pos = positions[raw_pos] if raw_pos in positions else pos(raw_pos)
                append(op)
        return k.Kernel(doc.name, inputs, outputs, body)
    except (msgspec.MsgspecError, Bad, ValueError, TypeError, KeyError, RecursionError):
        raise NotFast from None
