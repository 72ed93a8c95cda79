"""Verifier checks of MatMult / Transpose / DmaTranspose: one refusal per documented rule
and the PSUM bank rule; the simulator's placement keeps PSUM locations to their banks and
refuses a matmul whose placed output crosses one."""

from __future__ import annotations

import numpy as np
import pytest

from tilecc.bir import inst as b
from tilecc.bir.enums import BirDtype, EngineType, MemoryKind
from tilecc.bir.inst_tensor_engine import InstDmaTranspose, InstMatMult, InstTranspose
from tilecc.bir.verifier import verify_program
from tilecc.errors import SimError, VerifyError
from tilecc.sim.exec_tensor_engine import exec_matmult
from tilecc.sim.machine import Machine
from tilecc.sim.psum_banks import bank_start

F32, BF16, I32 = BirDtype.float32, BirDtype.bfloat16, BirDtype.int32


def loc(name, kind, dtype, parts, free):
    return b.MemoryLocation(name, kind, dtype, parts, free * {F32: 4, BF16: 2, I32: 4}[dtype])


def ap(name, dtype, parts, row, free, offset=0):
    return b.AccessPattern(name, dtype, offset, ((row, parts),) + tuple((1, n) for n in free))


def matmul_program(k=128, m=64, n=512, st_dtype=BF16, mv_dtype=BF16, dst_dtype=F32,
                   dst_row=512, dst_offset=0, dst_kind=MemoryKind.PSUM, **fields):
    locs = [loc("st", MemoryKind.SB, st_dtype, 128, 128), loc("mv", MemoryKind.SB, mv_dtype, 128, 1024),
            loc("acc", dst_kind, dst_dtype, 128, dst_row)]
    inst = InstMatMult("mm", EngineType.PE, [ap("st", st_dtype, k, 128, (m,)),
                                             ap("mv", mv_dtype, k, 1024, (n,))],
                       [ap("acc", dst_dtype, m, dst_row, (n,), dst_offset)], **fields)
    return b.Program("p", locs, [], [], [inst])


def test_a_valid_matmul_verifies():
    verify_program(matmul_program())
    verify_program(matmul_program(dst_row=1024, dst_offset=512))      # the second bank
    verify_program(matmul_program(k=32, m=32, tile_row=96, tile_rows=32, tile_col=32, tile_cols=32))


@pytest.mark.parametrize("program, message", [
    (matmul_program(dst_row=1024, dst_offset=256), r"cross a 2048-byte PSUM bank"),
    (matmul_program(dst_kind=MemoryKind.SB), r"dst must be in PSUM"),
    (matmul_program(n=513, dst_row=1024), r"moving free size 513 exceeds 512"),
    (matmul_program(m=129), r"free elements .* outside the row|stationary free size 129"),
    (matmul_program(st_dtype=F32), r"a tf32 / fp32 input needs a tf32 / fp32 partner"),
    (matmul_program(st_dtype=I32, mv_dtype=I32), r"stationary dtype int32 is not fp8"),
    (matmul_program(dst_dtype=I32), r"dst dtype int32 must be float32 or bfloat16"),
    (matmul_program(k=64, tile_rows=32), r"64 contraction partitions exceed the tile's 32 rows"),
    (matmul_program(tile_rows=48), r"tile row size 48 is not 32, 64 or 128"),
    (matmul_program(tile_row=32, tile_rows=64), r"tile start row 32 is not a multiple of 64"),
    (matmul_program(double_row=True), r"double_row needs a first free dim of 2"),
    (matmul_program(is_transpose=True), r"a transpose keeps the dtype"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_matmul_refusals(program, message):
    with pytest.raises(VerifyError, match=message):
        verify_program(program)


def test_transpose_refusals():
    locs = [loc("a", MemoryKind.SB, F32, 64, 64), loc("t", MemoryKind.SB, F32, 64, 64)]
    big = InstTranspose("tp", EngineType.DVE, [ap("a", F32, 64, 64, (32,))], [ap("t", F32, 32, 64, (64,))])
    with pytest.raises(VerifyError, match="at most 32 x 32"):
        verify_program(b.Program("p", locs, [], [], [big]))
    skew = InstTranspose("tp", EngineType.DVE, [ap("a", F32, 32, 64, (16,))], [ap("t", F32, 32, 64, (16,))])
    with pytest.raises(VerifyError, match="is not the transpose"):
        verify_program(b.Program("p", locs, [], [], [skew]))


def test_dma_transpose_refusals():
    locs = [loc("a", MemoryKind.SB, F32, 4, 6), loc("t", MemoryKind.SB, F32, 6, 4)]
    two_d = InstDmaTranspose("dt", EngineType.DMA, [ap("a", F32, 4, 6, (6,))], [ap("t", F32, 6, 4, (4,))],
                             permutation=((0, 1), (1, 0)))
    with pytest.raises(VerifyError, match="accesses are 4-d"):
        verify_program(b.Program("p", locs, [], [], [two_d]))
    wrong = InstDmaTranspose("dt", EngineType.DMA, [ap("a", F32, 4, 6, (6, 1, 1))],
                             [ap("t", F32, 6, 4, (4, 1, 1))], permutation=((0, 0), (1, 1), (2, 2), (3, 3)))
    with pytest.raises(VerifyError, match="is not the input permuted"):
        verify_program(b.Program("p", locs, [], [], [wrong]))


def test_psum_locations_keep_to_banks():
    assert bank_start(0, 64) == 0
    assert bank_start(64, 2048) == 2048          # a bank-sized tile never straddles two banks
    assert bank_start(1984, 64) == 1984 and bank_start(2000, 64) == 2048
    assert bank_start(64, 4096) == 2048          # larger than a bank: starts on one
    m = Machine()
    small = m.place(loc("s", MemoryKind.PSUM, F32, 128, 16))
    whole = m.place(loc("w", MemoryKind.PSUM, F32, 128, 512))
    assert (small.base, whole.base) == (0, 2048)


def test_simulator_refuses_a_placed_output_across_a_bank():
    m = Machine()
    program = matmul_program(n=256, dst_row=512, dst_offset=128)   # a 2 KiB location, placed
    # by hand at column 1024 (the machine would put it on a bank): bytes 1536..2559
    for location in program.memory_locations:
        m.place(location, 1024 if location.kind == MemoryKind.PSUM else None)
    m.view(program.instructions[0].ins[0], write=True)[...] = 1
    m.view(program.instructions[0].ins[1], write=True)[...] = 1
    with pytest.raises(SimError, match="across the 2048-byte bank boundary"):
        exec_matmult(m, program.instructions[0])
    assert np.all(m.view(program.instructions[0].ins[0], write=False) == 1)
