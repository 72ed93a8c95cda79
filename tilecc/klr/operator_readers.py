"""Generated decoders of KLR HEAD operator payloads: the success path of `json_head`.

Contract: `compile_fast_reader(cls, spec, defaults)` returns a factory; given the field
readers of one decoder (`kind -> read(value)`), it returns `read(payload_dict) -> cls`,
equivalent to decoding every field of the spec (`(attribute, json key, reader kind, is
Option)`, in dataclass order) with its reader: an Option field that is missing or null is
None, a missing field with a Python default takes it, any other missing or malformed field
raises `Bad` (every reader rejects the `MISSING` marker). That Bad carries no path: the
caller decodes the statement again with path tracking to report it, so only the success
path has to be fast. Each `read` is one constructor call over straight-line field reads
(source generated once per class, as dataclasses generates __init__): no per-field loop,
no keyword dict.
"""

from __future__ import annotations

from typing import Any, Callable

MISSING = object()
Spec = list[tuple[str, str, str, bool]]
Factory = Callable[[dict[str, Callable[[Any], Any]]], Callable[[dict[str, Any]], Any]]


def _field_source(index: int, key: str, kind: str, option: bool, defaulted: bool) -> str:
    read = f"R_{kind}"
    if option:
        return f"None if (v := g({key!r})) is None else {read}(v)"
    if defaulted:
        return f"D[{index}] if (v := g({key!r}, M)) is M else {read}(v)"
    return f"{read}(g({key!r}, M))"


def compile_fast_reader(cls: type, spec: Spec, defaults: dict[str, Any]) -> Factory:
    """`defaults`: attribute -> Python default of the fields that have one."""
    kinds = sorted({kind for _, _, kind, _ in spec})
    args = [_field_source(i, key, kind, option, attr in defaults)
            for i, (attr, key, kind, option) in enumerate(spec)]
    source = ("def make(R):\n"
              + "".join(f"    R_{kind} = R[{kind!r}]\n" for kind in kinds)
              + "    def read(obj):\n        g = obj.get\n        return cls(\n            "
              + ",\n            ".join(args) + ")\n    return read\n")
    scope: dict[str, Any] = {"cls": cls, "M": MISSING,
                             "D": tuple(defaults.get(attr) for attr, _, _, _ in spec)}
    exec(source, scope)  # noqa: S102 (source built from the dataclass fields)
    make: Factory = scope["make"]
    return make
