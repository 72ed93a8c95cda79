"""Seeded random HLO modules that exercise both decompositions, as text.

Contract: `random_module_text(seed)` returns `(text, replicas)`: a valid HLO module whose
`replica_count` equals `replicas` (1, 2, 4 or 8) and whose entry returns a tuple. Each
module mixes gate-matching and non-matching instructions:
- scalar-like ([], [1], [1,1]) all-reduce(add) of s32 / u32 (matches) and of s8 / s64 /
  u16 / f32 or with a max reducer (does not match), over explicit, iota or empty replica
  groups of a random equal-size partition of the replicas, sometimes with channel_id and
  use_global_device_ids=true;
- reduces of rank-2 operands of every integral type (and f32), with a max / min / and /
  or / xor / multiply / add reducer, reducing to a scalar or to [1], with element counts
  that are or are not a multiple of 128 (including 0);
- chains (a reduce result feeding an all-reduce) and matches inside a called computation.
Reducers that are not idempotent (xor, multiply, add) get their identity as init, because
the rewrite applies the init on both stages (spec 000, "the init value is reused").
Instruction names never collide with type tokens (s1, u8 ...): every name has a letter prefix
and an underscore.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

INT_TYPES = ["pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"]
_REDUCERS = {"max": "maximum", "min": "minimum", "and": "and", "or": "or", "xor": "xor",
             "mul": "multiply", "add": "add"}
_IDEMPOTENT = {"max", "min", "and", "or"}
_IDENTITY = {"xor": "0", "mul": "1", "add": "0"}
_RANGES = {"s8": (-128, 127), "s16": (-32768, 32767), "s32": (-2**31, 2**31 - 1),
           "s64": (-2**63, 2**63 - 1), "u8": (0, 255), "u16": (0, 65535),
           "u32": (0, 2**32 - 1), "u64": (0, 2**64 - 1)}


def _reducer_ops(dtype: str) -> list[str]:
    if dtype == "pred":
        return ["and", "or", "max", "min", "xor"]
    if dtype == "f32":
        return ["max", "min", "add"]
    return list(_REDUCERS)


@dataclass
class _Builder:
    rng: random.Random
    replicas: int
    computations: dict[str, str] = field(default_factory=dict)
    params: list[str] = field(default_factory=list)
    counter: int = 0

    def name(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}_{self.counter}"

    def reducer(self, op: str, dtype: str) -> str:
        name = f"{op}_{dtype}_comp"
        if name not in self.computations:
            self.computations[name] = (
                f"{name} {{\n  lhs_a = {dtype}[] parameter(0)\n  rhs_b = {dtype}[] parameter(1)\n"
                f"  ROOT out_r = {dtype}[] {_REDUCERS[op]}(lhs_a, rhs_b)\n}}\n")
        return name

    def param(self, shape: str) -> str:
        name = f"param_{len(self.params)}"
        self.params.append(f"  {name} = {shape} parameter({len(self.params)})")
        return name

    def init_constant(self, op: str, dtype: str) -> str:
        if op not in _IDEMPOTENT:
            value = _IDENTITY[op]
        elif dtype == "pred":
            value = self.rng.choice(["true", "false"])
        elif dtype == "f32":
            value = self.rng.choice(["-inf", "inf", "0", "-1.5"])
        else:
            low, high = _RANGES[dtype]
            value = str(self.rng.choice([low, high, 0, self.rng.randint(low, high)]))
        if dtype == "pred" and op in _IDENTITY:
            value = "false" if value == "0" else "true"
        return value

    def replica_groups(self) -> str:
        sizes = [s for s in (1, 2, 4, 8) if self.replicas % s == 0]
        size = self.rng.choice(sizes)
        count = self.replicas // size
        form = self.rng.choice(["explicit", "iota", "empty"] if size == self.replicas
                               else ["explicit", "iota"])
        if form == "empty":
            return "{}"
        if form == "iota":
            if count > 1 and size > 1 and self.rng.random() < 0.5:
                return f"[{count},{size}]<=[{size},{count}]T(1,0)"
            return f"[{count},{size}]<=[{self.replicas}]"
        ids = list(range(self.replicas))
        self.rng.shuffle(ids)
        groups = [sorted(ids[i * size:(i + 1) * size]) for i in range(count)]
        return "{" + ",".join("{" + ",".join(map(str, g)) + "}" for g in groups) + "}"


def _all_reduce(b: _Builder, lines: list[str], source: str | None, dtype: str) -> str:
    """An all-reduce of a scalar-like value; `source` is a scalar of `dtype` or None."""
    rng = b.rng
    shape_dims = rng.choice(["", "1", "1,1"]) if source is None else ""
    shape = f"{dtype}[{shape_dims}]"
    operand = source if source is not None else b.param(shape)
    if rng.random() < 0.4:  # an elementwise producer so dead-operand removal has work to do
        neg = b.name("neg")
        lines.append(f"  {neg} = {shape} negate({operand})")
        operand = neg
    op = "add" if rng.random() < 0.85 else "max"
    attrs = []
    groups = b.replica_groups()
    if rng.random() < 0.3 and groups != "{}":
        attrs.append(f"channel_id={rng.randint(1, 9)}")
        attrs.append(f"replica_groups={groups}")
        attrs.append("use_global_device_ids=true")
    else:
        attrs.append(f"replica_groups={groups}")
    attrs.append(f"to_apply={b.reducer(op, dtype)}")
    out = b.name("ar")
    lines.append(f"  {out} = {shape} all-reduce({operand}), {', '.join(attrs)}")
    return out


def _reduce(b: _Builder, lines: list[str], dtype: str) -> str:
    rng = b.rng
    rows = rng.choice([1, 2, 3, 4, 8, 16, 64, 128, 0, 5])
    cols = rng.choice([128, 64, 32, 256, 16, 200, 1, 5, 384])
    if rng.random() < 0.7 and (rows * cols) % 128 != 0:
        cols = 128
    operand = b.param(f"{dtype}[{rows},{cols}]")
    op = rng.choice(_reducer_ops(dtype))
    init = b.name("init")
    lines.append(f"  {init} = {dtype}[] constant({b.init_constant(op, dtype)})")
    out = b.name("red")
    if rows == 1 and rng.random() < 0.5:
        lines.append(f"  {out} = {dtype}[1] reduce({operand}, {init}), dimensions={{1}}, "
                     f"to_apply={b.reducer(op, dtype)}")
    else:
        dims = rng.choice(["0,1", "1,0"])
        lines.append(f"  {out} = {dtype}[] reduce({operand}, {init}), dimensions={{{dims}}}, "
                     f"to_apply={b.reducer(op, dtype)}")
    return out


def random_module_text(seed: int) -> tuple[str, int]:
    rng = random.Random(seed)
    replicas = rng.choice([1, 2, 4, 4, 8, 8])
    b = _Builder(rng, replicas)
    entry: list[str] = []
    callee: list[str] = []
    results: list[tuple[str, str]] = []
    callee_result: tuple[str, str] | None = None
    for _ in range(rng.randint(1, 4)):
        kind = rng.random()
        if kind < 0.4:
            dtype = rng.choice(["s32", "u32", "s32", "u32", "s8", "s64", "u16", "f32"])
            results.append((_all_reduce(b, entry, None, dtype), dtype))
        elif kind < 0.75:
            dtype = rng.choice(INT_TYPES + ["s32", "u32", "f32"])
            name = _reduce(b, entry, dtype)
            if dtype in ("s32", "u32") and "[1]" not in entry[-1] and rng.random() < 0.5:
                name = _all_reduce(b, entry, name, dtype)  # chain: reduce feeds a psum
            results.append((name, dtype))
        elif callee_result is None:
            dtype = rng.choice(["s32", "u32"])
            saved, b.params = b.params, []
            inner = _reduce(b, callee, dtype)
            inner = _all_reduce(b, callee, inner, dtype) if "[1]" not in callee[-1] else inner
            callee_params, b.params = b.params, saved
            callee = callee_params + callee
            callee_shape = callee_params[0].split(" = ")[1].split(" parameter")[0]
            arg = b.param(callee_shape)
            out_shape = callee[-1].split(" = ")[1].split(" ", 1)[0]
            call = b.name("call")
            entry.append(f"  {call} = {out_shape} call({arg}), to_apply=callee_comp")
            callee[-1] = callee[-1].replace(f"  {inner} =", f"  ROOT {inner} =", 1)
            callee_result = (call, out_shape)
    shapes = []
    for name, _ in results:
        shapes.append(_shape_of(name, entry))
    if callee_result is not None:
        results.append(callee_result)
        shapes.append(callee_result[1])
    root = f"  ROOT result_tuple = ({', '.join(shapes)}) tuple({', '.join(n for n, _ in results)})"
    parts = [f"HloModule random_{seed}, replica_count={replicas}\n"]
    parts.extend(b.computations.values())
    if callee:
        parts.append("callee_comp {\n" + "\n".join(callee) + "\n}\n")
    parts.append("ENTRY main {\n" + "\n".join(b.params + entry + [root]) + "\n}\n")
    return "\n".join(parts), replicas


def _shape_of(name: str, lines: list[str]) -> str:
    for line in lines:
        if line.startswith(f"  {name} = "):
            return line.split(" = ", 1)[1].split(" ", 1)[0]
    raise KeyError(name)
