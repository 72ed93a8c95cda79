"""The simulator runs its matmuls on one BLAS thread (tilecc/blas_threads.py) and gives the
process its own BLAS limits back afterwards."""

from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from test_diff_matmul import matmul_kernel, small_ints
from diff_kernels import F32


def blas_threads() -> list[int]:
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


def test_simulated_matmuls_run_on_one_blas_thread_and_the_limit_is_given_back(monkeypatch):
    seen: list[list[int]] = []
    real = np.matmul

    def spy(*args, **kwargs):
        seen.append(blas_threads())
        return real(*args, **kwargs)

    rng = np.random.default_rng(4)
    kb = matmul_kernel(small_ints(F32, (16, 8), rng), small_ints(F32, (16, 8), rng), F32)
    with threadpool_limits(limits=2, user_api="blas"):
        monkeypatch.setattr(np, "matmul", spy)
        sim, ref = kb.run()
        monkeypatch.setattr(np, "matmul", real)
        after = blas_threads()
    np.testing.assert_array_equal(sim["out"], ref["out"])
    assert seen and all(threads == [1] * len(threads) for threads in seen)
    assert after == [2] * len(after) and after
