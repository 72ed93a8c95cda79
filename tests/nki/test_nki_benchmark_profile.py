"""nki.benchmark / nki.profile and `tilecc run --stats / --profile`: estimates from the
documented cost model (tilecc/sim/profile.py), said to be estimates."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import tilecc.nki as nki
import tilecc.nki.language as nl
from tilecc.cli import main
from tilecc.errors import TileccError

SOFTMAX = Path(__file__).resolve().parents[2] / "examples" / "kernels" / "softmax_row.py"


def double(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    nl.store(out, value=nl.multiply(t, 2.0))
    return out


A = np.arange(128 * 64, dtype=np.float32).reshape(128, 64)


def test_benchmark_result_gives_the_estimated_latency_percentiles(capsys):
    bench = nki.benchmark(warmup=5, iters=10)(double)
    np.testing.assert_array_equal(bench(A), 2 * A)
    latency = bench.benchmark_result.nc_latency
    # two DMAs of 32 KiB and one tensor_scalar of 64 elements per partition, in sequence
    cycles = 2 * (2000 + 128 * 64 * 4 / 64.0) + 64
    assert latency.get_latency_percentile(50) == latency.get_latency_percentile(99) == pytest.approx(cycles / 1400)
    assert "not hardware measurements" in capsys.readouterr().out
    with pytest.raises(TileccError, match="a percentile is 0..100"):
        latency.get_latency_percentile(101)


def test_profile_writes_a_trace_into_its_working_directory(tmp_path, capsys):
    prof = nki.profile(working_directory=tmp_path / "profiles", save_neff_name="file.neff",
                       save_trace_name="profile.ntff", profile_nth=2)(double)
    np.testing.assert_array_equal(prof(A), 2 * A)
    doc = json.loads((tmp_path / "profiles" / "profile.json").read_text())
    names = [e["name"] for e in doc["traceEvents"] if e["ph"] == "X"]
    assert names == ["nl.load test_nki_benchmark_profile.py:22", "nl.multiply test_nki_benchmark_profile.py:23",
                     "nl.store test_nki_benchmark_profile.py:23"]
    assert "estimated" in capsys.readouterr().out


def test_run_prints_stats_and_writes_a_profile(tmp_path, capsys):
    np.save(tmp_path / "a.npy", np.random.default_rng(0).random((128, 64), np.float32))
    trace = tmp_path / "trace.json"
    assert main(["run", f"{SOFTMAX}:softmax_row", "--input", f"a={tmp_path / 'a.npy'}",
                 "--out", str(tmp_path / "o"), "--stats", "--profile", str(trace)]) == 0
    out = capsys.readouterr().out
    assert "  DMA in                 32768" in out and "  SBUF                   " in out
    assert "estimated time: " in out and "not hardware measurements" in out
    tracks = {e["args"]["name"] for e in json.loads(trace.read_text())["traceEvents"]
              if e.get("name") == "thread_name"}
    assert {"DMA in", "DMA out", "Vector Engine (DVE)"} <= tracks


def test_stats_are_refused_for_hlo_modules(tmp_path, capsys):
    hlo = tmp_path / "m.hlo"
    hlo.write_text("HloModule m\nENTRY e { ROOT p = f32[2] parameter(0) }\n")
    assert main(["run", str(hlo), "--out", str(tmp_path / "o"), "--stats"]) == 1
    assert "apply to kernels" in capsys.readouterr().err
