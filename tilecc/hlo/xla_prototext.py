"""HloModuleProto in protobuf text format (`.pbtxt`), read with the schema jaxlib carries.

Contract: `prototext_to_binary(text)` returns the binary HloModuleProto that `text` (protobuf
text format, as XLA's `--xla_dump_hlo_as_proto` text dumps and XLA's tests write it) means,
or raises `ValueError` with the text-format parser's located message ("3:5 : Message type
... has no field named ...").

How: jaxlib exposes no text-proto reader, but its shared library embeds XLA's own compiled
schema -- the serialized `FileDescriptorProto` of `xla/service/hlo.proto` and of every file it
imports -- as protobuf's generated code does for each .proto file. The descriptors are read
out of the library, added to a protobuf `DescriptorPool`, and the `protobuf` package's
`text_format` does the parsing, so tilecc holds no copy of the schema and the parse follows
exactly the jaxlib version installed (pinned 0.10.x, the `[xla]` extra). Runs only in the
jaxlib child process of tilecc/hlo/xla_import.py.

Invariant: a descriptor blob is cut where its wire fields stop being FileDescriptorProto
fields (numbers 1-14, wire types 0 and 2) or where a second `name` field (number 1) begins,
which is where the next file's descriptor starts; protobuf then validates the blob when it
builds the pool, so a wrong cut is an error, never a silently different schema.
"""

from __future__ import annotations

import mmap
from pathlib import Path
from typing import Any

_ROOT = "xla/service/hlo.proto"
_MESSAGE = "xla.HloModuleProto"
_FILE_DESCRIPTOR_FIELDS = range(1, 15)


def prototext_to_binary(text: str) -> bytes:
    from google.protobuf import message_factory, text_format
    message = message_factory.GetMessageClass(_pool().FindMessageTypeByName(_MESSAGE))()
    try:
        text_format.Parse(text, message)
    except text_format.ParseError as exc:
        raise ValueError(f"protobuf text format: {exc}") from None
    return bytes(message.SerializeToString())


def _pool() -> Any:  # protobuf ships no type information
    from google.protobuf import descriptor_pb2, descriptor_pool
    pool = descriptor_pool.DescriptorPool()
    with _library() as data:
        added: set[str] = set()

        def add(name: str) -> None:
            if name in added:
                return
            proto = descriptor_pb2.FileDescriptorProto()
            if name.startswith("google/protobuf/"):   # protobuf's own well-known types
                _well_known(name).CopyToProto(proto)
            else:
                proto.MergeFromString(_descriptor_blob(data, name))
            for dependency in proto.dependency:
                add(dependency)
            pool.Add(proto)
            added.add(name)

        add(_ROOT)
    return pool


def _well_known(name: str) -> Any:
    import importlib
    stem = name.removeprefix("google/protobuf/").removesuffix(".proto")
    return importlib.import_module(f"google.protobuf.{stem}_pb2").DESCRIPTOR


class _library:
    """The jaxlib shared library holding the schema, memory-mapped for the search."""

    def __enter__(self) -> mmap.mmap:
        import jaxlib
        needle = _name_field(_ROOT)
        for path in sorted(Path(jaxlib.__file__).parent.glob("*.so")):
            with open(path, "rb") as handle:
                data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
            if data.find(needle) >= 0:
                self._data = data
                return data
            data.close()
        raise ValueError(f"the installed jaxlib holds no schema for {_ROOT}")

    def __exit__(self, *exc: object) -> None:
        self._data.close()


def _name_field(name: str) -> bytes:
    encoded = name.encode()
    return b"\x0a" + _varint_bytes(len(encoded)) + encoded


def _descriptor_blob(data: mmap.mmap, name: str) -> bytes:
    start = data.find(_name_field(name))
    if start < 0:
        raise ValueError(f"the installed jaxlib holds no schema for {name}")
    at, seen_name = start, False
    while at < len(data):
        try:
            tag, after = _varint(data, at)
            field, wire = tag >> 3, tag & 7
            if field not in _FILE_DESCRIPTOR_FIELDS or wire not in (0, 2) \
                    or (field == 1 and seen_name):
                break
            seen_name = seen_name or field == 1
            value, after = _varint(data, after)
            after += value if wire == 2 else 0
        except IndexError:
            break
        if after > len(data):
            break
        at = after
    return bytes(data[start:at])


def _varint(data: mmap.mmap, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at
        if shift > 63:
            raise IndexError("varint too long")


def _varint_bytes(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)
