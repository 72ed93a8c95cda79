"""Random HLO modules for differential tests: elementwise / reduce / collective graphs.

Contract: `build_module(chooser)` makes one valid HLO module (text XLA accepts) from a
stream of choices; `RngChooser(seed)` draws them from numpy (deterministic batches that run
through one XLA child) and `modules()` is the hypothesis strategy (shrinkable). A module has
1 to 8 replicas, one element type among integers, pred and floats, 1 to 3 parameters of one
shape, and 3 to 9 steps, each one of: a binary or unary elementwise op, compare + select,
clamp, a convert round trip, replica-id arithmetic, all-reduce (any standard reducer),
reduce over random dims broadcast back, all-gather + slice, reduce-scatter, all-to-all,
collective-permute; collectives use random replica groups in explicit, iota (with and
without transpose) or empty form, with or without channel_id / use_global_device_ids.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence, TypeVar

import numpy as np
from hypothesis import strategies as st

T = TypeVar("T")

INT_TYPES = ["s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"]
FLOAT_TYPES = ["f32", "bf16", "f16"]
ELEMENT_TYPES = INT_TYPES + FLOAT_TYPES + ["pred"]
INT_BINARY = ["add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum",
              "and", "or", "xor", "shift-left", "shift-right-logical",
              "shift-right-arithmetic"]
FLOAT_BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "remainder"]
PRED_BINARY = ["and", "or", "xor"]
INT_UNARY = ["negate", "not", "popcnt", "count-leading-zeros"]
SIGNED_UNARY = ["abs", "sign"]
FLOAT_UNARY = ["negate", "abs", "sign", "exponential", "tanh", "sqrt", "floor", "ceil",
               "round-nearest-even", "log", "logistic"]
INT_REDUCERS = ["add", "multiply", "maximum", "minimum", "and", "or", "xor"]
# XLA CPU collectives reject bitwise reducers ("Unsupported reduction computation").
INT_COLLECTIVE_REDUCERS = ["add", "multiply", "maximum", "minimum"]
# Float sums depend on the order of accumulation; max / min do not.
FLOAT_REDUCERS = ["maximum", "minimum", "add"]
PRED_REDUCERS = ["and", "or"]


class Chooser(Protocol):
    def integer(self, low: int, high: int) -> int:
        """A value in [low, high] (inclusive)."""

    def choice(self, options: Sequence[T]) -> T: ...


class RngChooser:
    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def integer(self, low: int, high: int) -> int:
        return int(self.rng.integers(low, high, endpoint=True))

    def choice(self, options: Sequence[T]) -> T:
        return options[self.integer(0, len(options) - 1)]


class DrawChooser:
    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw

    def integer(self, low: int, high: int) -> int:
        return self.draw(st.integers(low, high))

    def choice(self, options: Sequence[T]) -> T:
        return self.draw(st.sampled_from(list(options)))


@dataclass(frozen=True)
class RandomModule:
    text: str
    replicas: int
    element_type: str


def random_groups(c: Chooser, replicas: int) -> tuple[str, int]:
    """(replica_groups text, group size): groups of equal size in a random form."""
    sizes = [s for s in range(1, replicas + 1) if replicas % s == 0]
    size = c.choice(sizes)
    count = replicas // size
    form = c.choice(["explicit", "iota", "iota_t", "empty"])
    if form == "empty":
        return "{}", replicas
    if form == "iota":
        return f"[{count},{size}]<=[{replicas}]", size
    if form == "iota_t" and count > 1 and size > 1:
        return f"[{count},{size}]<=[{size},{count}]T(1,0)", size
    order = list(range(replicas))
    for i in range(replicas - 1, 0, -1):  # a chooser-driven shuffle (shrinks to identity)
        j = c.integer(0, i)
        order[i], order[j] = order[j], order[i]
    groups = [sorted(order[g * size:(g + 1) * size]) for g in range(count)]
    return "{" + ",".join("{" + ",".join(map(str, g)) + "}" for g in groups) + "}", size


def groups_text(attrs: str) -> str:
    return attrs.split("replica_groups=", 1)[1].split(", use_global", 1)[0]


class _Builder:
    def __init__(self, c: Chooser, t: str, dims: list[int], replicas: int) -> None:
        self.c, self.t, self.dims, self.replicas = c, t, dims, replicas
        self.lines: list[str] = []
        self.pool: list[str] = []
        self.outputs: list[tuple[str, str]] = []
        self.reducers: set[str] = set()
        self.counter = 0

    @property
    def shape(self) -> str:
        return f"{self.t}[{','.join(map(str, self.dims))}]"

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}_{self.counter}"

    def emit(self, prefix: str, shape: str, rhs: str) -> str:
        name = self.fresh(prefix)
        self.lines.append(f"  {name} = {shape} {rhs}")
        return name

    def operand(self) -> str:
        return self.c.choice(self.pool)

    def collective_attrs(self) -> tuple[str, int]:
        groups, size = random_groups(self.c, self.replicas)
        mode = self.c.choice(["plain", "channel", "global"])
        if mode == "global" and groups == "{}":
            mode = "channel"  # flattened ids need explicit groups
        extra = {"plain": "", "channel": f", channel_id={self.counter + 1}",
                 "global": f", channel_id={self.counter + 1}"}[mode]
        attrs = f"{extra}, replica_groups={groups}"
        if mode == "global":
            attrs += ", use_global_device_ids=true"
        return attrs, size

    def reducer(self, collective: bool = False) -> str:
        options = PRED_REDUCERS if self.t == "pred" else (
            FLOAT_REDUCERS if self.t in FLOAT_TYPES else
            INT_COLLECTIVE_REDUCERS if collective else INT_REDUCERS)
        op = self.c.choice(options)
        self.reducers.add(op)
        return f"red_{op}"

    def step(self) -> None:
        c, t = self.c, self.t
        kinds = ["binary", "binary", "unary", "select", "clamp", "convert", "all-reduce",
                 "reduce", "all-gather", "reduce-scatter", "all-to-all", "permute", "replica"]
        kind = c.choice(kinds)
        if t == "pred" and kind in ("clamp", "unary", "replica"):
            kind = "binary"
        if kind == "binary":
            ops = PRED_BINARY if t == "pred" else FLOAT_BINARY if t in FLOAT_TYPES else INT_BINARY
            self.pool.append(self.emit("b", self.shape, f"{c.choice(ops)}({self.operand()}, "
                                                         f"{self.operand()})"))
        elif kind == "unary":
            ops = FLOAT_UNARY if t in FLOAT_TYPES else INT_UNARY + (
                SIGNED_UNARY if t.startswith("s") else [])
            self.pool.append(self.emit("u", self.shape, f"{c.choice(ops)}({self.operand()})"))
        elif kind == "select":
            pred_shape = f"pred[{','.join(map(str, self.dims))}]"
            direction = c.choice(["EQ", "NE", "LT", "LE", "GT", "GE"])
            cmp = self.emit("c", pred_shape, f"compare({self.operand()}, {self.operand()}), "
                                             f"direction={direction}")
            self.pool.append(self.emit("s", self.shape,
                                       f"select({cmp}, {self.operand()}, {self.operand()})"))
        elif kind == "clamp":
            self.pool.append(self.emit("k", self.shape, f"clamp({self.operand()}, "
                                                        f"{self.operand()}, {self.operand()})"))
        elif kind == "convert":
            other = c.choice([u for u in ELEMENT_TYPES if u != t])
            mid = self.emit("v", f"{other}[{','.join(map(str, self.dims))}]",
                            f"convert({self.operand()})")
            self.pool.append(self.emit("w", self.shape, f"convert({mid})"))
        elif kind == "replica":
            rid = self.emit("r", "u32[]", "replica-id()")
            as_t = self.emit("r", f"{t}[]", f"convert({rid})")
            wide = self.emit("r", self.shape, f"broadcast({as_t}), dimensions={{}}")
            self.pool.append(self.emit("r", self.shape, f"add({self.operand()}, {wide})"
                                       if t not in FLOAT_TYPES else
                                       f"multiply({self.operand()}, {wide})"))
        elif kind == "all-reduce":
            attrs, _ = self.collective_attrs()
            self.pool.append(self.emit("ar", self.shape, f"all-reduce({self.operand()})"
                                                         f"{attrs}, to_apply={self.reducer(True)}"))
        elif kind == "reduce":
            self.reduce_and_broadcast()
        else:
            self.collective_with_dim(kind)

    def reduce_and_broadcast(self) -> None:
        rank = len(self.dims)
        reduced = [d for d in range(rank) if self.c.integer(0, 1)]
        kept = [d for d in range(rank) if d not in reduced]
        reducer = self.reducer()
        init = self.emit("i", f"{self.t}[]",
                         f"constant({self.identity(reducer.removeprefix('red_'))})")
        small = f"{self.t}[{','.join(str(self.dims[d]) for d in kept)}]"
        red = self.emit("rd", small, f"reduce({self.operand()}, {init}), "
                                     f"dimensions={{{','.join(map(str, reduced))}}}, "
                                     f"to_apply={reducer}")
        self.pool.append(self.emit("bc", self.shape, f"broadcast({red}), "
                                                     f"dimensions={{{','.join(map(str, kept))}}}"))

    def identity(self, op: str) -> str:
        """The reducer's identity: XLA leaves reduce undefined for any other init value."""
        if self.t == "pred":
            return "true" if op == "and" else "false"
        if self.t in FLOAT_TYPES:
            return {"add": "0", "multiply": "1", "maximum": "-inf", "minimum": "inf"}[op]
        info = np.iinfo(np.dtype(self.t.replace("s", "int").replace("u", "uint")))
        return str({"add": 0, "multiply": 1, "or": 0, "xor": 0, "maximum": info.min,
                    "minimum": info.max, "and": -1 if info.min < 0 else info.max}[op])

    def collective_with_dim(self, kind: str) -> None:
        if not self.dims:
            return
        dim = self.c.integer(0, len(self.dims) - 1)
        attrs, size = self.collective_attrs()
        x = self.operand()
        if kind == "all-gather":
            dims = list(self.dims)
            dims[dim] *= size
            gathered = self.emit("ag", f"{self.t}[{','.join(map(str, dims))}]",
                                 f"all-gather({x}){attrs}, dimensions={{{dim}}}")
            start = self.c.integer(0, size - 1) * self.dims[dim]
            bounds = ", ".join(f"[{start}:{start + n}]" if d == dim else f"[0:{n}]"
                               for d, n in enumerate(self.dims))
            self.pool.append(self.emit("sl", self.shape, f"slice({gathered}), slice={{{bounds}}}"))
        elif kind == "permute":
            order = list(range(self.replicas))
            for i in range(self.replicas - 1, 0, -1):
                j = self.c.integer(0, i)
                order[i], order[j] = order[j], order[i]
            pairs = [(s, order[s]) for s in range(self.replicas) if self.c.integer(0, 4)]
            text = ",".join(f"{{{s},{d}}}" for s, d in pairs)
            self.pool.append(self.emit("cp", self.shape, f"collective-permute({x}), "
                                                         f"source_target_pairs={{{text}}}"))
        elif self.dims[dim] % size == 0:
            if kind == "reduce-scatter":
                dims = list(self.dims)
                dims[dim] //= size
                shape = f"{self.t}[{','.join(map(str, dims))}]"
                name = self.emit("rs", shape, f"reduce-scatter({x}){attrs}, dimensions={{{dim}}}, "
                                              f"to_apply={self.reducer(True)}")
                self.outputs.append((name, shape))
            elif groups_text(attrs) != "{}":
                # all-to-all has no use_global_device_ids, and a channel_id would make its
                # groups partition ids: keep it cross-replica. XLA needs explicit groups.
                attrs = f", replica_groups={groups_text(attrs)}"
                self.pool.append(self.emit("a2a", self.shape, f"all-to-all({x}){attrs}, "
                                                              f"dimensions={{{dim}}}"))

    def reducer_text(self) -> str:
        t = self.t
        return "".join(f"red_{op} {{\n  x = {t}[] parameter(0)\n  y = {t}[] parameter(1)\n"
                       f"  ROOT z = {t}[] {op}(x, y)\n}}\n\n" for op in sorted(self.reducers))


def build_module(c: Chooser) -> RandomModule:
    replicas = c.integer(1, 8)
    t = c.choice(ELEMENT_TYPES)
    rank = c.integer(0, 3)
    dims = [c.choice([1, 2, 3, 4, 6, 8]) for _ in range(rank)]
    b = _Builder(c, t, dims, replicas)
    for i in range(c.integer(1, 3)):
        b.lines.append(f"  p{i} = {b.shape} parameter({i})")
        b.pool.append(f"p{i}")
    for _ in range(c.integer(3, 9)):
        b.step()
    outputs = [(b.pool[-1], b.shape)] + b.outputs
    if c.integer(0, 1) and len(b.pool) > 1:
        outputs.append((b.operand(), b.shape))
    root = (f"  ROOT out = ({', '.join(s for _, s in outputs)}) "
            f"tuple({', '.join(n for n, _ in outputs)})")
    text = (f"HloModule random_{t}, replica_count={replicas}\n\n" + b.reducer_text() +
            "ENTRY main {\n" + "\n".join(b.lines + [root]) + "\n}\n")
    return RandomModule(text, replicas, t)


@st.composite
def modules(draw: st.DrawFn) -> RandomModule:
    return build_module(DrawChooser(draw))
