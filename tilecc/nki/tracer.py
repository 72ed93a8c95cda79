"""The trace of one kernel call: allocations, KLR statements, inputs and outputs.

Contract: `Trace` is the state behind nki.language / nki.isa while a kernel body runs
(`active_trace()`); calling those APIs outside a trace is a KernelError. Every NKI
instruction appends exactly one KLR statement (an activation with a scalar bias adds the
MemSet that fills its [P, 1] bias tile first). `finish` turns the kernel's return value into
the Kernel's outputs: the returned HBM tensors, then every kernel argument the body writes
(a kernel that returns None has the arguments it writes as its results).

Mapping to KLR (tilecc/klr/ast.py): every tensor becomes a TensorName of shape
(par_dim, free_dims): on chip the partition dim and the other dims in order; in HBM the
first dim and the rest (a 1-D HBM tensor of n elements is stored as (1, n)). A view becomes
an AccessPattern (partition offset and count, free element offset, (step, num) pairs),
or the TensorName itself when it is the whole tensor in its natural order. An on-chip
access must start on an allowed partition (`check_start_partition`). An instruction whose
`mask=` is a compile-time False appends nothing (`skip_masked_off`). Every statement gets
the kernel line that traced it as its KLR `pos` (0-based column, tilecc/source_pos.py).
Tracing is bounded: every instruction, and every iteration of an nl range loop, is a step
of tilecc.limits' "trace-steps" bound (`spend`), so a kernel looping without end stops with
a KernelError at its line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np

from tilecc.klr import ast
from tilecc.limits import LimitError, StepBudget, over
from tilecc.nki.dtypes import dtype_info
from tilecc.nki.errors import kernel_error, kernel_frame_location, kernel_source_line
from tilecc.nki.tensor import Allocation, NkiTensor, check_allocation

_TRACES: list[Trace] = []


def active_trace() -> Trace:
    if not _TRACES:
        raise kernel_error("nki.language / nki.isa calls need a kernel traced by tilecc.nki.jit "
                           "or tilecc.nki.simulate")
    return _TRACES[-1]


def in_trace() -> bool:
    return bool(_TRACES)


@contextmanager
def tracing(trace: Trace) -> Iterator[Trace]:
    _TRACES.append(trace)
    try:
        yield trace
    finally:
        _TRACES.pop()


_ASSIGNMENT = re.compile(r"\s*([A-Za-z_]\w*)\s*(?::[^=]*)?=[^=]")


def assigned_name() -> str:
    """The variable on the left of the kernel line being executed when it is a plain
    assignment (`row_max = nl.ndarray(...)`), else "": tensors are named after it."""
    match = _ASSIGNMENT.match(kernel_source_line())
    return match.group(1) if match else ""


def masked_off(mask: object) -> bool:
    """`mask=` is a compile-time False (`mask=j + 1 < n_tiles` with Python ints): NKI does
    not execute the instruction (a compile-time True masks nothing)."""
    return isinstance(mask, (bool, np.bool_)) and not mask


def skip_masked_off(build: Callable[[], NkiTensor]) -> NkiTensor:
    """The tile `build()` returns, traced without emitting anything and flagged masked_off."""
    with active_trace().suppressed():
        out = build()
    out.alloc.masked_off = True
    return out


def allowed_starts(count: int) -> tuple[int, ...]:
    """The partitions a compute engine's access of `count` partitions may start on: a
    32-partition quadrant it may use (klr-bir.md, NKI semantics): more than 64 partitions
    start at 0, 33..64 at 0 or 64, up to 32 at 0, 32, 64 or 96."""
    return (0,) if count > 64 else (0, 64) if count > 32 else (0, 32, 64, 96)


def check_start_partition(start: int, count: int, view: NkiTensor) -> None:
    """An instruction's on-chip access starts where `allowed_starts` says."""
    if start not in (allowed := allowed_starts(count)):
        raise kernel_error(f"an access of {count} partitions of {view.name} starts at partition "
                           f"{start}; it must start at {' / '.join(map(str, allowed))} (the "
                           f"compute engines' start rule, which binds a mask's box too; DMA "
                           f"copies start anywhere)")


def klr_shape(alloc: Allocation) -> tuple[int, ...]:
    """(par_dim, *free_dims) of the TensorName that stores `alloc`."""
    if alloc.on_chip:
        rest = tuple(size for axis, size in enumerate(alloc.shape) if axis != alloc.par_axis)
        return (alloc.shape[alloc.par_axis], *rest)
    return (1, *alloc.shape) if len(alloc.shape) == 1 else alloc.shape


class Trace:
    def __init__(self, kernel_name: str) -> None:
        self.kernel_name = kernel_name
        self.body: list[ast.Stmt] = []
        self.inputs: list[Allocation] = []
        self._tensors: dict[str, ast.TensorName] = {}
        self._allocations: dict[str, Allocation] = {}
        self._name_suffix: dict[str, int] = {}
        self.program: tuple[int, ...] = ()
        self.grid: tuple[int, ...] = ()
        self._shared_hbm: list[Allocation] = []   # HBM allocations of the first instance
        self.returned_shapes: dict[str, tuple[int, ...]] = {}   # a returned reshape's shape
        self._suppressed = 0                      # > 0: instructions are masked off (skip_masked_off)
        self._hbm_count = 0                       # HBM allocations of the current instance
        self.steps = StepBudget(name="trace-steps")   # tracing is bounded: tilecc.limits

    # ---------------------------------------------------------------- SPMD instances

    def begin_instance(self, program: tuple[int, ...], grid: tuple[int, ...]) -> None:
        """Start tracing the body for one program id of an SPMD launch grid."""
        self.program, self.grid, self._hbm_count = program, grid, 0

    def program_id(self, axis: int) -> int:
        if isinstance(axis, bool) or not isinstance(axis, int) or not 0 <= axis < max(1, len(self.grid)):
            raise kernel_error(f"nl.program_id({axis!r}): the launch grid has "
                               f"{len(self.grid) or 1} axis/axes {list(self.grid) or [1]}")
        return self.program[axis] if self.grid else 0

    def num_programs(self, axis: object) -> int:
        if isinstance(axis, bool) or not isinstance(axis, int) or not 0 <= axis < max(1, len(self.grid)):
            raise kernel_error(f"nl.num_programs({axis!r}): the launch grid has "
                               f"{len(self.grid) or 1} axis/axes {list(self.grid) or [1]}")
        return self.grid[axis] if self.grid else 1

    # ---------------------------------------------------------------- allocation

    def allocate(self, shape: tuple[int, ...], dtype: str, buffer: str, name: str = "",
                 par_axis: int = 0) -> NkiTensor:
        check_allocation(shape, dtype, buffer, par_axis)
        if buffer == "hbm" and self.program and any(self.program):
            return self._shared_allocation(shape, dtype)
        alloc = Allocation(self._unique_name(name or ("out" if buffer == "hbm" else buffer)),
                           shape, dtype, buffer, par_axis)
        self._allocations[alloc.name] = alloc
        if buffer == "hbm" and self.grid:
            self._shared_hbm.append(alloc)
            self._hbm_count += 1
        return alloc.full_view()

    def _shared_allocation(self, shape: tuple[int, ...], dtype: str) -> NkiTensor:
        """The HBM tensor the first SPMD instance allocated at this point of the body."""
        index, self._hbm_count = self._hbm_count, self._hbm_count + 1
        if index >= len(self._shared_hbm):
            raise kernel_error(f"program {list(self.program)} allocates more HBM tensors than "
                               f"program {[0] * len(self.grid)}; every SPMD instance must allocate "
                               f"the same shared HBM tensors")
        alloc = self._shared_hbm[index]
        if alloc.shape != shape or alloc.dtype != dtype:
            raise kernel_error(f"program {list(self.program)} allocates HBM {list(shape)} {dtype} where "
                               f"program {[0] * len(self.grid)} allocated {alloc.name}"
                               f"{list(alloc.shape)} {alloc.dtype}; SPMD instances share HBM tensors")
        return alloc.full_view()

    def add_input(self, name: str, shape: tuple[int, ...], dtype: str) -> NkiTensor:
        view = self.allocate(shape, dtype, "hbm", name)
        self.inputs.append(view.alloc)
        return view

    def _unique_name(self, base: str) -> str:
        """`base`, else `base_N` with the smallest N free. Names are never released, so the
        search for a base resumes where its last one stopped (a loop of 10k iterations
        naming its tile `t` each time stays linear)."""
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in base) or "t"
        n = self._name_suffix.get(base, 0)
        name = base if n == 0 else f"{base}_{n}"
        while name in self._allocations:
            n += 1
            name = f"{base}_{n}"
        self._name_suffix[base] = n
        return name

    # ---------------------------------------------------------------- KLR building

    def spend(self, steps: int) -> None:
        """Count `steps` trace steps (an instruction, the iterations of an nl range loop)
        against the "trace-steps" bound; beyond it, a KernelError at the kernel line."""
        try:
            self.steps.spend(steps, "tracing")
        except LimitError:
            raise kernel_error(over("trace-steps", self.steps.used, self.steps.bound)) from None

    def emit(self, stmt: ast.Stmt) -> None:
        """Append `stmt`, positioned at the kernel line being executed (KLR `pos`)."""
        self.spend(1)
        if self._suppressed:
            return
        if stmt.pos is None:
            path, line, col, _ = kernel_frame_location()
            stmt.pos = ast.Pos(line, max(col - 1, 0), filename=path) if line else None
        self.body.append(stmt)
        # a write of a whole tile makes all of it hold values again (Allocation.written)
        if isinstance(dst := getattr(stmt, "dst", None), ast.TensorName) and \
                (alloc := self._allocations.get(dst.name)) is not None:
            alloc.written = None

    @contextmanager
    def suppressed(self) -> Iterator[None]:
        """Instructions traced inside are dropped (their tiles are still allocated)."""
        self._suppressed += 1
        try:
            yield
        finally:
            self._suppressed -= 1

    def tensor_name(self, alloc: Allocation) -> ast.TensorName:
        if (tensor := self._tensors.get(alloc.name)) is None:
            memory = ast.Memory.hbm if alloc.buffer == "hbm" else ast.Memory[alloc.buffer]
            tensor = ast.make_tensor(alloc.name, klr_dtype(alloc.dtype), klr_shape(alloc), memory)
            self._tensors[alloc.name] = tensor
        return tensor

    def access(self, view: NkiTensor, dma: bool = False) -> ast.AccessPattern | ast.TensorName:
        """The KLR access of `view`; `dma`: a DMA queue's access, which may start on any
        partition (the quadrant rule binds the compute engines only)."""
        view = view.usable()
        tensor = self.tensor_name(view.alloc)
        if view.alloc.on_chip:
            par = view.par_index
            first, rest = view.dims[par], view.dims[:par] + view.dims[par + 1:]
            if not dma:
                check_start_partition(view.par_start, first.num, view)
            pattern = ast.AccessPattern(tensor, first.num, tuple(ast.APPair(d.step, d.num) for d in rest),
                                        view.par_start, view.offset)
        else:
            pattern = self._hbm_access(view, tensor)
        return tensor if pattern == ast.to_pattern(tensor) else pattern

    @staticmethod
    def _hbm_access(view: NkiTensor, tensor: ast.TensorName) -> ast.AccessPattern:
        row = tensor.shape.free_elements
        par_offset, free_offset = divmod(view.offset, row)
        dims = view.dims
        if dims and (dims[0].step == row or dims[0].num == 1):
            par_num, free_dims = dims[0].num, dims[1:]
        else:
            par_num, free_dims = 1, dims
        low = free_offset + sum(min(0, d.step * (d.num - 1)) for d in free_dims)
        high = free_offset + sum(max(0, d.step * (d.num - 1)) for d in free_dims)
        if low < 0 or high >= row:
            raise kernel_error(f"this access of HBM tensor {view.name}{list(view.alloc.shape)} does not "
                               f"keep whole rows of its first dim; KLR cannot express it")
        return ast.AccessPattern(tensor, par_num, tuple(ast.APPair(d.step, d.num) for d in free_dims),
                                 par_offset, free_offset)

    def finish(self, result: object, fail: Callable[[str], Exception]) -> ast.Kernel:
        """The Kernel; `fail(message)` builds the error for a bad return value (the kernel
        has returned, so it is located at the kernel's definition)."""
        inputs = [self.tensor_name(alloc) for alloc in self.inputs]
        written: list[ast.TensorName] = []
        for stmt in self.body:
            if (dst := getattr(stmt, "dst", None)) is None:  # seeds, prints: they write no tensor
                continue
            if (tensor := ast.access_tensor(dst)) in inputs and tensor not in written:
                written.append(tensor)
        results = list(result) if isinstance(result, (tuple, list)) else [result]
        if result is None and written:   # NKI 1.x style: results written into arguments
            return ast.Kernel(self.kernel_name, inputs, written, list(self.body))
        if result is None or not results:
            raise fail("the kernel must return its output tensor(s) (HBM tensors) or write "
                       "into an argument")
        outputs: list[ast.TensorName] = []
        for value in results:
            if not isinstance(value, NkiTensor) or value.alloc.on_chip:
                raise fail(f"kernel results must be HBM tensors, got {value!r}")
            if not value.is_whole_row_major():
                raise fail(f"return the whole HBM tensor {value.name} (or a reshape of it), not a "
                           f"view of part of it")
            if (tensor := self.tensor_name(value.alloc)) not in outputs:
                outputs.append(tensor)
                self.returned_shapes[value.alloc.name] = value.shape
        # an argument the kernel writes is a result too (NKI 1.x out-parameters)
        outputs += [tensor for tensor in written if tensor not in outputs]
        return ast.Kernel(self.kernel_name, inputs, outputs, list(self.body))

    def allocation(self, name: str) -> Allocation:
        return self._allocations[name]


def klr_dtype(dtype: str) -> ast.Dtype:
    return ast.Dtype[dtype_info(dtype).klr]
