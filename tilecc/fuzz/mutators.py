"""Mutators: seeded edits of a real input file that a hostile or careless user could make.

Contract: `mutate(data, kind, rng, rounds)` returns new bytes made from `data` (the bytes of
a real fixture) by 1..rounds edits drawn with `rng` alone, so a (fixture, seed) pair names
a mutant exactly. `kind` is the input format (one of KINDS); every kind gets the byte- and
line-level edits, and its own structured edits on top: JSON trees (KLR both forms, BIR),
the .npy header, numbers and names in HLO text and Python source. The edits aim at the
places bad input gets through: huge and negative sizes, NaN / inf, deep nesting, long
names, whitespace and comment runs, truncation.
`MUTATOR_SETS` splits the structured edits in two disjoint families ("main", "held-out") so
a campaign can be repeated with edits it was never tuned on.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from typing import Any

KINDS = ("hlo", "json", "npy", "python")

# values that break size arithmetic, dtype ranges and loop bounds
INTERESTING_NUMBERS = ("0", "-1", "1", "2", "-0", "127", "128", "129", "255", "256", "65535",
                       "2147483647", "2147483648", "-2147483649", "4294967296",
                       "9223372036854775807", "9223372036854775808", "18446744073709551616",
                       "100000000000000000000", "99999999999999999999", "1e309", "-1e309",
                       "nan", "inf", "-inf", "1.5", "0.0001", "3e38", "1e-45", "0x7f")
_NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_NAME = re.compile(rb"[A-Za-z_][A-Za-z0-9_.\-]*")

Mutator = Callable[[bytes, random.Random], bytes]


def _span(data: bytes, rng: random.Random, most: int = 64) -> tuple[int, int]:
    start = rng.randrange(len(data) + 1)
    return start, min(len(data), start + rng.randint(1, most))


def flip_bit(data: bytes, rng: random.Random) -> bytes:
    if not data:
        return b"\x00"
    i = rng.randrange(len(data))
    return data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1:]


def set_byte(data: bytes, rng: random.Random) -> bytes:
    i = rng.randrange(len(data) + 1)
    byte = rng.choice(b"\x00\x0b\x0c\r\n\t \xff\x80{}[]()\"',:=%#/\\*-+.")
    return data[:i] + bytes([byte]) + data[i + 1:]


def delete_span(data: bytes, rng: random.Random) -> bytes:
    start, end = _span(data, rng)
    return data[:start] + data[end:]


def duplicate_span(data: bytes, rng: random.Random) -> bytes:
    start, end = _span(data, rng)
    return data[:end] + data[start:end] * rng.choice((1, 2, 50)) + data[end:]


def truncate(data: bytes, rng: random.Random) -> bytes:
    return data[:rng.randrange(len(data) + 1)]


def insert_junk(data: bytes, rng: random.Random) -> bytes:
    i = rng.randrange(len(data) + 1)
    junk = rng.choice((b"\n" * rng.choice((1, 40, 2000)), b" " * rng.choice((24, 5000)),
                       b"\t\r\n", b"\x00", b"\xef\xbb\xbf", b"\xff\xfe", "é∑".encode(),
                       b"(" * 500, b"[" * 500, b"{" * 500, b"x" * 100_000,
                       bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))))
    return data[:i] + junk + data[i:]


def swap_lines(data: bytes, rng: random.Random) -> bytes:
    lines = data.split(b"\n")
    if len(lines) < 2:
        return data
    a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[a], lines[b] = lines[b], lines[a]
    return b"\n".join(lines)


def repeat_line(data: bytes, rng: random.Random) -> bytes:
    lines = data.split(b"\n")
    i = rng.randrange(len(lines))
    lines[i:i + 1] = [lines[i]] * rng.choice((2, 10, 300))
    return b"\n".join(lines)


def replace_number(data: bytes, rng: random.Random) -> bytes:
    found = list(_NUMBER.finditer(data))
    if not found:
        return insert_junk(data, rng)
    m = rng.choice(found)
    return data[:m.start()] + rng.choice(INTERESTING_NUMBERS).encode() + data[m.end():]


def replace_name(data: bytes, rng: random.Random) -> bytes:
    found = list(_NAME.finditer(data))
    if not found:
        return insert_junk(data, rng)
    m = rng.choice(found)
    other = rng.choice(found).group(0)
    new = rng.choice((other, other * 2, b"n" * 100_000, b"", b"ROOT", b"ENTRY", b"None",
                      b"__import__", b"x" + m.group(0)))
    return data[:m.start()] + new + data[m.end():]


GENERIC: tuple[Mutator, ...] = (flip_bit, set_byte, delete_span, duplicate_span, truncate,
                                insert_junk, swap_lines, repeat_line, replace_number,
                                replace_name)


# --- HLO text ----------------------------------------------------------------------------

def hlo_comments(data: bytes, rng: random.Random) -> bytes:
    lines = data.split(b"\n")
    i = rng.randrange(len(lines) + 1)
    filler = rng.choice((b"", b"  // c", b"/* x */", b"   ", b"//////"))
    lines[i:i] = [filler] * rng.choice((11, 40, 500))
    return b"\n".join(lines)


def hlo_big_shape(data: bytes, rng: random.Random) -> bytes:
    m = rng.choice(list(re.finditer(rb"\[[\d,]*\]", data)) or [None])
    if m is None:
        return replace_number(data, rng)
    dims = rng.choice((b"[100000000000000000000]", b"[" + b",".join([b"2"] * 64) + b"]",
                       b"[2147483648,2147483648]", b"[0]", b"[-1]", b"[1" + b",1" * 200 + b"]"))
    return data[:m.start()] + dims + data[m.end():]


def hlo_header(data: bytes, rng: random.Random) -> bytes:
    attr = rng.choice((b"replica_count", b"num_partitions"))
    value = rng.choice(INTERESTING_NUMBERS).encode()
    line_end = data.find(b"\n")
    line_end = len(data) if line_end < 0 else line_end
    return data[:line_end] + b", " + attr + b"=" + value + data[line_end:]


def hlo_self_call(data: bytes, rng: random.Random) -> bytes:
    names = [m.group(1) for m in re.finditer(rb"(?:to_apply|body|condition|calls)=%?([\w.\-]+)",
                                             data)]
    comps = [m.group(1) for m in re.finditer(rb"(?m)^(?:ENTRY\s+)?%?([\w.\-]+)\s*(?:\(|\{)", data)]
    if not names or not comps:
        return replace_name(data, rng)
    old, new = rng.choice(names), rng.choice(comps)
    return data.replace(b"=" + old, b"=" + new, 1).replace(b"=%" + old, b"=%" + new, 1)


# --- JSON (KLR both forms, BIR) -------------------------------------------------------------

_JSON_VALUES: tuple[Any, ...] = (None, True, False, 0, -1, 2 ** 31, 2 ** 63, 10 ** 20, 1e308,
                                 -1e308, 0.5, "", "x" * 100_000, "float32", "bfloat16", "nan",
                                 [], {}, [0] * 10, [[[[[[[[[[[[[[[[0]]]]]]]]]]]]]]]])


def _json_paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _json_paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _json_paths(v, prefix + (i,))
    return out


def _json_edit(data: bytes, rng: random.Random,
               edit: Callable[[Any, Any, random.Random], str | None]) -> bytes:
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):   # not JSON, or nested by an earlier edit
        return rng.choice(GENERIC)(data, rng)
    paths = [p for p in _json_paths(doc) if p]
    if not paths:
        return rng.choice(GENERIC)(data, rng)
    path = rng.choice(paths)
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    spliced = edit(parent, path[-1], rng)
    try:
        text = json.dumps(doc, indent=rng.choice((None, 1)))
    except RecursionError:
        return rng.choice(GENERIC)(data, rng)
    if spliced is not None:   # text json.dumps could not write (it recurses per level)
        text = text.replace(json.dumps(_SPLICE), spliced, 1)
    return text.encode()


_SPLICE = "\x00tilecc-fuzz-splice\x00"


def _set_value(parent: Any, key: Any, rng: random.Random) -> None:
    parent[key] = rng.choice(_JSON_VALUES)


def _drop_key(parent: Any, key: Any, rng: random.Random) -> None:
    del parent[key]


def _duplicate_item(parent: Any, key: Any, rng: random.Random) -> None:
    if isinstance(parent, list):
        parent.insert(key, parent[key])
    else:
        parent[key] = [parent[key]] * rng.choice((2, 200))


def _nest_deep(parent: Any, key: Any, rng: random.Random) -> str:
    depth = rng.choice((50, 5000))
    inner = json.dumps(parent[key])
    parent[key] = _SPLICE
    return "[" * depth + inner + "]" * depth


def json_set(data: bytes, rng: random.Random) -> bytes:
    return _json_edit(data, rng, _set_value)


def json_drop(data: bytes, rng: random.Random) -> bytes:
    return _json_edit(data, rng, _drop_key)


def json_duplicate(data: bytes, rng: random.Random) -> bytes:
    return _json_edit(data, rng, _duplicate_item)


def json_nest(data: bytes, rng: random.Random) -> bytes:
    return _json_edit(data, rng, _nest_deep)


# --- .npy ----------------------------------------------------------------------------------

def npy_header(data: bytes, rng: random.Random) -> bytes:
    m = re.search(rb"\{.*?\}", data[:512])
    if m is None:
        return flip_bit(data, rng)
    header = rng.choice((
        b"{'descr': '<f4', 'fortran_order': False, 'shape': (100000000000, 100000000000), }",
        b"{'descr': '|O', 'fortran_order': False, 'shape': (1,), }",
        b"{'descr': '<f4', 'fortran_order': True, 'shape': (-1,), }",
        b"{'descr': 'V0', 'fortran_order': False, 'shape': (4,), }",
        b"{'descr': '<i8', 'fortran_order': False, 'shape': (" + b"1," * 70 + b"), }",
        b"{'descr': '<f8', 'fortran_order': False, 'shape': (), }",
        b"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }",
        b"{'descr': '<f2', 'fortran_order': 0, 'shape': (3,3), }", b"{", b"{}", b"{'descr': ",
    ))
    return data[:m.start()] + header + b" " * 8 + data[m.end():]


def npy_tiny(data: bytes, rng: random.Random) -> bytes:
    return rng.choice((b"\x93NUMPY\x01\x00\x01\x00{", b"\x93NUMPY", b"\x93NUMPY\x02\x00\xff\xff",
                       b"\x93NUMPY\x03\x00\x04\x00\x00\x00{}", data[:10], b"PK\x03\x04"))


# --- Python (host programs, kernels) --------------------------------------------------------

def python_deep(data: bytes, rng: random.Random) -> bytes:
    expr = rng.choice((b"+".join([b"1"] * 20_000), b"-" * 1000 + b"1", b"(" * 400 + b"1" + b")" * 400,
                       b"[" * 300 + b"]" * 300, b"not " * 3000 + b"x"))
    lines = data.split(b"\n")
    candidates = [i for i, line in enumerate(lines) if re.search(rb"=\s*\S", line)]
    if not candidates:
        return data + b"\nX = " + expr + b"\n"
    i = rng.choice(candidates)
    head, _, _ = lines[i].partition(b"=")
    lines[i] = head + b"= " + expr
    return b"\n".join(lines)


def python_docstring(data: bytes, rng: random.Random) -> bytes:
    text = rng.choice((b'"""\x0bdoc"""\n', b'"""two\n    lines\n  of doc"""\n', b"'\\\n'\n",
                       b'r"""\\"""\n', b'"""\x0c"""\n', b'"""\t\n"""\n'))
    lines = data.split(b"\n")
    i = rng.randrange(len(lines) + 1)
    indent = re.match(rb"[ \t]*", lines[i - 1] if i else b"").group(0)  # type: ignore[union-attr]
    lines[i:i] = [indent + line for line in text.rstrip(b"\n").split(b"\n")]
    return b"\n".join(lines)


def python_loop_bound(data: bytes, rng: random.Random) -> bytes:
    found = list(re.finditer(rb"range\(([^()\n]*)\)", data))
    if not found:
        return replace_number(data, rng)
    m = rng.choice(found)
    bound = rng.choice((b"2147483647", b"10**12", b"0, 10, 0", b"-5", b"1e9", b"0, 2**40, 1"))
    return data[:m.start(1)] + bound + data[m.end(1):]


# family -> kind -> structured mutators (the generic ones apply to every kind in both)
MUTATOR_SETS: dict[str, dict[str, tuple[Mutator, ...]]] = {
    "main": {
        "hlo": (hlo_comments, hlo_big_shape, hlo_header),
        "json": (json_set, json_drop),
        "npy": (npy_header,),
        "python": (python_deep, python_loop_bound),
    },
    "held-out": {
        "hlo": (hlo_self_call, replace_number),
        "json": (json_duplicate, json_nest),
        "npy": (npy_tiny, truncate),
        "python": (python_docstring, replace_number),
    },
}


def mutate(data: bytes, kind: str, rng: random.Random, rounds: int = 3,
           family: str = "main") -> bytes:
    """`data` after 1..rounds edits: half of them structured for `kind`, half generic."""
    structured = MUTATOR_SETS[family][kind]
    for _ in range(rng.randint(1, rounds)):
        mutator = rng.choice(structured) if rng.random() < 0.6 else rng.choice(GENERIC)
        data = mutator(data, rng)
    return data
