"""`tilecc run kernel.py:fn --html R.html [--check]` and `tilecc codegen K.klr.json --html R.html`.

Contract: `report_kernel_run(traced, arrays, outputs, html, check)` is called after a traced
kernel (its statements carry the tracer's source positions) ran on the BIR simulator with
`arrays` (by KLR input name); with `check` it runs the same KLR on the KLR reference
interpreter (an independent implementation) and prints one line per output on stderr
(equal, or how many elements differ and by how much); with `html` it writes the kernel
report page (tilecc.viz.kernel_views), the check and its picture included. Returns the exit
code: 2 when the check found a difference, else 0. `write_kernel_page(path, kernel)` is the
page of a KLR kernel alone (codegen). A page written without its layout engine prints that
note on stderr.
"""

from __future__ import annotations

import sys

import numpy as np

from tilecc.klr import ast as k
from tilecc.nki.driver import TracedKernel, run_traced
from tilecc.viz.kernel_views import Check, check_outputs, kernel_section
from tilecc.viz.page import write_page


def report_kernel_run(traced: TracedKernel, arrays: dict[str, np.ndarray],
                      outputs: list[np.ndarray], html: str | None, check: bool) -> int:
    result: Check | None = None
    if check:
        reference = run_traced(traced, arrays, backend="klr")
        names = [t.name for t in traced.kernel.outputs]
        result = check_outputs(list(zip(names, outputs, reference)), "KLR interpreter")
        for line in result.text.splitlines():
            print(f"check: {line}", file=sys.stderr)
    if html is not None:
        note = write_page(html, f"kernel {traced.kernel.name}",
                          [kernel_section(traced.kernel, result)])
        if note is not None:
            print(f"note: {note}", file=sys.stderr)
    return 2 if result is not None and not result.ok else 0


def write_kernel_page(path: str, kernel: k.Kernel) -> None:
    if (note := write_page(path, f"kernel {kernel.name}", [kernel_section(kernel)])):
        print(f"note: {note}", file=sys.stderr)
