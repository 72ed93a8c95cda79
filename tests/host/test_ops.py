"""The host op table and the ops beyond allreduce on the threaded backend, on real values:
every pld collective and one-sided op (programs/pld_ops.py) against a numpy model on 1 to
4 ranks, pypto's loop / argument / dynamic-dimension forms (programs/pypto_forms.py), and
the signature binding every consumer of the table uses. test_mpi.py runs the same
programs under mpiexec and compares bit for bit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tilecc.errors import InterpError
from tilecc.host.ops import HOST_ONLY, LINEAGE_ARGUMENT, OPS, RETURNS_ARGUMENT
from tilecc.host.parser import parse_module
from tilecc.host.runtime.interpreter import run_host
from tilecc.host.runtime.world import World

PROGRAMS = Path(__file__).with_name("programs")
S = 8


def expected_rows(me: int, nr: int) -> np.ndarray:
    i = np.arange(S, dtype=np.float32)
    nxt = (me + 1) % nr
    rows = np.zeros((10, S), np.float32)
    rows[0] = nxt * 10 + i                                  # allgather: row nxt
    rows[1] = 7                                             # broadcast from the last rank
    rows[2] = sum(r + me * i for r in range(nr))            # reduce_scatter: my row
    rows[3] = nxt * 100 + me * 10 + i                       # all_to_all: what nxt sent me
    rows[4] = nxt * 100 + me + 0.5                          # all_to_all_v: nxt's 2nd row for me
    rows[5, :nr] = [min((src + me) % 3, 2) for src in range(nr)]   # counts received
    rows[6] = ((me - 1) % nr) * 10 + i                      # put by my predecessor
    rows[7] = nxt * 10 + i                                  # get from nxt
    rows[8, 0] = ((me - 1) % nr) + 1                        # notify Set by my predecessor
    rows[9] = (me * 10 + i) + (nxt * 10 + i)                # remote_store Add from predecessor + me
    return rows


@pytest.mark.parametrize("ranks", [1, 2, 3, 4])
def test_every_pld_op_on_real_values(ranks):
    module = parse_module((PROGRAMS / "pld_ops.py").read_text(), "pld_ops.py")
    world = World(ranks, timeout=10)
    results = run_host(module, "PldOps", "host", ranks, [], world=world)
    for rank, res in enumerate(results):
        np.testing.assert_array_equal(res.local(world, rank), expected_rows(rank, ranks), err_msg=f"rank {rank}")
        assert not world.buffer_by_name("sig_buf", rank).any()   # every collective cleared its credits


def test_pypto_forms_run():
    module = parse_module((PROGRAMS / "pypto_forms.py").read_text(), "pypto_forms.py")
    ranks = 3
    world = World(ranks, timeout=10)
    results = run_host(module, "Forms", "host", ranks, [np.zeros((ranks, S), np.float32)], world=world)
    want = np.full(S, ranks, np.float32)
    want[:2] += [sum(10 * r for r in range(ranks)), sum(10 * r + 1 for r in range(ranks))]
    for rank, w in enumerate(results):
        np.testing.assert_array_equal(w.local(world, rank), want)


def test_an_unbound_dynamic_dimension_is_named():
    source = (PROGRAMS / "pypto_forms.py").read_text().replace("x: pl.Tensor[[NR, S], pl.FP32]", "x")
    with pytest.raises(InterpError, match="pl.dynamic dimension `NR` has no value"):
        run_host(parse_module(source), "Forms", "host", 1, [np.zeros((1, S), np.float32)])


def test_split_aiv_data_parallel_modes_are_refused_at_run_time():
    source = (PROGRAMS / "pypto_forms.py").read_text().replace("SplitMode.NONE", "SplitMode.UP_DOWN")
    with pytest.raises(InterpError, match="runs mode=pl.SplitMode.NONE only"):
        run_host(parse_module(source), "Forms", "host", 1, [np.zeros((1, S), np.float32)])


@pytest.mark.parametrize("op, args, kwargs, message", [
    ("pld.tensor.window", (1,), {"dtype": 2}, "missing argument `shape`"),
    ("pld.tensor.window", (1, 2, 3), {"dtype": 2}, "at most 2 positional arguments"),
    ("pld.tensor.window", (1, 2), {}, "missing argument `dtype`"),
    ("pld.tensor.allreduce", (1,), {"bogus": 2}, "unexpected keyword `bogus=`"),
    ("pld.tensor.allreduce", (1,), {"target": 2}, "`target` both positionally and as target="),
    ("pld.system.world_size", (1,), {}, "at most 0 positional arguments"),
])
def test_signature_binding_refusals(op, args, kwargs, message):
    with pytest.raises(InterpError, match=message):
        OPS[op].bind(args, kwargs)


def test_binding_fills_defaults_and_the_table_derives_its_views():
    bound = OPS["pld.tensor.allreduce"].bind(["data"], {})
    assert bound == {"target": "data", "signal": None, "op": "Sum", "mode": "mesh", "core_num": 1}
    assert OPS["pl.yield_"].bind([1, 2], {}) == {"values": (1, 2)}
    assert HOST_ONLY == {"pld.tensor.alloc_window_buffer", "pld.system.world_size"}
    assert RETURNS_ARGUMENT["pl.store"] == 2 and RETURNS_ARGUMENT["pld.tensor.allgather"] == 1
    assert LINEAGE_ARGUMENT["pld.tensor.window"] == 0 and "pl.store" not in LINEAGE_ARGUMENT
    assert all(spec.run is not None for name, spec in OPS.items() if name != "pl.tensor.assemble")
