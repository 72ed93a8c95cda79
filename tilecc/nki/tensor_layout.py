"""The layout rules of a traced tensor: a view axis (`Dim`), the partition count and the
per-partition capacities of SBUF and PSUM, and the check a new allocation must pass.

Invariants: an on-chip tensor has at most PMAX (128) partitions, and its free elements fit
one partition of its buffer (SBUF_PARTITION_BYTES / PSUM_PARTITION_BYTES, klr-bir.md
"Memory"); HBM tensors have neither limit. A Dim is (step, num) over elements, or over
partitions when `is_par` (on-chip views only). Plain data: this module imports nothing
above tilecc/nki/dtypes.py and errors.py; tilecc.nki.tensor re-exports its names.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilecc.nki.dtypes import dtype_info
from tilecc.nki.errors import kernel_error

PMAX = 128
SBUF_PARTITION_BYTES = 0x30000   # 192 KiB per partition (klr-bir.md, Memory)
PSUM_PARTITION_BYTES = 0x4000    # 16 KiB per partition


@dataclass(frozen=True, slots=True)
class Dim:
    step: int
    num: int
    is_par: bool = False   # steps over partitions (on-chip views only)


def check_allocation(shape: tuple[int, ...], dtype: str, buffer: str, par_axis: int) -> None:
    """The partition and capacity limits of an on-chip tensor (partition dim <= 128)."""
    if any(not isinstance(size, int) or size <= 0 for size in shape):
        raise kernel_error(f"tensor shape {shape} must be positive integers")
    if buffer == "hbm":
        return
    if shape[par_axis] > PMAX:
        raise kernel_error(f"partition dimension {shape[par_axis]} of a {buffer} tensor {shape} "
                           f"exceeds {PMAX} (nl.tile_size.pmax)")
    free = 1
    for axis, size in enumerate(shape):
        if axis != par_axis:
            free *= size
    limit = SBUF_PARTITION_BYTES if buffer == "sbuf" else PSUM_PARTITION_BYTES
    if free * dtype_info(dtype).size > limit:
        raise kernel_error(f"{buffer} tensor {shape} {dtype} needs {free * dtype_info(dtype).size} "
                           f"bytes per partition; a {buffer} partition holds {limit}")
