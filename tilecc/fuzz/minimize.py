"""Shrinking a failing fuzz case to a small reproduction.

Contract: `minimize(case, run, klass, budget)` returns a Case whose files are no larger
than `case`'s and that `run` still classifies as `klass`: each mutable file is cut down
by delta debugging, first by lines, then by characters, trying to delete chunks of
halving size; at most `budget` runs are spent. Files are shrunk one at a time and the
command line is kept, so the result reads as "this file, this command".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from tilecc.fuzz.runner import Case, Outcome


def minimize(case: Case, run: Callable[[Case], Outcome], klass: str, names: list[str],
             budget: int = 200) -> Case:
    spent = 0

    def still_fails(files: dict[str, bytes]) -> bool:
        nonlocal spent
        spent += 1
        return run(dataclasses.replace(case, files=files)).klass == klass

    files = dict(case.files)
    for name in names:
        for split in (_lines, _chars):
            parts = split(files[name])
            chunk = max(1, len(parts) // 2)
            while chunk >= 1 and spent < budget:
                i, removed = 0, False
                while i < len(parts) and spent < budget:
                    trial = parts[:i] + parts[i + chunk:]
                    if still_fails({**files, name: b"".join(trial)}):
                        parts, removed = trial, True
                    else:
                        i += chunk
                files[name] = b"".join(parts)
                if not removed:
                    chunk //= 2
    return dataclasses.replace(case, files=files)


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def _chars(data: bytes) -> list[bytes]:
    return [data[i:i + 1] for i in range(len(data))]
