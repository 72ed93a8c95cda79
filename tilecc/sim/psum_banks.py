"""PSUM banks: where a PSUM location may start so that a matmul output fits one bank.

Contract: PSUM is 8 banks of 2 KiB per partition (NKI arch guide, "PSUM"; the NKI ISA
reference's nc_matmul: the moving free size <= 512 "matching the maximum number of float32
elements per PSUM bank"). `bank_start(base, width)` is the first column >= `base` where a
location of `width` bytes per partition may live: inside one bank when it fits in one,
else at the start of a bank, so that every 2 KiB block of a larger location is a bank and
an access inside one block of it stays inside one bank (bir/verify_tensor_engine.py checks
that offset rule; the simulator checks the placed bytes).
"""

from __future__ import annotations

from tilecc.bir.inst_tensor_engine import PSUM_BANK_BYTES


def bank_start(base: int, width: int) -> int:
    bank = PSUM_BANK_BYTES
    if width <= bank and base // bank == (base + max(width, 1) - 1) // bank:
        return base
    return -(-base // bank) * bank


def bank_of(column: int) -> int:
    return column // PSUM_BANK_BYTES
