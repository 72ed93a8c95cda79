"""Lexical layer of the HLO parser: a cursor over the text and the value forms.

Contract: `Cursor` holds the whole text and a position; every helper consumes a complete
piece with one compiled regex (whitespace and comments, a verbatim attribute value with its
brackets balanced and strings respected, a shape `s32[2,<=3]{1,0:T(8,128)}` or tuple of
shapes) and raises ParseError at the exact line:col of a
problem. A bracketed value may continue over lines, as XLA's parser reads it, and is kept
verbatim (line breaks included, as XLA keeps a backend_config); strings never span lines
except in origin_recovery_table, whose strings hold whole modules. The module-level decoders
turn verbatim values into typed ones (integer lists, slice bounds, replica groups, name
lists) and raise ValueError with what was expected; the parser adds the location.
"""

from __future__ import annotations

import re

from tilecc.errors import ParseError
from tilecc.hlo.replica_groups import ReplicaGroups
from tilecc.hlo.types import TYPE_BY_NAME, UNBOUNDED, Layout, PrimitiveType, Shape

WS = r"(?>\s*(?:(?:/\*[^*]*\*+(?:[^*/][^*]*\*+)*/|//[^\n]*+)\s*)*)"
r"""Whitespace and comments (`// ...`, `/* ... */`, e.g. `/*index=5*/`), linear by construction.

Each repetition starts with '/', which `\s*` cannot match, and a block comment is unrolled
(`[^*]*\*+` steps never overlap), so there is one way to match any text; the atomic group
keeps a pattern that embeds WS from backtracking into it when what follows fails.
"""
NAME = r"[A-Za-z_][\w.\-]*"
STRING = re.compile(r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"')
_MULTILINE_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
# attributes whose strings XLA writes over several lines (the recovery table holds modules)
_MULTILINE_STRING_KEYS = frozenset({"origin_recovery_table"})
_SKIP = re.compile(WS)
_SIMPLE_VALUE = re.compile(r'[^,{}()\[\]"\s]+')
_FLAT_BRACES = re.compile(r'\{[^{}"\n]*(?:"[^"\\\n]*(?:\\.[^"\\\n]*)*"[^{}"\n]*)*\}')
_BRACKET_QUOTE_OR_NEWLINE = re.compile(r'[()\[\]{}"\n]')
# a line that cannot continue a value: it starts the next instruction, or it is the `}` of
# the computation (the end of the text or the next computation's head follows it)
_NOT_A_CONTINUATION = re.compile(
    r"\s*(?:(?:ROOT\s+)?%?" + NAME + r"\s*=\s*(?:\(|[a-z][a-z0-9\-]*[\[(])"
    r"|\}\s*(?:$|ENTRY\s|%?" + NAME + r"\s*[({]))")
_BRACKET_OR_QUOTE = re.compile(r'[()\[\]{}"]')
_DEPTH0_STOP = re.compile(r'[,\n(){}\[\]"]')
_INT_LIST = re.compile(r"\{\s*(-?\d+(?:\s*,\s*-?\d+)*)?\s*\}")
_SLICE_DIM = re.compile(r"\[\s*(-?\d+)\s*:\s*(-?\d+)\s*(?::\s*(-?\d+)\s*)?\]")
_IOTA_GROUPS = re.compile(
    r"\[\s*(\d+)\s*,\s*(\d+)\s*\]\s*<=\s*\[\s*(\d+(?:\s*,\s*\d+)*)\s*\]"
    r"(?:\s*T\(\s*(\d+(?:\s*,\s*\d+)*)\s*\))?")
_MESH_GROUPS = re.compile(
    r"mesh\[\s*((?:'[^']*'\s*=\s*\d+\s*,?\s*)*)\]"
    r"(?:\s*,\s*device_ids=\(\s*([^()]*(?:\([^()]*\))?)\s*\))?"
    r"\s*\{\s*((?:'[^']*'\s*,?\s*)*)\}")
# `mesh[...]` followed by its device order, which XLA prints after a comma
_MESH_DEVICE_IDS = re.compile(r",\s*device_ids=(?=\()")
_MESH_AXIS = re.compile(r"'([^']*)'\s*=\s*(\d+)")
_MESH_NAME = re.compile(r"'([^']*)'")
_GROUP = re.compile(r"\{\s*(\d+(?:\s*,\s*\d+)*)?\s*\}")
NAME_IN_LIST = re.compile(r"%?(" + NAME + r")")
_ONE_NAME = re.compile(r"\s*%?(" + NAME + r")\s*")
_MAX_DIM = (1 << 63) - 1
_DIM_LEVELS = re.compile(r"D\(([^()]*)\)")
_DIM_LEVEL = re.compile(r"[DCS][+~]*")  # dense / compressed / singleton, (non-)unique, unordered
ARRAY_SHAPE = re.compile(r"([a-z][a-z0-9]*)\[([^\]\[]*)\](\{[^{}\n]*\})?")


class Cursor:
    """The text being parsed, the path for messages and the current position."""

    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.path = path
        self.pos = 0
        self.shape_cache: dict[str, Shape] = {}
        """Array shapes by their exact text: a module spells few distinct shapes."""

    def error(self, message: str, pos: int | None = None) -> ParseError:
        pos = self.pos if pos is None else pos
        pos = max(0, min(pos, len(self.text)))
        line = self.text.count("\n", 0, pos) + 1
        start = self.text.rfind("\n", 0, pos) + 1
        end = self.text.find("\n", pos)
        source = self.text[start:end if end >= 0 else len(self.text)]
        return ParseError(self.path, line, pos - start + 1, message, source_line=source)

    def skip(self) -> None:
        self.pos = _SKIP.match(self.text, self.pos).end()  # type: ignore[union-attr]

    def peek(self) -> str:
        self.skip()
        return self.text[self.pos:self.pos + 1]

    def expect(self, char: str, what: str) -> None:
        self.skip()
        if not self.text.startswith(char, self.pos):
            raise self.error(f"expected '{char}' {what}, found {self.describe_here()}")
        self.pos += len(char)

    def describe_here(self) -> str:
        m = _SIMPLE_VALUE.match(self.text, self.pos)
        if m is not None:
            return f"'{m.group(0)[:40]}'"
        return f"'{self.text[self.pos]}'" if self.pos < len(self.text) else "end of input"

    # --- shapes ----------------------------------------------------------------------------

    def parse_shape(self) -> Shape:
        text = self.text
        if text.startswith("(", self.pos):
            self.pos += 1
            parts: list[Shape] = []
            while True:
                self.skip()
                if text.startswith(")", self.pos):
                    self.pos += 1
                    return Shape.tuple(parts)
                if parts:
                    self.expect(",", "between tuple element shapes")
                    self.skip()
                if self.pos >= len(text):
                    raise self.error("unbalanced '(' in a tuple shape")
                parts.append(self.parse_shape())
        m = ARRAY_SHAPE.match(text, self.pos)
        if m is None:
            raise self.error(f"expected a shape such as s32[2,3], found {self.describe_here()}")
        key = m.group(0)
        shape = self.shape_cache.get(key)
        if shape is None:
            shape = self.shape_cache[key] = self.build_shape(m)
        self.pos = m.end()
        return shape

    def build_shape(self, m: re.Match[str]) -> Shape:
        type_name, dims_text, layout_text = m.group(1), m.group(2), m.group(3)
        et = TYPE_BY_NAME.get(type_name)
        if et is None:
            raise self.error(f"unknown element type '{type_name}'", m.start(1))
        dims: list[int] = []
        dynamic: list[bool] = []
        if dims_text.strip():
            for part in dims_text.split(","):
                p = part.strip()
                dyn = p.startswith("<=")
                if dyn:
                    p = p[2:].strip()
                elif p == "?":  # unbounded dynamic size
                    dims.append(UNBOUNDED)
                    dynamic.append(True)
                    continue
                if not p.isdigit():
                    # the shape's text may span lines: the message stays one line
                    shown = m.group(0).replace("\n", "\\n")
                    bad = part.strip().replace("\n", "\\n")
                    raise self.error(f"bad dimension '{bad}' in shape {shown}",
                                     m.start(2))
                if len(p) > 18 and int(p) > _MAX_DIM:
                    raise self.error(f"dimension {p[:40]} of shape {type_name}[...] is beyond "
                                     f"{_MAX_DIM} (XLA's int64 sizes)", m.start(2))
                dims.append(int(p))
                dynamic.append(dyn)
        if et in (PrimitiveType.TOKEN, PrimitiveType.OPAQUE_TYPE):
            if dims:
                raise self.error(f"{type_name} takes no dimensions", m.start(2))
            return Shape(et)
        layout = None
        if layout_text is not None:
            layout = self.build_layout(layout_text, len(dims), m.start(3))
        return Shape.array(et, tuple(dims), layout, tuple(dynamic))

    def build_layout(self, text: str, rank: int, pos: int) -> Layout:
        body = text[1:-1]
        m2m_text, _, tail = body.partition(":")
        m2m: tuple[int, ...] = ()
        if m2m_text.strip():
            try:
                m2m = tuple(int(x) for x in m2m_text.split(","))
            except ValueError:
                raise self.error(f"bad layout {text}: expected minor-to-major dims", pos) from None
        if sorted(m2m) != list(range(rank)):
            raise self.error(f"layout {text} is not a permutation of the {rank} dimensions", pos)
        if "D(" in tail or "P(" in tail:
            levels = _DIM_LEVELS.search(tail)
            if levels is not None and not all(_DIM_LEVEL.fullmatch(x.strip())
                                              for x in levels.group(1).split(",")):
                raise self.error(f"bad layout {text}: expected a DimLevelType abbreviation "
                                 "(D, C, or S) in D(...)", pos)
            sparse = levels is not None and any(c in levels.group(1) for c in "CS")
            if "P(" in tail and not sparse:
                raise self.error(f"layout {text} has a physical shape, but is not for a "
                                 "sparse array", pos)
        return Layout(m2m, tail.strip())

    def raw_value(self, key: str) -> str:
        """The verbatim text of an attribute value, brackets balanced, strings respected."""
        text = self.text
        start = self.pos
        c = text[start:start + 1]
        if c == "{":
            m = _FLAT_BRACES.match(text, start)
            if m is not None:
                self.pos = m.end()
                return m.group(0)
        elif c == '"':
            m = STRING.match(text, start)
            if m is None:
                raise self.error(f"unterminated string in attribute '{key}'")
            self.pos = m.end()
            return m.group(0)
        m = _SIMPLE_VALUE.match(text, start)
        if m is not None and text[m.end():m.end() + 1] not in "{[(\"":
            self.pos = m.end()
            return m.group(0)
        value = self.scan_balanced_value(key)
        if key == "replica_groups" and value.startswith("mesh[") and \
                (ids := _MESH_DEVICE_IDS.match(text, self.pos)) is not None:
            # `mesh['a'=2,'b'=4], device_ids=([4,2]T(1,0)) {'a'}`: the comma belongs to the value
            self.pos = ids.end()
            value += ids.group(0) + self.scan_balanced_value(key)
        return value

    def scan_balanced_value(self, key: str) -> str:
        """A value with nested brackets: scan bracket by bracket until a ',' or line end at depth 0."""
        text = self.text
        start = self.pos
        stack: list[tuple[str, int]] = []
        pos = start
        closers = {"(": ")", "[": "]", "{": "}"}
        while True:
            if not stack:
                m = _DEPTH0_STOP.search(text, pos)
                if m is None:
                    pos = len(text)
                    break
                ch = m.group(0)
                if ch in ",\n)]}":
                    pos = m.start()
                    break
            else:
                # inside brackets a value may go on over lines, as XLA's parser reads it,
                # but not into the computation's `}` or the next instruction
                m = _BRACKET_QUOTE_OR_NEWLINE.search(text, pos)
                if m is not None and m.group(0) == "\n":
                    nxt = _NOT_A_CONTINUATION.match(text, m.end())
                    if nxt is None or (len(stack) > 1 and "=" not in nxt.group(0)) \
                            or key in _MULTILINE_STRING_KEYS:
                        pos = m.end()
                        continue
                    m = None
                if m is None:
                    o, opos = stack[-1]
                    raise self.error(f"unbalanced '{o}' in attribute '{key}'", opos)
                ch = m.group(0)
            if ch == '"':
                s = STRING.match(text, m.start())
                if s is None and key in _MULTILINE_STRING_KEYS:
                    s = _MULTILINE_STRING.match(text, m.start())
                if s is None:
                    raise self.error(f"unterminated string in attribute '{key}'", m.start())
                pos = s.end()
            elif ch in closers:
                stack.append((ch, m.start()))
                pos = m.end()
            else:
                if not stack or closers[stack[-1][0]] != ch:
                    raise self.error(f"unbalanced '{ch}' in attribute '{key}'", m.start())
                stack.pop()
                pos = m.end()
        value = text[start:pos].rstrip()
        if not value:
            raise self.error(f"attribute '{key}' has no value", start)
        self.pos = start + len(value)
        return value

    def skip_balanced(self) -> None:
        """Skip from '(' at self.pos to just after its matching ')', strings respected."""
        text = self.text
        start = self.pos
        depth = 0
        pos = start
        while True:
            m = _BRACKET_OR_QUOTE.search(text, pos)
            if m is None:
                raise self.error("unbalanced '(': no matching ')'", start)
            ch = m.group(0)
            if ch == '"':
                s = STRING.match(text, m.start())
                if s is None:
                    raise self.error("unterminated string", m.start())
                pos = s.end()
                continue
            pos = m.end()
            if ch in "([{":
                depth += 1
            else:
                depth -= 1
                if depth == 0:
                    if ch != ")":
                        raise self.error(f"unbalanced '{ch}' inside parentheses", m.start())
                    self.pos = pos
                    return
                if depth < 0:
                    raise self.error(f"unbalanced '{ch}'", m.start())


def int_list(value: str, key: str) -> tuple[int, ...]:
    """`{0,1}` -> (0, 1); ValueError naming `key` otherwise."""
    m = _INT_LIST.fullmatch(value)
    if m is None:
        raise ValueError(f"{key} must be a list of integers like {{0,1}}, got '{value}'")
    return tuple(int(x) for x in m.group(1).split(",")) if m.group(1) else ()

def name_list(value: str, value_pos: int) -> list[tuple[str, int]]:
    """`%a` or `{%a, %b}` -> [(name, text position)], positions offset by value_pos."""
    inner, offset = (value[1:-1], 1) if value.startswith("{") and value.endswith("}") \
        else (value, 0)
    one = _ONE_NAME.fullmatch(inner)  # the usual `to_apply=%add`: what the loop below finds
    if one is not None:
        return [(one.group(1), value_pos + offset + one.start(1))]
    out = []
    for part in NAME_IN_LIST.finditer(inner):
        out.append((part.group(1), value_pos + offset + part.start(1)))
    rest = NAME_IN_LIST.sub("", inner).replace(",", "").strip()
    if rest:
        raise ValueError(f"expected computation or instruction names, got '{value}'")
    return out

def slice_bounds(value: str) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """`{[0:4], [1:8:2]}` -> (starts, limits, strides), stride 1 when omitted."""
    if not (value.startswith("{") and value.endswith("}")):
        raise ValueError(f"slice must look like {{[0:4], [0:8:2]}}, got '{value}'")
    starts, limits, strides = [], [], []
    body = value[1:-1]
    pos = 0
    for m in _SLICE_DIM.finditer(body):
        if body[pos:m.start()].strip(" ,"):
            raise ValueError(f"slice must look like {{[0:4], [0:8:2]}}, got '{value}'")
        starts.append(int(m.group(1)))
        limits.append(int(m.group(2)))
        strides.append(int(m.group(3)) if m.group(3) is not None else 1)
        pos = m.end()
    if body[pos:].strip(" ,"):
        raise ValueError(f"slice must look like {{[0:4], [0:8:2]}}, got '{value}'")
    return tuple(starts), tuple(limits), tuple(strides)

def replica_groups_from_text(value: str) -> ReplicaGroups:
    """Any of the explicit, empty, iota and mesh forms; ValueError otherwise."""
    v = value.strip()
    if v.startswith("{"):
        inner = v[1:-1].strip()
        if not inner:
            return ReplicaGroups.empty()
        groups = []
        for g in _GROUP.finditer(inner):
            groups.append([int(x) for x in g.group(1).split(",")] if g.group(1) else [])
        if _GROUP.sub("", inner).replace(",", "").strip() or not groups:
            raise ValueError(f"replica_groups must look like {{{{0,1}},{{2,3}}}}, got '{value}'")
        return ReplicaGroups.from_groups(groups)
    if (m := _IOTA_GROUPS.fullmatch(v)) is not None:
        dims = [int(x) for x in m.group(3).split(",")]
        perm = [int(x) for x in m.group(4).split(",")] if m.group(4) else None
        return ReplicaGroups.iota(int(m.group(1)), int(m.group(2)), dims, perm, sized=False)
    if (m := _MESH_GROUPS.fullmatch(v)) is not None:
        axes = [(a.group(1), int(a.group(2))) for a in _MESH_AXIS.finditer(m.group(1))]
        selected = [a.group(1) for a in _MESH_NAME.finditer(m.group(3))]
        return ReplicaGroups.mesh(axes, selected, m.group(2))
    raise ValueError(f"unrecognised replica_groups '{value}' (expected {{{{0,1}},{{2,3}}}}, "
                     "[G,S]<=[dims]T(perm) or mesh[...][, device_ids=(...)] {...})")
