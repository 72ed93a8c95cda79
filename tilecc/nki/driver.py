"""Running a kernel: trace it to KLR, lower it to BIR, simulate it, return numpy arrays.

Contract: `trace_kernel(fn, *args, **kwargs)` calls the kernel function once with every
array-like argument (anything with .shape and .dtype: numpy arrays, `ArgSpec`) replaced by
an HBM input tensor named after its parameter, other arguments passed through as
compile-time constants, and returns a `TracedKernel` (the KLR Kernel, the logical shape of
each output, and which outputs the kernel returned). `simulate(kernel)(*arrays)` uses NKI's
simulator convention: numpy inputs in, numpy outputs out (one array, or a tuple when the
kernel returns several), after KLR -> BIR codegen, the BIR verifier and the BIR simulator.
`jit(fn)` wraps a function so that calling it with numpy arrays does the same.
"""

from __future__ import annotations

import inspect
import linecache
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from tilecc.errors import TileccError
from tilecc.klr import ast
from tilecc.nki.dtypes import canonical_dtype, dtype_info
from tilecc.nki.errors import KernelError
from tilecc.nki.tracer import Trace, tracing


@dataclass(frozen=True, slots=True)
class ArgSpec:
    """Shape and dtype of a kernel argument when tracing without data (`tilecc trace`)."""
    shape: tuple[int, ...]
    dtype: Any


@dataclass(slots=True)
class TracedKernel:
    kernel: ast.Kernel
    output_shapes: list[tuple[int, ...]]         # logical shape of each kernel output
    returned_names: list[str]                    # the returned tensors, in return order
    returns_tuple: bool


def _is_array(value: object) -> bool:
    return hasattr(value, "shape") and hasattr(value, "dtype") and not isinstance(value, type)


def trace_kernel(fn: Callable[..., Any], *args: object, **kwargs: object) -> TracedKernel:
    target = getattr(fn, "fn", fn)
    try:
        bound = inspect.signature(target).bind(*args, **kwargs)
    except TypeError as err:
        raise TileccError(f"kernel {target.__name__}: {err}") from None
    trace = Trace(f"{target.__module__}.{target.__qualname__}")
    with tracing(trace):
        call_args: dict[str, object] = {}
        for name, value in bound.arguments.items():
            if not _is_array(value):
                call_args[name] = value
                continue
            try:
                dtype = canonical_dtype(value.dtype)  # type: ignore[attr-defined]
            except ValueError as err:
                raise TileccError(f"kernel {target.__name__}: argument {name}: {err}") from None
            shape = tuple(int(s) for s in value.shape)  # type: ignore[attr-defined]
            if not shape:
                raise TileccError(f"kernel {target.__name__}: argument {name} is a 0-d array; "
                                  f"pass scalars as Python numbers")
            call_args[name] = trace.add_input(name, shape, dtype)
        result = target(**call_args)
        kernel = trace.finish(result, lambda message: _at_definition(target, message))
    output_shapes = [trace.allocation(t.name).shape for t in kernel.outputs]
    if result is None:
        returned = [t.name for t in kernel.outputs]
        return TracedKernel(kernel, output_shapes, returned, len(returned) > 1)
    results = list(result) if isinstance(result, (tuple, list)) else [result]
    return TracedKernel(kernel, output_shapes, [r.name for r in results],
                        isinstance(result, (tuple, list)))


def _at_definition(fn: Callable[..., Any], message: str) -> KernelError:
    code = fn.__code__
    source = linecache.getline(code.co_filename, code.co_firstlineno) or None
    return KernelError(code.co_filename, code.co_firstlineno, 1, f"{fn.__name__}: {message}",
                       source_line=source)


def run_traced(traced: TracedKernel, arrays: dict[str, np.ndarray], backend: str = "bir") -> list[np.ndarray]:
    """Run a traced kernel on its inputs (by KLR input name): backend "bir" lowers, verifies
    and simulates the BIR program; "klr" runs the KLR reference interpreter instead."""
    inputs = {}
    for tensor in traced.kernel.inputs:
        array = np.asarray(arrays[tensor.name])
        inputs[tensor.name] = array.reshape((tensor.shape.par_dim, *tensor.shape.free_dims))
    if backend == "klr":
        from tilecc.klr.interp import interpret_kernel
        outputs = interpret_kernel(traced.kernel, inputs)
    else:
        from tilecc.bir.verifier import verify_program
        from tilecc.codegen.klr_to_bir import codegen_kernel
        from tilecc.sim.execute import simulate as simulate_program
        program = codegen_kernel(traced.kernel)
        verify_program(program)
        outputs = simulate_program(program, inputs)
    return [np.asarray(outputs[tensor.name]).reshape(shape)
            for tensor, shape in zip(traced.kernel.outputs, traced.output_shapes)]


def simulate(kernel: Callable[..., Any], backend: str = "bir") -> Callable[..., Any]:
    """`simulate(kernel)(*arrays, **constants)`: the kernel's outputs as numpy arrays.
    backend="klr" runs the traced KLR on the reference interpreter (a differential check)."""
    if backend not in ("bir", "klr"):
        raise TileccError(f"unknown backend {backend!r}: expected 'bir' or 'klr'")

    def run(*args: object, **kwargs: object) -> Any:
        traced = trace_kernel(kernel, *args, **kwargs)
        target = getattr(kernel, "fn", kernel)
        bound = inspect.signature(target).bind(*args, **kwargs)
        arrays = {}
        for tensor in traced.kernel.inputs:
            value = bound.arguments[tensor.name]
            expected = dtype_info(canonical_dtype(value.dtype)).numpy  # type: ignore[attr-defined]
            arrays[tensor.name] = np.asarray(value, dtype=expected)
        outputs = dict(zip((t.name for t in traced.kernel.outputs), run_traced(traced, arrays, backend)))
        returned = [outputs[name] for name in traced.returned_names]
        return tuple(returned) if traced.returns_tuple else returned[0]
    return run


class JitKernel:
    """A kernel function marked with @jit: calling it with numpy arrays simulates it."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn

    def __call__(self, *args: object, **kwargs: object) -> Any:
        return simulate(self.fn)(*args, **kwargs)

    def trace(self, *args: object, **kwargs: object) -> ast.Kernel:
        return trace_kernel(self.fn, *args, **kwargs).kernel


def jit(fn: Callable[..., Any] | None = None, **options: object) -> Any:
    """`@jit` or `@jit(...)` (NKI's options such as mode= are accepted and ignored)."""
    if fn is None:
        return lambda inner: JitKernel(inner)
    return JitKernel(fn)
