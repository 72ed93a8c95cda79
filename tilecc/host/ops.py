"""The one table of the host DSL's pl / pld ops: arity, keywords, checks, runtime.

Each OpSpec names an op by its full dotted name (short forms are resolved by
op_forms.py before anything looks here) with pypto's signature: `params` are positional-
or-keyword in order (the first `required` of them must be given), `kwonly` follow `*`;
`defaults` are the values of omitted optional parameters. `host_only` ops are refused by
the parser outside a HOST-level function and inside a device scope (pypto's parser rule
for alloc_window_buffer and world_size). `returns_arg` is the argument an op gives back
(pypto's window-as-result); `lineage_arg` the data argument SynthesizeAllReduceSignals
follows through a collective. `run` is the runtime implementation (runtime/op_local.py,
runtime/op_remote.py), identical on the threaded and MPI backends.

`OpSpec.bind(args, kwargs)` is the call binding every consumer uses: it gives a dict
parameter -> value with defaults filled in, or raises InterpError naming the op and what
is wrong. Ops outside the table are accepted by the parser and passes (pypto has many
more) and refused by the runtime with the op's name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tilecc.errors import InterpError
from tilecc.host.runtime import op_local as L
from tilecc.host.runtime import op_remote as R
from tilecc.host.runtime.dtypes import DTYPES

Run = Callable[[L.OpContext, dict[str, Any]], Any]
VARIADIC = "*values"   # the one parameter of pl.yield_, which takes any number of values


@dataclass(frozen=True)
class OpSpec:
    name: str
    params: tuple[str, ...] = ()
    required: int = 0
    kwonly: tuple[str, ...] = ()
    defaults: Mapping[str, Any] = field(default_factory=dict)
    run: Run | None = None
    host_only: bool = False
    returns_arg: int | None = None
    lineage_arg: int | None = None

    def bind(self, args: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        if self.params == (VARIADIC,):
            if kwargs:
                raise InterpError(f"{self.name} takes no keywords, got {sorted(kwargs)}")
            return {"values": tuple(args)}
        if len(args) > len(self.params):
            raise InterpError(f"{self.name} takes at most {len(self.params)} positional arguments "
                              f"({', '.join(self.params)}), got {len(args)}")
        bound = dict(zip(self.params, args))
        for key, value in kwargs.items():
            if key not in self.params and key not in self.kwonly:
                raise InterpError(f"{self.name} got an unexpected keyword `{key}=` (takes "
                                  f"{', '.join(self.params + self.kwonly) or 'no arguments'})")
            if key in bound:
                raise InterpError(f"{self.name} got `{key}` both positionally and as {key}=")
            bound[key] = value
        for index, name in enumerate(self.params + self.kwonly):
            if name in bound:
                continue
            if name in self.defaults:
                bound[name] = self.defaults[name]
            elif index < self.required or name in self.kwonly:
                raise InterpError(f"{self.name} is missing argument `{name}`")
        return bound


def _op(name: str, params: str = "", required: int | None = None, kwonly: str = "",
        defaults: Mapping[str, Any] | None = None, **extra: Any) -> OpSpec:
    names = tuple(params.split()) if params else ()
    return OpSpec(name, names, len(names) if required is None else required,
                  tuple(kwonly.split()) if kwonly else (), defaults or {}, **extra)


_REGION = {"dst_offsets": None, "src_offsets": None, "shape": None, "atomic": "None_",
           "chunk_rows": 0, "chunk_cols": 0, "pipeline": False}
_ELEMENTWISE = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
                "maximum": np.maximum, "minimum": np.minimum}

_TABLE: list[OpSpec] = [
    # control (pypto's SSA loops)
    _op("pl.cond", "cond", run=L.run_cond),
    _op("pl.yield_", VARIADIC, required=0, run=L.run_yield, lineage_arg=0),
    # system substrate
    _op("pld.system.world_size", run=L.run_world_size, host_only=True),
    _op("pld.system.rank", "ctx", required=0, defaults={"ctx": None}, run=L.run_rank),
    _op("pld.system.nranks", "ctx", required=0, defaults={"ctx": None}, run=L.run_nranks),
    _op("pld.system.get_comm_ctx", "dist_tensor", run=L.run_get_comm_ctx),
    _op("pld.system.notify", "target peer offsets value", kwonly="op", run=R.run_notify),
    _op("pld.system.wait", "signal offsets expected", kwonly="cmp", run=R.run_wait),
    # window buffers
    _op("pld.tensor.alloc_window_buffer", "size", kwonly="dtype name", defaults={"dtype": None, "name": ""},
        run=L.run_alloc_window_buffer, host_only=True),
    _op("pld.tensor.window", "buf shape", kwonly="dtype", run=L.run_window, lineage_arg=0),
    # collectives
    _op("pld.tensor.allreduce", "target signal", required=1, kwonly="op mode core_num",
        defaults={"signal": None, "op": "Sum", "mode": "mesh", "core_num": 1}, run=R.run_allreduce,
        returns_arg=0, lineage_arg=0),
    _op("pld.tensor.barrier", "signal", run=R.run_barrier, returns_arg=0),
    _op("pld.tensor.broadcast", "target signal", kwonly="root", run=R.run_broadcast, returns_arg=0),
    _op("pld.tensor.allgather", "local_data target signal", run=R.run_allgather, returns_arg=1, lineage_arg=1),
    _op("pld.tensor.reduce_scatter", "target signal", kwonly="op", defaults={"op": "Sum"},
        run=R.run_reduce_scatter, returns_arg=0),
    _op("pld.tensor.all_to_all", "input target signal", run=R.run_all_to_all, returns_arg=1, lineage_arg=1),
    _op("pld.tensor.all_to_all_v", "input target signal send_counts recv_counts", run=R.run_all_to_all_v,
        returns_arg=1, lineage_arg=1),
    # one-sided access
    _op("pld.tensor.put", "dst peer src dst_offsets src_offsets shape", required=3,
        kwonly="atomic chunk_rows chunk_cols pipeline", defaults=_REGION, run=R.run_put, returns_arg=0),
    _op("pld.tensor.get", "dst peer src dst_offsets src_offsets shape", required=3,
        kwonly="chunk_rows chunk_cols pipeline", defaults=_REGION, run=R.run_get, returns_arg=0),
    _op("pld.tile.remote_load", "target peer offsets shape valid_shape", required=4,
        defaults={"valid_shape": None}, run=R.run_remote_load),
    _op("pld.tile.remote_store", "src_tile target peer offsets", kwonly="atomic", defaults={"atomic": "None_"},
        run=R.run_remote_store),
    # tiles and tensors
    _op("pl.load", "tensor offsets shapes", run=L.run_load),
    _op("pl.store", "tile offsets output_tensor", run=L.run_store, returns_arg=2),
    _op("pl.slice", "tensor shape offset", run=L.run_slice),
    _op("pl.tensor.slice", "tensor shape offset", run=L.run_slice),
    _op("pl.tensor.create", "shape", kwonly="dtype", defaults={"dtype": np.dtype(np.float32)}, run=L.run_create),
    _op("pl.tile.full", "shape dtype value", run=L.run_full),
    _op("pl.tensor.assemble", "target source offset", returns_arg=0),
    *[_op(f"pl.{name}", "lhs rhs", run=L.elementwise(fn)) for name, fn in _ELEMENTWISE.items()],
    _op("pl.tensor.add", "lhs rhs", run=L.elementwise(np.add)),
    *[_op(f"pl.{dtype}.get_byte", run=L.get_byte(np.dtype(t))) for dtype, t in DTYPES.items()],
]

OPS: dict[str, OpSpec] = {spec.name: spec for spec in _TABLE}
assert len(OPS) == len(_TABLE), "an op is listed twice"

HOST_ONLY = frozenset(name for name, spec in OPS.items() if spec.host_only)
RETURNS_ARGUMENT = {name: spec.returns_arg for name, spec in OPS.items() if spec.returns_arg is not None}
LINEAGE_ARGUMENT = {name: spec.lineage_arg for name, spec in OPS.items() if spec.lineage_arg is not None}
