"""An NKI-compatible frontend: write kernels in Python, trace them to KLR, run them.

A kernel written against the public NKI API runs after changing its imports:

    import tilecc.nki as nki
    import tilecc.nki.isa as nisa
    import tilecc.nki.language as nl

    @nki.jit
    def kernel(a): ...

    out = nki.simulate(kernel)(a_numpy)      # trace -> KLR -> BIR -> simulator -> numpy
    out = kernel[2, 4](a_numpy)              # an SPMD launch grid: nl.program_id(0..1)

`trace_kernel` gives the KLR Kernel without running it; `supported()` lists what is implemented. Errors in a kernel are KernelError
(a ParseError located at the kernel's source line).
"""

from __future__ import annotations

from tilecc.nki import compiler, isa, language, typing
from tilecc.nki.estimates import benchmark, profile
from tilecc.nki.driver import (ArgSpec, JitKernel, TracedKernel, baremetal, jit, simulate,
                               simulate_kernel, trace, trace_kernel)
from tilecc.nki.errors import KernelError
from tilecc.nki.supported import supported

dtype = language.bfloat16.__class__   # `nki.dtype`: the type of nl.float32, nl.bfloat16 ...

__all__ = ["compiler", "isa", "language", "typing", "jit", "trace", "baremetal", "benchmark", "profile",
           "simulate", "simulate_kernel", "trace_kernel", "ArgSpec", "JitKernel", "TracedKernel",
           "KernelError", "supported", "dtype"]
