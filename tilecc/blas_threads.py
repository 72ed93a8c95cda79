"""One BLAS thread while the BIR simulator runs a kernel's instructions.

Contract: `one_blas_thread()` is a context manager under which numpy's BLAS (OpenBLAS, MKL,
BLIS: whatever threadpoolctl finds loaded) uses one thread; the previous limits come back
on exit, so a program that imports tilecc keeps its own settings outside a simulation.

Why: a NeuronCore matmul is at most a [128, 128] x [128, 512] product per instruction, which
one core computes in about 0.3 ms; BLAS threads gain little there, but on a machine whose
cores are busy (a loaded CI runner, several test workers) OpenBLAS's spinning threads made
each such product 80-150x slower (57 ms against 0.7 ms measured at load 16 on 2 cores), and
published attention kernels ran into test timeouts. Entering the context costs about 0.5 ms
(threadpoolctl looks up the loaded libraries), once per simulation, not per instruction.
The KLR interpreter needs none: it sums its matmuls one contraction row at a time.
"""

from __future__ import annotations

from contextlib import AbstractContextManager

from threadpoolctl import threadpool_limits


def one_blas_thread() -> AbstractContextManager[object]:
    """BLAS limited to one thread inside the `with` block; see the module contract."""
    return threadpool_limits(limits=1, user_api="blas")
