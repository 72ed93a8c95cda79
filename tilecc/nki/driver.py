"""Running a kernel: trace it to KLR, lower it to BIR, simulate it, return numpy arrays.

Contract: `trace_kernel(fn, *args, **kwargs)` calls the kernel function once with every
array-like argument (anything with .shape and .dtype: numpy arrays, `ArgSpec`) replaced by
an HBM input tensor named after its parameter, other arguments passed through as
compile-time constants, and returns a `TracedKernel` (the KLR Kernel, the logical shape of
each output, and which outputs the kernel returned). `simulate(kernel)(*arrays)` uses NKI's
simulator convention: numpy inputs in, numpy outputs out (one array, or a tuple when the
kernel returns several), after KLR -> BIR codegen, the BIR verifier and the BIR simulator.
`jit(fn)` wraps a function so that calling it with numpy arrays does the same; called
while another kernel is being traced, it runs inline as part of that kernel (a helper kernel).

SPMD launches (NKI's `kernel[gx, gy](...)`): the body is traced once per program id, in
row-major order, into ONE KLR kernel; `nl.program_id(axis)` is that instance's index and
HBM tensors the body allocates are shared by all instances (the n-th HBM allocation of
every instance is the same tensor, as NKI's `nl.shared_hbm` outputs are).
A kernel may return an on-chip tile: it is copied into a new HBM result of its shape and dtype
(NKI's simulator hands back a returned tile's values).
`simulate_kernel(kernel, *arrays)` is NKI 1.x's form: it also writes the results of a kernel
that stores into its arguments back into those numpy arrays, in place.
"""

from __future__ import annotations

import inspect
import itertools
import math
import linecache
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from tilecc.bir.inst import Program
from tilecc.bir.verifier import verify_program
from tilecc.codegen.klr_to_bir import codegen_kernel
from tilecc.errors import SimIndexError, TileccError
from tilecc.klr import ast
from tilecc.klr.interp import interpret_kernel
from tilecc.nki.dtypes import canonical_dtype, dtype_info, plain_number
from tilecc.nki.errors import KernelError, kernel_error, kernel_failure
from tilecc.nki.operators import installed
from tilecc.nki.shim import aliases
from tilecc.nki.tensor import NkiTensor
from tilecc.nki.tracer import Trace, in_trace, tracing
from tilecc.sim.execute import simulate as simulate_program

__all__ = ["ArgSpec", "JitKernel", "TracedKernel", "baremetal", "jit", "simulate", "simulate_kernel",
           "trace", "trace_kernel"]


MAX_PROGRAMS = 65536   # programs of one launch grid (each is traced into the kernel)


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
    returned: bool = True                        # False: the kernel returned None (out-parameters)


def _is_array(value: object) -> bool:
    """An array-like kernel argument (numpy arrays and scalars, ArgSpec), not a dtype."""
    return hasattr(value, "shape") and hasattr(value, "dtype") and not isinstance(value, (type, str))


def _grid_of(fn: object) -> tuple[int, ...]:
    return getattr(fn, "grid", ())


def trace_kernel(fn: Callable[..., Any], *args: object, **kwargs: object) -> TracedKernel:
    """Trace `fn` once per program of its launch grid into one KLR Kernel (module docstring)."""
    grid = _grid_of(fn)
    target = getattr(fn, "fn", fn)
    try:
        bound = inspect.signature(target).bind(*args, **kwargs)
    except TypeError as err:
        raise TileccError(f"kernel {target.__name__}: {err}") from None
    trace = Trace(f"{target.__module__}.{target.__qualname__}")
    # `import neuronxcc.nki.language as nl` inside the kernel body resolves too (shim.aliases)
    with tracing(trace), aliases():
        call_args: dict[str, object] = {}
        for name, value in bound.arguments.items():
            if not _is_array(value):
                call_args[name] = value
                continue
            try:
                dtype = canonical_dtype(value.dtype)
            except ValueError as err:
                raise TileccError(f"kernel {target.__name__}: argument {name}: {err}") from None
            shape = tuple(int(s) for s in value.shape)
            if not shape:   # np.float32(0.5), np.int32(3), a 0-d array: a compile-time number
                call_args[name] = np.asarray(value).item()
                continue
            call_args[name] = trace.add_input(name, shape, dtype)
        result = None
        for program in itertools.product(*(range(n) for n in grid)):
            trace.begin_instance(program, grid)
            try:
                result = _tiles_returned_through_hbm(trace, target(**call_args))
            except TileccError:
                raise
            except Exception as err:  # the kernel's own Python failed (assert, AttributeError ...)
                raise kernel_failure(err) from err
        kernel = trace.finish(result, lambda message: _at_definition(target, message))
    output_shapes = [trace.returned_shapes.get(t.name, trace.allocation(t.name).shape)
                     for t in kernel.outputs]
    if result is None:
        returned = [t.name for t in kernel.outputs]
        return TracedKernel(kernel, output_shapes, returned, len(returned) > 1, returned=False)
    results = list(result) if isinstance(result, (tuple, list)) else [result]
    return TracedKernel(kernel, output_shapes, [r.name for r in results if isinstance(r, NkiTensor)],
                        isinstance(result, (tuple, list)))


def _tiles_returned_through_hbm(trace: Trace, result: object) -> object:
    """The kernel's return value with each on-chip tile it returns replaced by a new HBM
    tensor of the tile's shape and dtype that a DMA fills from it: NKI's simulator hands back
    the values of a returned SBUF tile (the SDK's nki.isa.range_select example returns one)."""
    values = list(result) if isinstance(result, (tuple, list)) else [result]
    if not any(isinstance(v, NkiTensor) and v.alloc.on_chip for v in values):
        return result
    for i, value in enumerate(values):
        if isinstance(value, NkiTensor) and value.alloc.on_chip:
            values[i] = trace.allocate(value.shape, value.dtype, "hbm", value.name)
            installed("assign")(values[i], value)
    return values if isinstance(result, (tuple, list)) else values[0]


def _at_definition(fn: Callable[..., Any], message: str) -> KernelError:
    code = fn.__code__
    source = linecache.getline(code.co_filename, code.co_firstlineno) or None
    return KernelError(code.co_filename, code.co_firstlineno, 1, f"{fn.__name__}: {message}",
                       source_line=source)


def lower_traced(traced: TracedKernel) -> Program:
    """The verified BIR program of a traced kernel."""
    program = codegen_kernel(traced.kernel)
    verify_program(program)
    return program


def run_traced(traced: TracedKernel, arrays: dict[str, np.ndarray], backend: str = "bir",
               uninit: str = "error") -> list[np.ndarray]:
    """Run a traced kernel on its inputs (by KLR input name): backend "bir" lowers, verifies
    and simulates the BIR program; "klr" runs the KLR reference interpreter instead. `uninit`
    is what undefined data reaching HBM does ("error" | "warn" | "ignore", tilecc/definedness.py)."""
    inputs = {}
    for tensor in traced.kernel.inputs:
        array = np.asarray(arrays[tensor.name])
        inputs[tensor.name] = array.reshape((tensor.shape.par_dim, *tensor.shape.free_dims))
    if backend == "klr":
        outputs = interpret_kernel(traced.kernel, inputs, uninit=uninit)
    else:
        outputs = simulate_program(lower_traced(traced), inputs, uninit=uninit)
    return [np.asarray(outputs[tensor.name]).reshape(shape)
            for tensor, shape in zip(traced.kernel.outputs, traced.output_shapes)]


def simulate(kernel: Callable[..., Any], backend: str = "bir", uninit: str = "error") -> Callable[..., Any]:
    """`simulate(kernel)(*arrays, **constants)`: the kernel's outputs as numpy arrays.
    backend="klr" runs the traced KLR on the reference interpreter (a differential check);
    `uninit` ("error" | "warn" | "ignore") is what undefined data reaching HBM does."""
    if backend not in ("bir", "klr"):
        raise TileccError(f"unknown backend {backend!r}: expected 'bir' or 'klr'")

    def run(*args: object, **kwargs: object) -> Any:
        return run_kernel(kernel, args, kwargs, backend, uninit)[0]
    return run


def run_kernel(kernel: Callable[..., Any], args: tuple[object, ...], kwargs: dict[str, object],
               backend: str = "bir", uninit: str = "error") -> tuple[Any, TracedKernel]:
    """Trace and run `kernel` on numpy arguments: (its result as `simulate` returns it, the
    traced kernel)."""
    traced = trace_kernel(kernel, *args, **kwargs)
    target = getattr(kernel, "fn", kernel)
    bound = inspect.signature(target).bind(*args, **kwargs)
    arrays = {}
    for tensor in traced.kernel.inputs:
        value = bound.arguments[tensor.name]
        expected = dtype_info(canonical_dtype(value.dtype)).numpy
        arrays[tensor.name] = np.asarray(value, dtype=expected)
    outputs = dict(zip((t.name for t in traced.kernel.outputs),
                       run_traced(traced, arrays, backend, uninit)))
    returned = [outputs[name] for name in traced.returned_names]
    return (tuple(returned) if traced.returns_tuple else returned[0]), traced


def simulate_kernel(kernel: Callable[..., Any], *args: object, **kwargs: object) -> Any:
    """NKI 1.x `nki.simulate_kernel(kernel, *arrays)`: the kernel's results; every numpy
    argument the kernel writes (an out-parameter) is overwritten in place with its result."""
    traced = trace_kernel(kernel, *args, **kwargs)
    target = getattr(kernel, "fn", kernel)
    bound = inspect.signature(target).bind(*args, **kwargs).arguments
    arrays = {t.name: np.asarray(bound[t.name], dtype=dtype_info(canonical_dtype(
        bound[t.name].dtype)).numpy) for t in traced.kernel.inputs}
    outputs = dict(zip((t.name for t in traced.kernel.outputs), run_traced(traced, arrays)))
    for name, value in outputs.items():
        if isinstance(target_array := bound.get(name), np.ndarray):
            np.copyto(target_array, value.reshape(target_array.shape), casting="unsafe")
    if not traced.returned:
        return None
    returned = [outputs[name] for name in traced.returned_names]
    return tuple(returned) if traced.returns_tuple else returned[0]


class JitKernel:
    """A kernel function marked with @jit: calling it with numpy arrays simulates it (an index
    out of its tensor is then an IndexError, as in NKI's simulator); `kernel[gx, gy]` is an
    SPMD launch of gx * gy instances (NKI's grid syntax). It is not a function object, so
    pytest does not collect a kernel named test_* as a test."""

    def __init__(self, fn: Callable[..., Any], grid: tuple[int, ...] = ()) -> None:
        self.fn = fn
        self.grid = grid
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__

    def __getitem__(self, grid: object) -> JitKernel:
        """`kernel[gx, gy]`: positive ints (numpy ints too), at most MAX_PROGRAMS programs in
        all, each traced; anything else is a KernelError at the launching line."""
        sizes = tuple(plain_number(n) for n in (grid if isinstance(grid, tuple) else (grid,)))
        if not sizes or any(isinstance(n, bool) or not isinstance(n, int) or n <= 0 for n in sizes):
            raise kernel_error(f"kernel {self.__name__}: a launch grid is one or more positive ints, "
                               f"got [{grid!r}]")
        if (count := math.prod(sizes)) > MAX_PROGRAMS:   # type: ignore[arg-type]
            raise kernel_error(f"kernel {self.__name__}: a launch grid of {count} programs; tilecc "
                               f"traces every program and takes at most {MAX_PROGRAMS}")
        return JitKernel(self.fn, sizes)  # type: ignore[arg-type]

    def __call__(self, *args: object, **kwargs: object) -> Any:
        if in_trace():
            if self.grid:
                raise TileccError(f"kernel {self.__name__}: a launch grid cannot be used inside a "
                                  f"kernel being traced")
            return self.fn(*args, **kwargs)   # a helper kernel: traced inline
        try:
            return simulate(self)(*args, **kwargs)
        except SimIndexError as err:
            # NKI's simulator fails with numpy's IndexError on the flat element (the SDK's
            # oob_mode=error tests check its type and text); the note keeps the kernel line
            error = IndexError(f"index {err.element} is out of bounds for axis 0 with size {err.size}")
            error.add_note(str(err))
            raise error from None

    def trace(self, *args: object, **kwargs: object) -> ast.Kernel:
        return trace_kernel(self, *args, **kwargs).kernel


def jit(fn: Callable[..., Any] | None = None, **options: object) -> Any:
    """`@jit` or `@jit(...)` (NKI's options such as mode= are accepted and ignored)."""
    if fn is None:
        def decorate(inner: Callable[..., Any]) -> JitKernel:
            return JitKernel(getattr(inner, "fn", inner))
        return decorate
    return JitKernel(getattr(fn, "fn", fn))


trace = jit   # NKI 1.x `@nki.trace`, used with simulate_kernel
# NKI's device-run decorator `@nki.baremetal(save_neff_name=...)`: there is no device here, so
# it simulates as @jit does (nki.benchmark / nki.profile estimate too: tilecc/nki/estimates.py)
baremetal = jit
