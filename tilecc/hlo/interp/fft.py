"""The fft step: XLA CPU's FFT, IFFT, RFFT and IRFFT over the last len(fft_length)
dimensions (attributes and shapes: tilecc.hlo.op_configs.fft_config).

Contract: the result is numpy.fft's transform of the same type (fftn, ifftn, rfftn,
irfftn with s=fft_length) over those axes: unnormalised forward transforms, inverse ones
scaled by 1 / prod(fft_length) (XLA CPU passes that scale to ducc); IRFFT reads the last
dimension's n/2+1 coefficients as the half spectrum of a real signal of length n (the
imaginary parts of the zero and n/2 terms are ignored). An empty operand gives an empty
result.
Precision: numpy computes in double, rounded once to the result type. For c128 / f64 that
equals XLA CPU (ducc in double, measured bit for bit on random values). For c64 / f32 XLA
CPU computes in single precision, so its result differs by its own rounding: measured at
most 0.65 of the oracle tests' bound (rtol 2e-6, atol 1e-6) for lengths up to 100, and over
it for lengths near 1000 (where any two single-precision FFTs differ by more).
Refused: an FFT / IFFT whose fft_length is not its transformed dimensions (XLA CPU then
computes a transform of another size into part of the result and leaves the rest
undefined, or aborts).
"""

from __future__ import annotations

import numpy as np

from tilecc.errors import InterpError
from tilecc.hlo.interp.values import Operands, Lanes, Runner, Step, Value
from tilecc.hlo.ir import HloInstruction
from tilecc.hlo.op_configs import fft_config
from tilecc.hlo.types import numpy_dtype


def fft_step(runner: Runner, inst: HloInstruction) -> Step:
    try:
        config = fft_config(inst)
    except ValueError as err:
        raise InterpError(f"{inst.name} (fft): {err}") from None
    x, lengths, axes = inst.operands[0].shape, config.lengths, config.axes
    if config.fft_type in ("FFT", "IFFT") and x.dims[-len(lengths):] != lengths:
        raise InterpError(f"{inst.name} (fft): fft_length {{{','.join(map(str, lengths))}}} "
                          f"is not the transformed dimensions of {x.to_text()}: XLA CPU "
                          "leaves such a result undefined")
    dims, dtype = inst.shape.dims, numpy_dtype(inst.shape.element_type)
    empty = inst.shape.element_count() == 0 or x.element_count() == 0
    wide = np.float64 if config.fft_type == "RFFT" else np.complex128
    transform = {
        "FFT": lambda v: np.fft.fftn(v, axes=axes),
        "IFFT": lambda v: np.fft.ifftn(v, axes=axes),
        "RFFT": lambda v: np.fft.rfftn(v, axes=axes),
        "IRFFT": lambda v: np.fft.irfftn(v, s=lengths, axes=axes),
    }[config.fft_type]

    def step(a: Operands, d: Lanes) -> Value:
        if empty:
            return np.zeros((d.count,) + dims, dtype)
        return transform(a[0].astype(wide)).astype(dtype)
    return step
