"""SPMD HLO on MPI (tilecc/hlo/interp_mpi.py): the devices of every SPMD fixture spread
over 3 processes (uneven blocks, groups crossing processes) give the single-process
results bit for bit, and XLA's on the fixtures XLA runs; `mpiexec tilecc run` writes the
same files as `tilecc run`. Every launch is bounded by a timeout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tilecc.errors import TileccError
from tilecc.hlo.interpreter import evaluate_module
from tilecc.hlo.parser import parse_module
from tilecc.hlo.random_inputs import random_inputs
from tilecc.mpi_launch import mpi_environment, mpiexec_path, run_mpi

pytestmark = [pytest.mark.mpi,
              pytest.mark.skipif(mpiexec_path() is None, reason="mpiexec not installed (test extra: mpich)")]
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hlo"
DRIVER = str(Path(__file__).with_name("mpi_hlo_driver.py"))
LIMIT = 180
SEED = 3
# four devices in two interleaved groups, across the process blocks {0, 1}, {2}, {3}
MIXED = """\
HloModule mixed, replica_count=4

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  x = f32[6] parameter(0)
  i = s32[4] parameter(1)
  ar = f32[6] all-reduce(x), replica_groups={{0,2},{3,1}}, to_apply=add
  rs = f32[3] reduce-scatter(x), replica_groups={{1,0},{2,3}}, dimensions={0}, to_apply=add
  ag = s32[8] all-gather(i), replica_groups={{0,3},{1,2}}, dimensions={0}
  cp = f32[6] collective-permute(x), source_target_pairs={{0,3},{3,1},{1,0}}
  aa = s32[4] all-to-all(i), replica_groups={{0,1,2,3}}, dimensions={0}
  id = u32[] replica-id()
  ROOT t = (f32[6], f32[3], s32[8], f32[6], s32[4], u32[]) tuple(ar, rs, ag, cp, aa, id)
}
"""
XLA_CHECKED = ("psum_max.spmd.hlo", "psum_s32_4dev.spmd.hlo", "psum_s32_8dev.spmd.hlo",
               "collectives_mix.spmd.hlo", "psum_scatter_reduce.spmd.hlo", "mixed.hlo")


def single_process(path: Path) -> list[np.ndarray] | str:
    module = parse_module(path.read_text(), path.name)
    try:
        inputs = random_inputs(module, module.replica_count, SEED, module.num_partitions)
        return evaluate_module(module, inputs, module.replica_count, module.num_partitions)
    except TileccError as err:
        return str(err)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mpi_hlo")
    (folder / "mixed.hlo").write_text(MIXED)
    files = sorted(FIXTURES.rglob("*.spmd.hlo")) + [folder / "mixed.hlo"]
    result = run_mpi(3, [sys.executable, DRIVER, str(folder), str(SEED), *map(str, files)], LIMIT)
    assert result.returncode == 0, result.stderr
    return folder, files


def test_mpi_run_equals_single_process_bit_for_bit(runs):
    folder, files = runs
    compared = 0
    for path in files:
        refused = folder / f"{path.name}.error"
        if refused.exists() and refused.read_text().startswith("3 processes for"):
            module = parse_module(path.read_text(), path.name)
            assert module.replica_count * module.num_partitions < 3, path.name
            continue
        want = single_process(path)
        if isinstance(want, str):   # the same refusal, word for word
            assert (folder / f"{path.name}.error").read_text() == want, path.name
            continue
        got = np.load(folder / f"{path.name}.npz")
        assert len(got.files) == len(want), path.name
        for k, w in enumerate(want):
            g = got[f"out{k}"]
            assert g.dtype == w.dtype and g.shape == w.shape, f"{path.name} out{k}"
            assert g.tobytes() == np.ascontiguousarray(w).tobytes(), f"{path.name} out{k}"
        compared += 1
    assert compared >= 8


@pytest.mark.oracle
def test_mpi_run_equals_xla(runs):
    from tilecc.hlo.xla import XlaJob, run_many_on_xla
    folder, files = runs
    chosen = [p for p in files if p.name in XLA_CHECKED]
    assert len(chosen) == len(XLA_CHECKED)
    jobs = []
    for path in chosen:
        module = parse_module(path.read_text(), path.name)
        jobs.append(XlaJob("run", path.read_text(), random_inputs(module, module.replica_count, SEED,
                                                                  module.num_partitions),
                           module.replica_count, module.num_partitions))
    for path, want in zip(chosen, run_many_on_xla(jobs)):
        if isinstance(want, Exception):
            raise want
        got = np.load(folder / f"{path.name}.npz")
        for k, w in enumerate(want):
            np.testing.assert_allclose(got[f"out{k}"].astype(np.float64), w.astype(np.float64), rtol=2e-6,
                                       atol=1e-6, err_msg=f"{path.name} out{k}")


def test_mpiexec_tilecc_run_writes_the_same_files(tmp_path):
    module = FIXTURES / "collectives_mix.spmd.hlo"
    cli = [sys.executable, "-m", "tilecc.cli", "run", str(module), "--replicas", "1", "--seed", "5"]
    single = subprocess.run([*cli, "--out", str(tmp_path / "a")], capture_output=True, text=True,
                            timeout=LIMIT, env=mpi_environment())
    spread = run_mpi(2, [*cli, "--out", str(tmp_path / "b")], LIMIT)
    assert single.returncode == 0 and spread.returncode == 0, single.stderr + spread.stderr
    files = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert files == sorted(p.name for p in (tmp_path / "b").iterdir()) and len(files) == 6
    for name in files:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


TUPLE_SPMD = """HloModule tuple_spmd, num_partitions=4

add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}

ENTRY e {
  t = (s32[3], (f32[2], token[])) parameter(0)
  x = s32[3] get-tuple-element(t), index=0
  ROOT r = s32[3] all-reduce(x), replica_groups={{0,1,2,3}}, to_apply=add, channel_id=1, use_global_device_ids=true
}
"""


def test_mpiexec_run_saves_and_reads_the_inputs_of_the_single_process_run(tmp_path):
    (tmp_path / "m.hlo").write_text(TUPLE_SPMD)
    cli = [sys.executable, "-m", "tilecc.cli", "run", "m.hlo", "--partitions", "4", "--seed", "2"]
    single = subprocess.run([*cli, "--save-inputs", "ia", "--out", "a"], capture_output=True,
                            text=True, timeout=LIMIT, env=mpi_environment(), cwd=tmp_path)
    spread = run_mpi(2, [*cli, "--save-inputs", "ib", "--out", "b"], LIMIT, cwd=tmp_path)
    assert single.returncode == 0 and spread.returncode == 0, single.stderr + spread.stderr
    assert spread.stdout == single.stdout.replace("ia/", "ib/").replace("a/", "b/")
    for folder in ("i", ""):
        names = sorted(p.name for p in (tmp_path / f"{folder}a").iterdir())
        assert names == (["t.0.npy", "t.1.0.npy"] if folder else ["out0.npy"])
        for name in names:
            assert ((tmp_path / f"{folder}a" / name).read_bytes()
                    == (tmp_path / f"{folder}b" / name).read_bytes())
    x = np.load(tmp_path / "ia" / "t.0.npy")
    assert x.shape == (4, 3)   # 1 replica x 4 partitions, the device axis first
    # the saved leaves given back under MPI give the same run
    again = run_mpi(2, [*cli, "--input", "t.0=ia/t.0.npy", "--input", "t.1.0=ia/t.1.0.npy",
                        "--out", "c"], LIMIT, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "c" / "out0.npy").read_bytes() == (tmp_path / "a" / "out0.npy").read_bytes()


def test_mpiexec_run_keeps_the_step_bound_of_the_single_process_run(tmp_path):
    module = FIXTURES / "collectives_mix.spmd.hlo"
    cli = [sys.executable, "-m", "tilecc.cli", "run", str(module), "--max-steps", "2",
           "--out", str(tmp_path / "o")]
    single = subprocess.run(cli, capture_output=True, text=True, timeout=LIMIT,
                            env=mpi_environment())
    spread = run_mpi(2, cli, LIMIT)
    assert single.returncode == spread.returncode == 1
    assert spread.stderr == single.stderr and "--max-steps" in single.stderr
    assert not (tmp_path / "o").exists()
