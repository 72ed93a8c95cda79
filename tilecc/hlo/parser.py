"""Parser for XLA's HLO text format, short form and long form.

Contract: `parse_module(text, path)` returns an HloModule or raises ParseError(path, line,
col, message, source_line=...) -- never another exception -- for any input. Accepted:
- header `HloModule name, attr=value, ...` (replica_count / num_partitions typed, the rest
  verbatim), then an optional stack-frame block (FileNames / FunctionNames /
  FileLocations / StackFrames) kept verbatim;
- computations `[ENTRY] [%]name [(params) -> shape] { ... } [, execution_thread="t"]`;
  without ENTRY the last computation is the entry; a computation attribute may hold a body
  in place (`to_apply={ ... }`), a computation named `_` as XLA names it;
- instructions `[ROOT] [%]name = shape opcode(operands), attr=value, ...`; operands may be
  preceded by their shape; `//` and `/* */` comments are skipped anywhere between tokens.
  A left-out result shape is inferred where XLA's parser infers it
  (tilecc.hlo.shape_inference); an attribute value stays on its line outside strings
  (tilecc.hlo.lexer).
A computation without ROOT returns its last instruction (XLA's rule); an operand may be an
instruction written in place (`add(f32[] parameter(0), ...)`), named `<opcode>.anon` as XLA
names it; a broadcast of a scalar may leave out `dimensions={}`.
What XLA's parser refuses beyond the grammar (element counts, async chains, ...) is
tilecc.hlo.parse_rules'.
Rejected with a located message: unknown opcode / type, bad shape, undefined or duplicate
names, repeated ROOT, unbalanced brackets, wrong operand count for fixed-arity
opcodes, missing required attributes, unknown computations, malformed literals.
Instruction names must be unique within a computation; a name repeated in another
computation is renamed `name.N` as XLA's parser does.

Speed: the parser is a cursor (tilecc.hlo.lexer) over the whole text driven by compiled
regexes that each consume a whole piece (instruction head, shape, operand list, attribute)
at once. A line as XLA or jax prints it takes one fast path (`parse_instruction`): cut with
str.partition, shapes from a cache by their text, one regex per attribute (metadata's
end by str.find); any other line is handed to the general path before anything is
recorded, and the general path gives every error (tests/hlo/test_parser_fast_path.py holds
the two equal). Shapes, dimension lists, replica groups and computation name lists are
shared between instructions that spell them alike. There is no per-character Python loop
except inside nested brackets.
"""

from __future__ import annotations

import re
from typing import cast

from tilecc.errors import ParseError
from tilecc.hlo.collector import collector_paused
from tilecc.hlo.ir import HloComputation, HloInstruction, HloModule, add_control_dependency
from tilecc.hlo.lexer import (ARRAY_SHAPE, NAME, NAME_IN_LIST, WS, Cursor, int_list,
                              name_list, replica_groups_from_text, slice_bounds)
from tilecc.hlo.literal import LiteralError, parse_literal, parse_tuple_literal
from tilecc.hlo.opcodes import ASYNC, HloOpcode, lookup_opcode
from tilecc.hlo.parse_rules import (RULE_OPCODES, check_async, check_header, check_read,
                                    sugar_is_allowed)
from tilecc.hlo.parse_rules_attrs import check_sharding
from tilecc.hlo.replica_groups import ReplicaGroups
from tilecc.hlo.shape_inference import BUILT_BY_XLA, infer_shape, xla_built_shape
from tilecc.hlo.types import TYPE_BY_NAME, PrimitiveType, Shape, compatible

# Whitespace and comments read as one atomic piece: a match never backtracks into a
# comment, so a `// ..., key=value` comment cannot end early and turn into an attribute
# (and consecutive comment lines cost linear time).
_WS = "(?>" + WS + ")"
_HEADER = re.compile(_WS + r"HloModule\s+(" + NAME + r"):?")  # XLA reads `name:` too
_INST_HEAD = re.compile(_WS + r"(ROOT\s+)?%?(" + NAME + r")" + _WS + "=" + _WS)
_OPCODE = re.compile(_WS + r"([a-z][a-z0-9\-]*)" + _WS + r"\(")
_SIMPLE_OPERANDS = re.compile(r"\s*((?:%?" + NAME + r"\s*,\s*)*%?" + NAME + r")?\s*\)")
_ATTR_KEY = re.compile(_WS + r"," + _WS + r"([A-Za-z_][\w\-]*)" + _WS + "=" + _WS)
_COMP_HEAD = re.compile(_WS + r"(ENTRY\s+)?%?(" + NAME + r")" + _WS)
_EXECUTION_THREAD = re.compile(_WS + r',\s*execution_thread\s*=\s*"([^"\n]*)"')
_INT = re.compile(r"\s*(-?\d+)\s*")
_STACK_SECTIONS = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")
_STACK_LINE = re.compile(r"[ \t]*(?:\d[^\n]*|FileNames|FunctionNames|FileLocations|StackFrames)?[ \t]*(?:\n|$)")

_COMPUTATION_ATTRS = {"to_apply", "condition", "body", "calls", "branch_computations",
                      "true_computation", "false_computation", "select", "scatter",
                      "called_computations"}
# Attributes that name exactly one computation.
_SINGLE_COMPUTATION_ATTRS = {"to_apply", "condition", "body", "true_computation",
                             "false_computation", "select", "scatter"}
# The two halves of a two-element computation list: each names one element, and an
# instruction naming one half must name the other (XLA's parser requires both).
_HALF_PAIRS = {"branch_computations": ("true_computation", "false_computation"),
               "calls": ("select", "scatter")}
_HALF_ATTRS = {half: attr for attr, pair in _HALF_PAIRS.items() for half in pair}
_BOOL_ATTRS = {"use_global_device_ids", "constrain_layout"}
# Attributes without which an opcode is meaningless (XLA's parser requires them too).
_REQUIRED: dict[HloOpcode, tuple[str, ...]] = {
    HloOpcode.REDUCE: ("dimensions", "to_apply"),
    HloOpcode.ALL_REDUCE: ("to_apply",),
    HloOpcode.REDUCE_SCATTER: ("dimensions", "to_apply"),
    HloOpcode.ALL_GATHER: ("dimensions",),
    HloOpcode.TRANSPOSE: ("dimensions",),
    HloOpcode.CONCATENATE: ("dimensions",),
    HloOpcode.SLICE: ("slice",),
    HloOpcode.GET_TUPLE_ELEMENT: ("index",),
    HloOpcode.COMPARE: ("direction",),
    HloOpcode.IOTA: ("iota_dimension",),
    HloOpcode.WHILE: ("condition", "body"),
    HloOpcode.CALL: ("to_apply",),
    HloOpcode.MAP: ("to_apply",),
    HloOpcode.FUSION: ("calls",),
}
# module-level aliases: HloOpcode.X is a slow attribute lookup on the enum class
_PARAMETER, _CONSTANT, _BROADCAST = HloOpcode.PARAMETER, HloOpcode.CONSTANT, HloOpcode.BROADCAST
_NO_SHAPE = Shape.token()  # until the left-out result shape is inferred
# opcodes the fast path hands to check_rules (the others have no rule of parse_rules)
_CHECKED = RULE_OPCODES | ASYNC | BUILT_BY_XLA | {HloOpcode.BROADCAST}
# Opcodes whose parentheses hold a value, not operands.
_PAYLOAD_OPCODES = frozenset({HloOpcode.CONSTANT, HloOpcode.PARAMETER})
_COMPARISON_DIRECTIONS = {"EQ", "NE", "GE", "GT", "LE", "LT"}
_COMPARISON_TYPES = {"FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"}


def parse_module(text: str, path: str = "<string>") -> HloModule:
    """Parse XLA HLO text (see the module docstring); ParseError on any malformed input."""
    # Everything the parser allocates lives as long as the module, so the cyclic garbage
    # collector would only re-scan it again and again (superlinear on big modules).
    with collector_paused():
        try:
            return _Parser(text, path).parse()
        except RecursionError:
            raise ParseError(path, 1, 1, "input nests too deeply") from None


class _Parser(Cursor):
    def __init__(self, text: str, path: str) -> None:
        super().__init__(text, path)
        self.module: HloModule | None = None
        # (instruction, attribute, value's text position, [(computation name, offset in the
        # value)]) resolved at the end
        self.comp_refs: list[tuple[HloInstruction, str, int, list[tuple[str, int]]]] = []
        self.name_lists: dict[str, list[tuple[str, int]]] = {}
        """Computation name lists by their text (`%add_f32`): read once, shared, never changed."""
        self.async_checks: list[tuple[HloInstruction, int]] = []
        self.dimension_lists: dict[str, tuple[int, ...]] = {}
        self.replica_groups: dict[str, ReplicaGroups] = {}
        self.nested: list[HloInstruction] = []
        """Instructions read as operands of the one being read, innermost first; they join
        the computation before it."""
        self.open_computations: list[HloComputation] = []
        """The computations being read, innermost (an inline `to_apply={...}`) last."""

    # --- module ----------------------------------------------------------------------------

    def parse(self) -> HloModule:
        m = _HEADER.match(self.text, 0)
        if m is None:
            self.skip()
            raise self.error(f"expected 'HloModule name' at the start, found {self.describe_here()}")
        module = self.module = HloModule(m.group(1))
        self.pos = m.end()
        self.parse_header_attributes(module)
        self.parse_stack_frames(module)
        entry: HloComputation | None = None
        while self.peek():
            comp, is_entry, pos = self.parse_computation()
            if is_entry:
                if entry is not None:
                    raise self.error("a second ENTRY computation", pos)
                entry = comp
        if not module.computations:
            raise self.error("the module has no computations")
        module.entry = entry if entry is not None else module.computations[-1]
        self.resolve_computation_refs(module)
        wrapped: set[int] = set()
        for inst, pos in self.async_checks:
            message = check_async(inst, wrapped)
            if message is not None:
                raise self.error(message, pos)
        return module

    def parse_header_attributes(self, module: HloModule) -> None:
        while True:
            m = _ATTR_KEY.match(self.text, self.pos)
            if m is None:
                return
            key, key_pos = m.group(1), m.start(1)
            self.pos = m.end()
            value = self.raw_value(key)
            if key in module.header_order:
                raise self.error(f"header attribute '{key}' given twice", key_pos)
            module.header_order.append(key)
            message = check_header(key, value)
            if message is not None:
                raise self.error(message, key_pos)
            if key in ("replica_count", "num_partitions"):
                if not value.isdigit() or int(value) < 1:
                    raise self.error(f"{key} must be a positive integer, got '{value}'", key_pos)
                setattr(module, key, int(value))
            elif key in ("entry_computation_layout", "input_output_alias", "frontend_attributes"):
                setattr(module, key, value)
            else:
                module.header_attributes[key] = value

    def parse_stack_frames(self, module: HloModule) -> None:
        self.skip()
        if not self.text.startswith(_STACK_SECTIONS, self.pos):
            return
        start = self.pos
        while self.pos < len(self.text):
            m = _STACK_LINE.match(self.text, self.pos)
            if m is None or m.end() == m.start():
                break
            self.pos = m.end()
        module.stack_frames = self.text[start:self.pos].rstrip()

    # --- computations ----------------------------------------------------------------------

    def parse_computation(self) -> tuple[HloComputation, bool, int]:
        module = self.module
        assert module is not None
        m = _COMP_HEAD.match(self.text, self.pos)
        if m is None:
            raise self.error(f"expected a computation, found {self.describe_here()}")
        name, name_pos, is_entry = m.group(2), m.start(2), m.group(1) is not None
        if name in ("ROOT", "ENTRY") or name in TYPE_BY_NAME:
            raise self.error(f"'{name}' cannot name a computation", name_pos)
        if module.computation_name_is_used(name):
            raise self.error(f"computation '{name}' is defined twice", name_pos)
        self.pos = m.end()
        declared: Shape | None = None
        if self.text.startswith("(", self.pos):
            self.skip_balanced()
            self.expect("->", "between the parameters and the result shape")
            self.skip()
            declared_pos = self.pos
            declared = self.parse_shape()
        comp = HloComputation(name)
        self.expect("{", f"to open computation '{name}'")
        open_pos = self.pos - 1
        module.computations.append(comp)
        comp.parent = module
        module.register_computation_name(name)
        self.parse_instructions(comp, open_pos)
        if declared is not None and comp.root is not None and \
                not compatible(declared, comp.root.shape):
            raise self.error(f"shape of computation '{name}', {declared.to_text()}, is not "
                             f"compatible with that of its root '{comp.root.name}', "
                             f"{comp.root.shape.to_text()}", declared_pos)
        m2 = _EXECUTION_THREAD.match(self.text, self.pos)
        if m2 is not None:
            comp.execution_thread = m2.group(1)
            self.pos = m2.end()
        return comp, is_entry, name_pos

    def parse_instructions(self, comp: HloComputation, open_pos: int) -> None:
        module = self.module
        assert module is not None
        scope: dict[str, HloInstruction] = {}
        control_refs: list[tuple[HloInstruction, list[tuple[str, int]]]] = []
        root: HloInstruction | None = None
        params: dict[int, HloInstruction] = {}
        named: list[HloInstruction] = []
        text = self.text
        members = comp._instructions
        self.open_computations.append(comp)
        while True:
            parsed = self.parse_instruction(scope, control_refs)
            if parsed is None:
                self.skip()
                if text.startswith("}", self.pos):
                    self.pos += 1
                    break
                if self.pos >= len(text):
                    raise self.error(f"unbalanced '{{': computation '{comp.name}' is not closed",
                                     open_pos)
                parsed = self.parse_instruction(scope, control_refs) or \
                    self.parse_instruction_general(scope, control_refs)
            inst, is_root, name_pos = parsed
            name = inst.name
            if name in scope:
                raise self.error(f"instruction '{name}' is defined twice in "
                                 f"computation '{comp.name}'", name_pos)
            scope[name] = inst
            if is_root:
                if root is not None:
                    raise self.error(f"a second ROOT in computation '{comp.name}' (first: "
                                     f"'{root.name}')", name_pos)
                root = inst
            named.append(inst)
            nested = self.nested
            if nested:  # instructions written as operands (named when read) join first
                for part in nested:
                    self.join(comp, part, params, name_pos)
                nested.clear()
            if inst.opcode is _PARAMETER:
                self.join(comp, inst, params, name_pos)
            else:
                inst.parent = comp
                members[inst] = None
        self.open_computations.pop()
        if not scope:
            raise self.error(f"computation '{comp.name}' has no instructions", open_pos)
        # XLA names a computation's instructions when the computation is complete, so an
        # inline computation (`to_apply={...}`) keeps its names and its caller's yield
        take_name = module._names.take  # verbatim when free, else renamed (another
        for inst in named:                # computation has it)
            inst.name = take_name(inst.name)
        if root is None:  # XLA's parser takes the last instruction
            root = named[-1]
        if sorted(params) != list(range(len(params))):
            missing = min(set(range(len(params))) - set(params))
            raise self.error(f"computation '{comp.name}' lacks parameter({missing})", open_pos)
        comp.root = root
        comp.parameters = [params[i] for i in range(len(params))]
        for inst, names in control_refs:
            for pred_name, pos in names:
                pred = scope.get(pred_name)
                if pred is None:
                    raise self.error(f"control predecessor '{pred_name}' is not an instruction "
                                     f"of computation '{comp.name}'", pos)
                add_control_dependency(pred, inst)

    def join(self, comp: HloComputation, inst: HloInstruction, params: dict[int, HloInstruction],
             name_pos: int) -> None:
        """`inst` becomes a member of `comp`; a parameter takes its number's place."""
        if inst.opcode is _PARAMETER:
            n = inst.parameter_number
            assert n is not None
            if n in params:
                raise self.error(f"parameter number {n} is used twice in computation "
                                 f"'{comp.name}'", name_pos)
            params[n] = inst
        inst.parent = comp
        comp._instructions[inst] = None

    # --- instructions ----------------------------------------------------------------------

    def parse_instruction(self, scope: dict[str, HloInstruction],
                          control_refs: list) -> tuple[HloInstruction, bool, int] | None:
        """The instruction on the line at self.pos as XLA and jax print it, or None (nothing
        consumed, nothing recorded) when the line is anything else: the general path then
        reads it and gives any error. One fast path: the line is cut with str.partition at
        ' = ', ' ', '(' and ')', shapes come from the cache by their text, operand names are
        looked up as written; the attributes are one regex match each and must fill the
        rest of the line. It raises only errors the general path raises at the same place
        (a bad new shape, a bad attribute value, a parse rule)."""
        text = self.text
        start = self.pos
        end = text.find("\n", start)
        if end < 0:
            end = len(text)
        line = text[start:end]
        head, eq, rhs = line.partition(" = ")
        name = head.lstrip()
        is_root = name.startswith("ROOT ")
        if is_root:
            name = name[5:]
        if name.startswith("%"):
            name = name[1:]
        if not eq or _NAME.fullmatch(name) is None or name in TYPE_BY_NAME or name == "ROOT":
            return None
        shape_text, _, rest = rhs.partition(" ")
        shape = self.shape_cache.get(shape_text)
        if shape is None:  # first use of this shape text: read and cache it (tuples: general)
            shape_pos = start + len(head) + 3
            m = ARRAY_SHAPE.match(text, shape_pos)
            if m is None or m.end() != shape_pos + len(shape_text):
                return None
            shape = self.shape_cache[shape_text] = self.build_shape(m)
        mnemonic, _, rest = rest.partition("(")
        opcode = lookup_opcode(mnemonic)
        args, close, attrs_text = rest.partition(")")
        if opcode is None or not close:
            return None
        operands: list[HloInstruction] = []
        number = None
        literal = None
        if opcode is _PARAMETER:
            if not (args.isdigit() and args.isascii()):
                return None
            number = int(args)
        elif opcode is _CONSTANT:
            args = args.strip()
            if not args or "(" in args or '"' in args:
                return None
            if args != "{...}":  # XLA's elided big constant: printable, value unknown
                try:
                    literal = parse_literal(args, shape)
                except LiteralError:
                    return None
        elif args:  # `%a, %b` (XLA) or `a, b` (jax); anything else misses the scope
            found = list(map(scope.get, args[1:].split(", %") if args.startswith("%")
                             else args.split(", ")))
            if None in found:
                return None
            operands = cast("list[HloInstruction]", found)
        if opcode.arity is not None and len(operands) != opcode.arity:
            return None
        attrs: list[tuple[str, str, int]] = []  # (key, value, value's offset in attrs_text)
        if attrs_text:
            at, stop = 0, len(attrs_text)
            while at < stop:
                if attrs_text.startswith(", metadata={", at):
                    # the longest value of a jax dump, on every line: its end found with
                    # str.find, not by the regex's per-character steps; what _FAST_ATTR takes
                    # when no string in it holds a brace or an escape (else the regex reads it)
                    value_end = attrs_text.find("}", at + 12) + 1
                    value = attrs_text[at + 11:value_end]
                    if value_end and "{" not in value[1:] and "\\" not in value \
                            and not value.count('"') % 2 \
                            and (value_end == stop or attrs_text[value_end] == ","
                                 or attrs_text[value_end].isspace()):
                        attrs.append(("metadata", value, at + 11))
                        at = value_end
                        continue
                a = _FAST_ATTR.match(attrs_text, at)
                if a is None:
                    return None
                attrs.append((a.group(1), a.group(2), a.start(2)))
                at = a.end()
            keys: frozenset[str] = frozenset([a[0] for a in attrs])
            if len(keys) != len(attrs):
                return None
        else:
            keys = _NO_KEYS
        required = _REQUIRED.get(opcode)
        if required is not None and not keys.issuperset(required):
            return None
        inst = HloInstruction(name, opcode, shape, operands)
        if number is not None:
            inst.parameter_number = number
        elif opcode is _CONSTANT:
            inst.literal_text = args
            inst._literal = literal
        if attrs:
            base = end - len(attrs_text)
            for key, value, offset in attrs:
                self.set_attribute(inst, key, value, base + offset, control_refs)
        if opcode in _CHECKED or "result_accuracy" in keys:  # one set lookup on the fast path
            op_pos = start + len(head) + 3 + len(shape_text) + 1
            if opcode is _BROADCAST and inst.dimensions is None:
                self.default_broadcast_dimensions(inst, op_pos)
            self.check_rules(inst, op_pos)
        count = len(operands)
        if count == 1:
            operands[0].users.append(inst)
        elif count == 2:
            first, second = operands
            first.users.append(inst)
            if second is not first:
                second.users.append(inst)
        elif count:
            inst.register_as_user()
        self.pos = end + 1 if end < len(text) else end
        return inst, is_root, start + len(head) - len(name)

    def default_broadcast_dimensions(self, inst: HloInstruction, op_pos: int) -> None:
        """XLA's parser lets a broadcast of a scalar leave out `dimensions={}`."""
        if inst.operands and inst.operands[0].shape.rank:
            raise self.error(f"broadcast '{inst.name}' of a non-scalar lacks the required "
                             "attribute 'dimensions'", op_pos)
        inst.dimensions = ()

    def check_rules(self, inst: HloInstruction, op_pos: int) -> None:
        """tilecc.hlo.parse_rules on `inst` now; its async rules once computations are known.
        An instruction whose shape XLA builds itself gets that shape."""
        if inst.opcode in BUILT_BY_XLA:
            inst.shape = xla_built_shape(inst)
        message = check_read(inst)
        if message is not None:
            raise self.error(message, op_pos)
        if inst.opcode in ASYNC:
            self.async_checks.append((inst, op_pos))

    def parse_instruction_general(self, scope: dict[str, HloInstruction],
                                  control_refs: list) -> tuple[HloInstruction, bool, int]:
        text = self.text
        m = _INST_HEAD.match(text, self.pos)
        if m is None:
            self.skip()
            raise self.error(f"expected an instruction 'name = shape opcode(...)', found "
                             f"{self.describe_here()}")
        name, name_pos, is_root = m.group(2), m.start(2), m.group(1) is not None
        if name in TYPE_BY_NAME or name == "ROOT":
            raise self.error(f"'{name}' is a reserved word and cannot name an instruction",
                             name_pos)
        self.pos = m.end()
        inst = self.parse_rhs(name, scope, control_refs, attributes=True)
        return inst, is_root, name_pos

    def parse_rhs(self, name: str, scope: dict[str, HloInstruction], control_refs: list,
                  attributes: bool) -> HloInstruction:
        """`[shape] opcode(operands)[, attributes]` of instruction `name`; an instruction
        nested as an operand (XLA's anonymous form) has no attributes of its own."""
        text = self.text
        # XLA's parser infers a left-out result shape (tilecc.hlo.shape_inference)
        shape = self.parse_shape() if text.startswith("(", self.pos) or \
            ARRAY_SHAPE.match(text, self.pos) else None
        if shape is not None and text[self.pos - 1] == "]" and \
                (spaced := _SPACED_LAYOUT.match(text, self.pos)):
            # XLA's lexer reads `bf16[1,128] {1,0}` as one shape
            shape = shape.with_layout(self.build_layout(spaced.group(1), shape.rank,
                                                        spaced.start(1)))
            self.pos = spaced.end()
        m = _OPCODE.match(text, self.pos)
        if m is None:
            self.skip()
            raise self.error(f"expected an opcode followed by '(', found {self.describe_here()}")
        opcode = lookup_opcode(m.group(1))
        wrapped = None
        if opcode is None:
            opcode, wrapped = _async_sugar(m.group(1))
            if opcode is None:
                raise self.error(f"unknown opcode '{m.group(1)}'", m.start(1))
        op_pos = m.start(1)
        if shape is None and opcode in _PAYLOAD_OPCODES:
            raise self.error(f"expected a shape such as s32[2,3] before {opcode.mnemonic} "
                             "(XLA infers no shape for it)", op_pos)
        self.pos = m.end()
        inst = HloInstruction(name, opcode, shape or _NO_SHAPE)
        inst.async_wrapped = wrapped
        if opcode is HloOpcode.CONSTANT:
            self.parse_constant_payload(inst)
        elif opcode is HloOpcode.PARAMETER:
            mi = _INT.match(text, self.pos)
            if mi is None or int(mi.group(1)) < 0:
                raise self.error("expected a parameter number, e.g. parameter(0)")
            inst.parameter_number = int(mi.group(1))
            self.pos = mi.end()
            self.expect(")", "after the parameter number")
        else:
            self.parse_operands(inst, scope, control_refs)
        arity = opcode.arity
        if arity is not None and len(inst.operands) != arity and opcode is not HloOpcode.CONSTANT:
            raise self.error(f"{opcode.mnemonic} takes {arity} operand{'s' * (arity != 1)}, "
                             f"got {len(inst.operands)}", op_pos)
        seen: set[str] = set()
        while attributes:
            m = _ATTR_KEY.match(text, self.pos)
            if m is None:
                break
            key, key_pos = m.group(1), m.start(1)
            if key in seen:
                raise self.error(f"attribute '{key}' is given twice", key_pos)
            seen.add(key)
            self.pos = m.end()
            self.parse_attribute(inst, key, control_refs)
        if attributes:
            self.check_instruction_end(inst)
        for req in _REQUIRED.get(opcode, ()):
            if req not in seen:
                raise self.error(f"{opcode.mnemonic} '{name}' lacks the required attribute "
                                 f"'{req}'", op_pos)
        if opcode is HloOpcode.BROADCAST and inst.dimensions is None:
            self.default_broadcast_dimensions(inst, op_pos)
        if shape is None:
            self.infer_result_shape(inst, op_pos)
        self.check_rules(inst, op_pos)
        inst.register_as_user()
        return inst

    def infer_result_shape(self, inst: HloInstruction, op_pos: int) -> None:
        assert self.module is not None
        called = None
        for ref_inst, key, _, names in reversed(self.comp_refs):
            if ref_inst is not inst:
                break
            if key in ("to_apply", "true_computation", "branch_computations") and names:
                called = self.module.computation_by_name(names[0][0])
        try:
            inst.shape = infer_shape(inst, called)
        except ValueError as err:
            raise self.error(f"no result shape for '{inst.name}': {err}", op_pos) from None

    def check_instruction_end(self, inst: HloInstruction) -> None:
        """After the attributes the line must end (next instruction or '}')."""
        save = self.pos
        self.skip()
        nxt = self.text[self.pos:self.pos + 1]
        # A new line starts the next instruction, which reports its own errors; XLA's parser
        # also reads a next instruction on the same line (`a = ... b = ...`).
        if nxt in ("}", "") or "\n" in self.text[save:self.pos] \
                or _INST_HEAD.match(self.text, self.pos):
            self.pos = save
            return
        raise self.error(f"unexpected {self.describe_here()} after instruction '{inst.name}' "
                         "(expected ', attribute=value' or a new instruction)")

    def parse_operands(self, inst: HloInstruction, scope: dict[str, HloInstruction],
                       control_refs: list) -> None:
        text = self.text
        m = _SIMPLE_OPERANDS.match(text, self.pos)
        if m is not None:
            if m.group(1):
                base = m.start(1)
                for nm in NAME_IN_LIST.finditer(m.group(1)):
                    op = scope.get(nm.group(1))
                    if op is None:
                        raise self.error(f"use of undefined instruction '{nm.group(1)}'",
                                         base + nm.start(1))
                    inst.operands.append(op)
            self.pos = m.end()
            return
        # General form: operands may carry shapes (`s32[8]{0} %x`) and comments.
        first = True
        while True:
            self.skip()
            if text.startswith(")", self.pos):
                self.pos += 1
                return
            if not first:
                self.expect(",", f"between operands of '{inst.name}'")
                self.skip()
            first = False
            start = self.pos
            if text.startswith("(", self.pos) or ARRAY_SHAPE.match(text, self.pos) and \
                    _OPERAND_WITH_SHAPE.match(text, self.pos):
                written: Shape | None = self.parse_shape()
                self.skip()
            else:
                written = None
            nested = _OPCODE.match(text, self.pos)
            if nested is not None and (lookup_opcode(nested.group(1)) is not None
                                       or _async_sugar(nested.group(1))[0] is not None):
                # an instruction written in place of an operand: XLA names it <opcode>.anon
                self.pos = start
                assert self.module is not None
                name = self.module.claim_name(nested.group(1) + ".anon")
                inner = self.parse_rhs(name, scope, control_refs, attributes=False)
                self.nested.append(inner)
                inst.operands.append(inner)
                continue
            m = _OPERAND_NAME.match(text, self.pos)
            if m is None:
                if self.pos >= len(text):
                    raise self.error(f"unbalanced '(': operand list of '{inst.name}' is not closed",
                                     start)
                raise self.error(f"expected an operand name, found {self.describe_here()}")
            op = scope.get(m.group(1))
            if op is None:
                raise self.error(f"use of undefined instruction '{m.group(1)}'", m.start(1))
            if written is not None and not compatible(written, op.shape):
                raise self.error(f"the operand's shape is written {written.to_text()}, but "
                                 f"'{op.name}' is {op.shape.to_text()}", start)
            inst.operands.append(op)
            self.pos = m.end()

    def parse_constant_payload(self, inst: HloInstruction) -> None:
        start = self.pos
        self.pos -= 1
        self.skip_balanced()
        payload = self.text[start:self.pos - 1].strip()
        if not payload:
            raise self.error("constant needs a value, e.g. constant(0)", start)
        inst.literal_text = payload
        if payload == "{...}":
            return  # XLA elides big constants this way; the value is unknown but printable
        try:
            if inst.shape.is_tuple:  # checked here, its value built where it is used
                parse_tuple_literal(payload, inst.shape)
                return
            inst._literal = parse_literal(payload, inst.shape)
        except LiteralError as err:
            lead = len(self.text[start:self.pos - 1]) - len(self.text[start:self.pos - 1].lstrip())
            raise self.error(f"bad constant literal: {err.message}", start + lead + err.offset) \
                from None

    # --- attribute values ------------------------------------------------------------------

    def parse_attribute(self, inst: HloInstruction, key: str, control_refs: list) -> None:
        value_pos = self.pos
        if key in _COMPUTATION_ATTRS and _INLINE_BODY.match(self.text, value_pos):
            self.comp_refs.append((inst, key, value_pos, [(self.parse_inline_computation(), 0)]))
            return
        self.set_attribute(inst, key, self.raw_value(key), value_pos, control_refs)

    def parse_inline_computation(self) -> str:
        """A computation body written as an attribute value (`to_apply={ ... }`); XLA names
        it `_` (then `_.1`, ...) and places it before the computation that calls it."""
        module = self.module
        assert module is not None
        comp = HloComputation(module.claim_computation_name("_"))
        caller = self.open_computations[-1]
        module.computations.insert(module.computations.index(caller), comp)
        comp.parent = module
        open_pos = self.pos
        self.pos += 1
        outer_nested, self.nested = self.nested, []
        self.parse_instructions(comp, open_pos)
        self.nested = outer_nested
        return comp.name

    def set_attribute(self, inst: HloInstruction, key: str, value: str, value_pos: int,
                      control_refs: list) -> None:
        """Store one attribute: typed fields for what tilecc reads, verbatim otherwise."""
        op = inst.opcode
        try:
            if key == "metadata":
                inst.metadata = value
            elif key == "dimensions":
                # typed values are immutable: one shared object per distinct text
                dims = self.dimension_lists.get(value)
                if dims is None:
                    dims = self.dimension_lists[value] = int_list(value, key)
                inst.dimensions = dims
            elif key in _COMPUTATION_ATTRS:
                names = self.name_lists.get(value)
                if names is None:
                    names = self.name_lists[value] = name_list(value, 0)
                self.comp_refs.append((inst, key, value_pos, names))
            elif key == "slice" and op is HloOpcode.SLICE:
                inst.slice_starts, inst.slice_limits, inst.slice_strides = slice_bounds(value)
            elif key == "replica_groups":
                groups = self.replica_groups.get(value)
                if groups is None:
                    groups = self.replica_groups[value] = replica_groups_from_text(value)
                inst.replica_groups = groups
            elif key == "channel_id":
                if not value.isdigit():
                    raise ValueError(f"channel_id must be a non-negative integer, got '{value}'")
                inst.channel_id = int(value)
            elif key in _BOOL_ATTRS:
                if value not in ("true", "false"):
                    raise ValueError(f"{key} must be true or false, got '{value}'")
                setattr(inst, key, value == "true")
            elif key == "index" and op is HloOpcode.GET_TUPLE_ELEMENT:
                if not value.isdigit():
                    raise ValueError(f"index must be a non-negative integer, got '{value}'")
                inst.tuple_index = int(value)
            elif key == "iota_dimension" and op is HloOpcode.IOTA:
                if not value.isdigit():
                    raise ValueError(f"iota_dimension must be a non-negative integer, got '{value}'")
                inst.iota_dimension = int(value)
            elif key == "direction" and op is HloOpcode.COMPARE:
                if value not in _COMPARISON_DIRECTIONS:
                    raise ValueError(f"unknown comparison direction '{value}' (expected one of "
                                     + ", ".join(sorted(_COMPARISON_DIRECTIONS)) + ")")
                inst.comparison_direction = value
            elif key == "type" and op is HloOpcode.COMPARE:
                if value not in _COMPARISON_TYPES:
                    raise ValueError(f"unknown comparison type '{value}'")
                inst.comparison_type = value
            elif key == "control-predecessors":
                control_refs.append((inst, name_list(value, value_pos)))
            else:
                if key == "sharding" and (message := check_sharding(value)) is not None:
                    raise ValueError(message)
                inst.attributes[key] = value
        except ValueError as err:
            raise self.error(str(err), value_pos) from None

    # --- computation references ------------------------------------------------------------

    def resolve_computation_refs(self, module: HloModule) -> None:
        by_name = {c.name: c for c in module.computations}
        # (instruction id, list attribute) -> (instruction, halves named so far, position)
        halves: dict[tuple[int, str], tuple[HloInstruction, dict[str, HloComputation], int]] = {}
        for inst, key, value_pos, names in self.comp_refs:
            comps = []
            for name, offset in names:
                comp = by_name.get(name)
                if comp is None:
                    raise self.error(f"unknown computation '{name}'", value_pos + offset)
                if comp is module.entry:
                    raise self.error(f"the entry computation '{name}' cannot be called",
                                     value_pos + offset)
                comps.append(comp)
            if key in _SINGLE_COMPUTATION_ATTRS and len(comps) != 1:
                raise self.error(f"{key} names exactly one computation", value_pos)
            if key in ("to_apply", "condition", "body"):
                setattr(inst, key, comps[0])
            elif key in _HALF_ATTRS:
                attr = _HALF_ATTRS[key]
                halves.setdefault((id(inst), attr), (inst, {}, value_pos))[1][key] = comps[0]
            elif key == "branch_computations":
                if inst.operands and inst.operands[0].shape.element_type is PrimitiveType.PRED:
                    raise self.error("a conditional on a pred takes true_computation and "
                                     "false_computation, not branch_computations", value_pos)
                inst.branch_computations = comps
            else:
                inst.calls = comps
                if inst.opcode is HloOpcode.FUSION:
                    for c in comps:
                        c.is_fusion_computation = True
        for (_, attr), (inst, named, pos) in halves.items():
            first, second = _HALF_PAIRS[attr]
            for key in (first, second):
                if key not in named:
                    raise self.error(f"{inst.opcode.mnemonic} has "
                                     f"{first if key == second else second} but no {key}", pos)
            setattr(inst, attr, [named[first], named[second]])


_OPERAND_NAME = re.compile(r"%?(" + NAME + r")")
_INLINE_BODY = re.compile(r"\{" + _WS + r"(?:ROOT\s+)?%?" + NAME + _WS + "=")
_SPACED_LAYOUT = re.compile(r"[ \t]+(\{[\d,\s]*(?::[^{}\n]*)?\})(?=\s*[a-z][a-z0-9\-]*\()")
_OPERAND_WITH_SHAPE = re.compile(r"[a-z][a-z0-9]*\[[^\]\[]*\](?:\{[^{}]*\})?\s+%?" + NAME)
_ASYNC_SUFFIXES = {"-start": HloOpcode.ASYNC_START, "-update": HloOpcode.ASYNC_UPDATE,
                   "-done": HloOpcode.ASYNC_DONE}


def _async_sugar(mnemonic: str) -> tuple[HloOpcode | None, str | None]:
    """XLA's parser reads `<op>-start` / `<op>-update` / `<op>-done` for any opcode <op>
    that has no async form of its own as async-start / -update / -done wrapping <op>
    (hlo_parser.cc); (None, None) when `mnemonic` is not such a name."""
    for suffix, opcode in _ASYNC_SUFFIXES.items():
        if mnemonic.endswith(suffix):
            wrapped = mnemonic[:-len(suffix)]
            if lookup_opcode(wrapped) is not None and sugar_is_allowed(wrapped):
                return opcode, wrapped
    return None, None


_NAME = re.compile(NAME)
_NO_KEYS: frozenset[str] = frozenset()
# `, key=value` as XLA prints it: a plain word, a string, replica groups `{{0,1},{2,3}}`, or
# braces without nested braces (strings inside respected); what raw_value reads the same
_FAST_ATTR = re.compile(
    r",[ \t]*([A-Za-z_][\w\-]*)=([^,{}()\[\]\"\s]+|\{(?:\{[\d,]*\},?)*\}"
    r'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"'
    r'|\{[^{}"\n]*(?:"[^"\\\n]*(?:\\.[^"\\\n]*)*"[^{}"\n]*)*\})(?=[,\s]|$)')
