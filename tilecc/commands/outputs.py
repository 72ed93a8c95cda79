"""Writing the arrays a command produced (`--out DIR`, `--save-inputs DIR`) with one summary
line each.

Contract: `write_results(folder, arrays, option)` writes `folder/<name>.npy` per array
(tilecc.fileio.write_npy_outputs: atomic, names checked) and prints
`folder/<name>.npy: dtype[shape] min .. max, mean M` -- for floats also the count of NaN
and inf elements when there are any; booleans count the true elements; an empty array
says so. `-` is refused: the arrays go to files in a folder, never to stdout (before,
a folder named `-` was created).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from tilecc.errors import TileccError
from tilecc.fileio import write_npy_outputs


def write_results(folder: str, arrays: Iterable[tuple[str, np.ndarray]],
                  option: str = "--out") -> None:
    refuse_stdout(folder, option)
    write_npy_outputs(folder, arrays, describe=summarize)


def refuse_stdout(folder: str | None, option: str) -> None:
    """Checked before any work too, so `--out -` fails at once."""
    if folder == "-":
        raise TileccError(f"{option} -: expected a folder for the .npy files (they are not "
                          f"written to stdout)")


def summarize(array: np.ndarray) -> str:
    if array.size == 0:
        return "(empty)"
    if array.dtype.kind == "b":
        return f"{int(np.count_nonzero(array))} of {array.size} true"
    if array.dtype.kind not in "iufc":   # bfloat16 / fp8 (ml_dtypes) are compared as f64
        array = array.astype(np.float64)
    if array.dtype.kind == "c":
        return f"|z| max {float(np.abs(array).max()):.6g}"
    if array.dtype.kind in "iu":
        return f"min {array.min()} max {array.max()} mean {float(array.mean(dtype=np.float64)):.6g}"
    wide = array.astype(np.float64)
    finite = wide[np.isfinite(wide)]
    text = (f"min {finite.min():.6g} max {finite.max():.6g} mean {finite.mean():.6g}"
            if finite.size else "no finite element")
    nan, inf = int(np.isnan(wide).sum()), int(np.isinf(wide).sum())
    special = ", ".join(f"{n} {what}" for n, what in ((nan, "NaN"), (inf, "inf")) if n)
    return f"{text} ({special})" if special else text
