"""Both passes on every real jax / XLA dump (tests/fixtures/hlo, programs/ included).

For each fixture: hlo-opt's pipeline (verifier before and after each pass) rewrites it, the
printed result parses back to the same structure and prints stably. The oracle tests check
that XLA's parser reads every rewritten module, that XLA's compiler accepts every rewritten
module whose original it compiles, and that the rewritten per-device modules compute what
the originals compute on XLA (integer wrap-around included).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from tilecc.hlo.ir import HloModule
from tilecc.hlo.opcodes import HloOpcode
from tilecc.hlo.parser import parse_module
from tilecc.hlo.printer import print_module
from tilecc.hlo.random_inputs import random_inputs
from tilecc.hlo.xla import XlaJob, run_many_on_xla
from tilecc.passes.pass_base import build_pipeline

FIXTURES = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "hlo").rglob("*.hlo"))
PASSES = ["decompose-int-all-reduce", "decompose-scalar-reduce"]
# XLA parses it but its verifier refuses it (the async computation two_step holds two
# instructions; tests/hlo/test_roundtrip.py checks tilecc's verifier says so): the passes run
# on it unverified, which still exercises scheduled order, async ops and tiled layouts.
UNVERIFIABLE = {"xla_features.long.hlo"}


def summary(module: HloModule) -> list:
    """Computations, instructions (by name: the printer orders them def-before-use),
    opcodes, shapes, operands and typed attributes."""
    return [(c.name, c is module.entry, c.root.name if c.root else None,
             sorted([(i.name, i.opcode, i.shape, [o.name for o in i.operands], i.dimensions,
               i.slice_starts, i.slice_limits, i.replica_groups, i.channel_id,
               i.use_global_device_ids, i.metadata, [x.name for x in i.called_computations()])
              for i in c], key=lambda row: row[0])) for c in module.computations]


@lru_cache(maxsize=None)  # each fixture is rewritten once per session; nothing mutates it
def rewrite(path: Path) -> tuple[HloModule, str, bool]:
    module = parse_module(path.read_text(), str(path))
    results = build_pipeline(PASSES, verify=path.name not in UNVERIFIABLE).run(module)
    return module, print_module(module), any(changed for _, changed in results)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_passes_leave_a_valid_module(path: Path) -> None:
    module, printed, _ = rewrite(path)
    again = parse_module(printed, f"{path.name} after hlo-opt")
    assert summary(again) == summary(module)
    assert print_module(again) == printed


def test_passes_fire_on_the_integer_programs() -> None:
    """The integer psums and scalar reductions of the varied programs are rewritten: no
    all-reduce(add) of an s32 / u32 scalar and no 128-divisible integer max / min / and / or
    scalar reduce is left."""
    changed = {p.name for p in FIXTURES if rewrite(p)[2]}
    for name in ("int_psum_scalars.spmd.hlo", "int_psum_partitions.spmd.hlo",
                 "mesh2d_reductions.spmd.hlo", "pmap_program.spmd.hlo",
                 "bool_reductions.short.hlo", "int8_quant_dequant.long.hlo",
                 "where_clip_intdiv.debug.hlo", "xla_features.long.hlo"):
        assert name in changed, name
    assert len(changed) >= 40


def test_cross_partition_int_psum_gathers_every_partition() -> None:
    """int_psum_partitions (2x2 mesh): each psum's all-gather holds 2 lanes per participant
    of its group mode, and its channel / id flags are the all-reduce's."""
    path = next(p for p in FIXTURES if p.name == "int_psum_partitions.spmd.hlo")
    before = parse_module(path.read_text())
    reduces = [i for c in before.computations for i in c if i.opcode is HloOpcode.ALL_REDUCE]
    module, _, _ = rewrite(path)
    gathers = [i for c in module.computations for i in c if i.opcode is HloOpcode.ALL_GATHER]
    assert len(gathers) == len(reduces) == 3
    for ar, ag in zip(reduces, gathers):
        groups = ar.replica_groups.groups()
        expected = len(groups[0]) * (module.num_partitions if ar.channel_id is not None
                                     and not ar.use_global_device_ids else 1)
        assert ag.shape.dims == (2 * expected,)
        assert (ag.channel_id, ag.use_global_device_ids) == (ar.channel_id,
                                                              ar.use_global_device_ids)


def test_scheduled_module_with_async_ops_and_tiled_layouts() -> None:
    """xla_features (is_scheduled, async collectives, sugared async ops, tiled layouts):
    the u32[1,1] psum over channel 4 without global ids gathers 2 lanes x 2 replicas x 2
    partitions; the async all-reduce-start is not an all-reduce and stays."""
    path = next(p for p in FIXTURES if p.name == "xla_features.long.hlo")
    module, printed, changed = rewrite(path)
    assert changed
    assert "u32[8]{0} all-gather(" in printed and "all-reduce-start(" in printed
    assert " all-reduce(" not in printed and "negate-start(" in printed
    assert "s32[128]{0} reduce(" in printed


@pytest.mark.oracle
def test_xla_parses_and_compiles_the_rewritten_fixtures() -> None:
    jobs: list[XlaJob] = []
    changed_paths: list[Path] = []
    for path in FIXTURES:
        module, printed, changed = rewrite(path)
        jobs.append(XlaJob("parse", printed))
        if changed and path.name not in UNVERIFIABLE:
            changed_paths.append(path)
            cfg = (module.replica_count, module.num_partitions)
            jobs.append(XlaJob("compile", path.read_text(), [], *cfg))
            jobs.append(XlaJob("compile", printed, [], *cfg))
    results = run_many_on_xla(jobs)
    parses = [r for j, r in zip(jobs, results) if j.kind == "parse"]
    assert [(p.name, r) for p, r in zip(FIXTURES, parses) if r is not None] == []
    compiles = [r for j, r in zip(jobs, results) if j.kind == "compile"]
    compiled = 0
    for path, original, rewritten in zip(changed_paths, compiles[0::2], compiles[1::2]):
        if original is None:  # XLA compiles the original: it must compile the rewrite too
            assert rewritten is None, f"{path.name}: {rewritten}"
            compiled += 1
    assert compiled >= 25


@pytest.mark.oracle
def test_rewritten_per_device_modules_compute_the_same_on_xla() -> None:
    """spmd dumps (runnable per-device modules, integer psums of extreme values) and the
    single-device programs the passes change: original and rewrite give equal results."""
    cases = []
    for path in FIXTURES:
        if not path.name.endswith((".spmd.hlo", ".short.hlo")):
            continue
        text = path.read_text()
        if " custom-call(" in text:
            continue
        module, printed, changed = rewrite(path)
        if changed:
            cases.append((path, text, printed, module.replica_count, module.num_partitions))
    assert len(cases) >= 12
    jobs = []
    for _, text, printed, replicas, partitions in cases:
        inputs = random_inputs(parse_module(text), replicas, seed=7, partitions=partitions)
        jobs += [XlaJob("run", t, inputs, replicas, partitions) for t in (text, printed)]
    results = run_many_on_xla(jobs)
    ran = 0
    for (path, *_), before, after in zip(cases, results[0::2], results[1::2]):
        if isinstance(before, Exception):  # e.g. partition-id with several partitions
            continue
        assert not isinstance(after, Exception), f"{path.name}: {after}"
        assert len(before) == len(after)
        for b, a in zip(before, after):
            np.testing.assert_array_equal(a, b, err_msg=path.name)
        ran += 1
    assert ran >= 10
