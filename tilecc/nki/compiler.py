"""`nki.compiler` for tilecc: the direct-allocation API kernels use for SBUF / PSUM placement
(`buffer=ncc.sbuf.mod_alloc(base_addr=..., num_free_tiles=(2,))`) and the compiler-control
decorators.

Contract: an allocator call returns the buffer (nl.sbuf / nl.psum) it places the tensor in;
tilecc lays out on-chip tensors itself (each allocation its own region), so the requested
address, partition and modulo rotation do not change what the kernel computes, and are not
recorded (modulo allocation makes logical tiles share memory; a kernel that is correct under
that sharing computes the same with separate regions). Signatures:
https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/api/generated/nki.compiler.psum.mod_alloc.html
and nki.compiler.sbuf.mod_alloc.html. The decorators (`skip_middle_end_transformations`, `enable_stack_allocator`,
`force_auto_alloc`) return the kernel unchanged: they steer optimisation, not semantics.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tilecc.nki.errors import kernel_error

__all__ = ["sbuf", "psum", "skip_middle_end_transformations", "enable_stack_allocator", "force_auto_alloc",
           "no_reorder"]


class _Allocator:
    """`ncc.sbuf` / `ncc.psum`: direct allocation into one on-chip buffer."""

    def __init__(self, buffer: str) -> None:
        self.buffer = buffer

    def mod_alloc(self, base_addr: int = 0, base_partition: int = 0, num_par_tiles: tuple[int, ...] = (),
                  num_free_tiles: tuple[int, ...] = (), base_bank: int | None = None,
                  num_bank_tiles: tuple[int, ...] = ()) -> str:
        """nki.compiler.sbuf.mod_alloc / nki.compiler.psum.mod_alloc (base_bank and
        num_bank_tiles are PSUM's: 8 banks); the arguments are checked, not recorded."""
        fn = f"ncc.{self.buffer}.mod_alloc"
        for name, value in (("base_addr", base_addr), ("base_partition", base_partition)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise kernel_error(f"{fn}: {name} must be a non-negative int, got {value!r}")
        if self.buffer == "sbuf" and (base_bank is not None or num_bank_tiles):
            raise kernel_error(f"{fn}: base_bank / num_bank_tiles place PSUM tiles; SBUF has no banks")
        if base_bank is not None and (isinstance(base_bank, bool) or not isinstance(base_bank, int)
                                      or not 0 <= base_bank < 8):
            raise kernel_error(f"{fn}: base_bank must be a PSUM bank 0..7, got {base_bank!r}")
        for name, tiles in (("num_par_tiles", num_par_tiles), ("num_free_tiles", num_free_tiles),
                            ("num_bank_tiles", num_bank_tiles)):
            if not isinstance(tiles, (tuple, list)) or any(
                    isinstance(n, bool) or not isinstance(n, int) or n <= 0 for n in tiles):
                raise kernel_error(f"{fn}: {name} must be a tuple of positive ints, got {tiles!r}")
        return self.buffer

    def alloc(self, func: Callable[..., Any] | None = None) -> str:
        if func is not None and not callable(func):
            raise kernel_error(f"ncc.{self.buffer}.alloc: expected an allocation function, got {func!r}")
        return self.buffer

    def auto_alloc(self) -> str:
        return self.buffer


sbuf = _Allocator("sbuf")
psum = _Allocator("psum")


def skip_middle_end_transformations(kernel: Callable[..., Any]) -> Callable[..., Any]:
    """The kernel unchanged (an optimisation switch)."""
    return kernel


def enable_stack_allocator(kernel: Callable[..., Any] | None = None, **options: object) -> Any:
    """The kernel unchanged, with or without options (an allocation switch)."""
    return kernel if kernel is not None else (lambda inner: inner)


def force_auto_alloc(kernel: Callable[..., Any]) -> Callable[..., Any]:
    """The kernel unchanged (an allocation switch)."""
    return kernel


def no_reorder() -> str:
    """The loop directive `nl.sequential_range(n, directives=ncc.no_reorder())`: the
    simulator runs instructions in program order anyway."""
    return "no_reorder"
