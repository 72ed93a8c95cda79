"""`tilecc hlo-opt --verify` on jax modules that cannot run as they are: the one-line error
says why and what to run instead (a module lowered before SPMD partitioning, XLA's scheduled
post-optimization dump); identity sharding annotations run; `--input` gives the values
random ones cannot (a loop bound)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tilecc.cli import main

# jax's shard_map before partitioning: Shardy's markers around the per-device body
SHARDY = """HloModule jit_body, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["i"=8]>}}

add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = s32[] add(a, b)
}

ENTRY main {
  x = s32[8] parameter(0)
  local = s32[1] custom-call(x), custom_call_target="xla.sdy.GlobalToLocalShape"
  s = s32[] reshape(local)
  ps = s32[] all-reduce(s), channel_id=1, replica_groups={{0,1,2,3,4,5,6,7}}, use_global_device_ids=true, to_apply=add
  r = s32[1] reshape(ps)
  ROOT g = s32[8] custom-call(r), custom_call_target="xla.sdy.LocalToGlobalShape"
}
"""

# XLA CPU's scheduled output: layouts assigned, which XLA does not compile a second time
SCHEDULED = """HloModule jit_f, is_scheduled=true, replica_count=2

add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = s32[] add(a, b)
}

ENTRY main {
  x = s32[1]{0} parameter(0)
  s = s32[] bitcast(x)
  ROOT ps = s32[] all-reduce(s), replica_groups={{0,1}}, to_apply=add
}
"""
PASSES = "--passes=decompose-int-all-reduce,decompose-scalar-reduce"


def run(tmp_path: Path, text: str, *flags: str) -> int:
    source = tmp_path / "in.hlo"
    source.write_text(text)
    return main(["hlo-opt", str(source), PASSES, "-o", str(tmp_path / "out.hlo"), *flags])


@pytest.mark.parametrize("oracle", ["interpreter", "xla"])
def test_unpartitioned_module_names_the_marker_and_the_dump_to_use(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], oracle: str) -> None:
    assert run(tmp_path, SHARDY, f"--oracle={oracle}") == 1
    err = capsys.readouterr().err
    assert "custom_call_target=xla.sdy.GlobalToLocalShape" in err
    assert "before SPMD partitioning" in err and "spmd-partitioner" in err
    assert err.count("\nerror:") + err.startswith("error:") == 1
    assert not (tmp_path / "out.hlo").exists()


@pytest.mark.oracle
def test_scheduled_module_on_xla_says_why(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert run(tmp_path, SCHEDULED, "--oracle=xla") == 1
    err = capsys.readouterr().err
    assert "post-optimization form" in err and "--oracle=interpreter" in err
    # the interpreter runs the same scheduled module, and the pass keeps its meaning
    assert run(tmp_path, SCHEDULED, "--verify") == 0
    assert "output 0: equal" in capsys.readouterr().err


@pytest.mark.oracle
def test_identity_sharding_annotations_run_on_both_oracles(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A plain jit with NamedSharding, lowered before partitioning, holds only annotations
    that XLA CPU runs as the identity: both oracles run it (the global program)."""
    text = """HloModule jit_f

max {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = s32[] maximum(a, b)
}

ENTRY main {
  x = s32[128,4] parameter(0), sharding={devices=[4,1]<=[4]}
  s = s32[128,4] custom-call(x), custom_call_target="Sharding", sharding={devices=[4,1]<=[4]}
  low = s32[] constant(-2147483648)
  m = s32[] reduce(s, low), dimensions={0,1}, to_apply=max
  ROOT r = s32[] custom-call(m), custom_call_target="Sharding", sharding={replicated}
}
"""
    for oracle in ("interpreter", "xla"):
        assert run(tmp_path, text, f"--oracle={oracle}") == 0
        err = capsys.readouterr().err
        assert "decompose-scalar-reduce: changed" in err and "output 0: equal" in err


# A while loop whose trip count is a parameter: random s32 values would run for hours.
LOOP = """HloModule loop

max {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = s32[] maximum(a, b)
}

cond {
  s = (s32[], s32[], s32[128,2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  s = (s32[], s32[], s32[128,2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  v = s32[128,2] get-tuple-element(s), index=2
  one = s32[] constant(1)
  j = s32[] add(i, one)
  w = s32[128,2] broadcast(j), dimensions={}
  u = s32[128,2] add(v, w)
  ROOT t = (s32[], s32[], s32[128,2]) tuple(j, n, u)
}

ENTRY main {
  bound = s32[] parameter(0)
  x = s32[128,2] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], s32[], s32[128,2]) tuple(zero, bound, x)
  loop = (s32[], s32[], s32[128,2]) while(init), condition=cond, body=body
  i = s32[] get-tuple-element(loop), index=0
  v = s32[128,2] get-tuple-element(loop), index=2
  low = s32[] constant(-2147483648)
  m = s32[] reduce(v, low), dimensions={0,1}, to_apply=max
  ROOT r = (s32[], s32[]) tuple(i, m)
}
"""


def test_verify_takes_given_inputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import numpy as np

    bound = tmp_path / "n.npy"
    np.save(bound, np.int32(7))
    assert run(tmp_path, LOOP, "--verify=2", f"--input=bound={bound}") == 0
    err = capsys.readouterr().err
    assert "decompose-scalar-reduce: changed" in err and "output 1: equal" in err
    outputs = tmp_path / "outs"
    # the given value reaches the module: the loop runs exactly that many trips
    assert main(["run", str(tmp_path / "in.hlo"), f"--input=p0={bound}", "--replicas=2",
                 "--out", str(outputs)]) == 0
    assert np.load(outputs / "out0.npy").tolist() == [7, 7]
    capsys.readouterr()
    assert run(tmp_path, LOOP, f"--input=bound={bound}") == 1
    assert "add --verify or --oracle" in capsys.readouterr().err
    assert run(tmp_path, LOOP, "--verify", f"--input=k={bound}") == 1
    assert "no parameter of that name or number (parameters: bound (p0), x (p1))" in \
        capsys.readouterr().err
