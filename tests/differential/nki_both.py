"""Running NKI kernels of the Vector / GpSimd family on both executors.

`both(kernel, *arrays)` traces the kernel, round-trips its KLR through KLR JSON, lowers,
verifies and round-trips the BIR through BIR JSON, simulates it, interprets the KLR, and
returns (simulator outputs, interpreter outputs) as dicts by position in the kernel's
return value, checked to have equal shapes and dtypes.
"""

from __future__ import annotations

import numpy as np

from tilecc.bir.json import read_program_json, write_program_json
from tilecc.bir.verifier import verify_program
from tilecc.codegen.klr_to_bir import codegen_kernel
from tilecc.klr.interp import interpret_kernel
from tilecc.klr.read import read_kernel_json, write_kernel_json
from tilecc.nki.driver import trace_kernel
from tilecc.sim.execute import simulate

import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


def both(kernel, *arrays):
    traced = trace_kernel(kernel, *arrays)
    klr = read_kernel_json(write_kernel_json(traced.kernel))
    assert klr == traced.kernel
    program = codegen_kernel(klr)
    verify_program(program)
    program = read_program_json(write_program_json(program))
    inputs = {t.name: np.asarray(a) for t, a in zip(klr.inputs, arrays)}
    sim_named, ref_named = simulate(program, inputs), interpret_kernel(klr, inputs)
    sim = {i: sim_named[name] for i, name in enumerate(traced.returned_names)}
    ref = {i: ref_named[name] for i, name in enumerate(traced.returned_names)}
    for i in sim:
        assert sim[i].dtype == ref[i].dtype and sim[i].shape == ref[i].shape
    return sim, ref


def load(a, dtype=None):
    tile = nl.ndarray(a.shape, dtype=a.dtype if dtype is None else dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=tile, src=a)
    return tile


def store(tile, name=""):
    out = nl.ndarray(tile.shape, dtype=tile.dtype, buffer=nl.shared_hbm, name=name)
    nisa.dma_copy(dst=out, src=tile)
    return out


def new(shape, dtype=nl.float32):
    return nl.ndarray(shape, dtype=dtype, buffer=nl.sbuf)
