"""The kernel report: kernel source, its KLR and its BIR side by side, lines linked, the BIR
dependency graph, and with a check the output against the reference.

Contract:
- `lower_with_origins(kernel)` lowers KLR -> BIR exactly as `codegen_kernel` does (the same
  KlirToBirCodegen, its leaves wrapped to count what each emitted) and also returns, for
  every BIR instruction, the index of the KLR operator it came from.
- `kernel_section(kernel, source_file, checks)` is the `kernel` view: one row per source
  line (of the file the operators' `pos` names, when readable), one per KLR operator (with
  its source line, or None) and one per BIR instruction (with its KLR operator). page.js
  links them: a kernel line highlights its operators and their instructions.
- `check_outputs(pairs, against, tolerance)` compares each (name, output, reference): equal
  when every element is (NaN equal to NaN), else it counts the differing elements and the
  largest difference, and passes only within `tolerance` (np.allclose's rtol / atol) when
  one is given; with matplotlib the picture of tilecc.viz.plots is attached.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from tilecc.bir.inst import Program
from tilecc.bir.verifier import verify_program
from tilecc.codegen.klr_to_bir import KlirToBirCodegen
from tilecc.demo_stages.nki import format_instruction
from tilecc.klr import ast as k
from tilecc.viz.bir_deps import dependency_dot
from tilecc.viz.page import Section
from tilecc.viz.plots import PLOTS_NOTE, check_image, error_map


class _OriginCodegen(KlirToBirCodegen):
    """KlirToBirCodegen recording which operator emitted each instruction."""

    def __init__(self) -> None:
        super().__init__()
        self.leaves = {kind: self._recorded(leaf) for kind, leaf in self.leaves.items()}

    def _reset(self) -> None:
        super()._reset()
        self.origins: list[int] = []
        self.op_index: dict[int, int] = {}

    def codegen_kernel(self, kernel: k.Kernel) -> Any:
        self.op_index = {id(op): i for i, op in enumerate(kernel.body)}
        return super().codegen_kernel(kernel)

    def _recorded(self, leaf: Callable[[Any], None]) -> Callable[[Any], None]:
        def run(op: Any) -> None:
            leaf(op)
            self.origins.extend([self.op_index[id(op)]] * (len(self.insts) - len(self.origins)))
        return run


def lower_with_origins(kernel: k.Kernel) -> tuple[Program, list[int]]:
    codegen = _OriginCodegen()
    program = codegen.codegen_kernel(kernel)
    verify_program(program)
    assert len(codegen.origins) == len(program.instructions)
    return program, codegen.origins


def _value_text(value: Any) -> str:
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, k.TensorName):
        return value.name
    if isinstance(value, (k.AccessBasic, k.AccessPattern)):
        return f"{value.tensor.name}[..]"
    if isinstance(value, k.Immediate):
        return repr(value.value)
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def format_operator(op: Any) -> str:
    fields = [f"{f.name}={_value_text(getattr(op, f.name))}" for f in dataclasses.fields(op)
              if f.name != "pos" and getattr(op, f.name) is not None]
    return f"{type(op).__name__} {' '.join(fields)}"


@dataclass(frozen=True, slots=True)
class Check:
    ok: bool
    text: str
    image: str | None


def check_outputs(pairs: list[tuple[str, np.ndarray, np.ndarray]], against: str,
                  tolerance: dict[str, float] | None = None) -> Check:
    lines, image, ok = [], None, True
    for name, got, want in pairs:
        if got.shape != want.shape:
            lines.append(f"{name}: shape {list(got.shape)}, {against} {list(want.shape)}")
            ok = False
            continue
        diff = error_map(got, want)
        differing = int(np.count_nonzero(~np.isnan(diff)))
        if differing == 0:
            lines.append(f"{name}: equal to the {against} ({got.size} elements)")
        else:
            close = tolerance is not None and bool(np.allclose(got, want, equal_nan=True,
                                                               **tolerance))
            ok = ok and close
            within = f" (within {', '.join(f'{k}={v:g}' for k, v in tolerance.items())})" \
                if close and tolerance else ""
            lines.append(f"{name}: {differing} of {got.size} elements differ from the "
                         f"{against}{within}; largest difference {np.nanmax(diff):.6g}")
        if image is None:
            image = check_image(name, got, want)
            if image is None:
                lines.append(PLOTS_NOTE)
    return Check(ok, "\n".join(lines), image)


def _source_file(kernel: k.Kernel) -> str | None:
    for op in kernel.body:
        if (pos := getattr(op, "pos", None)) is not None and pos.filename:
            return str(pos.filename)
    return None


def kernel_section(kernel: k.Kernel, check: Check | None = None, title: str = "",
                   prefix: str = "k") -> Section:
    program, origins = lower_with_origins(kernel)
    source_file = _source_file(kernel)
    try:
        source = [] if source_file is None else \
            open(source_file, encoding="utf-8").read().splitlines()
    except (OSError, UnicodeDecodeError):
        source = []
    klr_rows: list[dict[str, Any]] = []
    for op in kernel.body:
        pos = getattr(op, "pos", None)
        line = pos.line if pos is not None and pos.filename == source_file and \
            1 <= pos.line <= len(source) else None
        klr_rows.append({"text": format_operator(op), "line": line, "bir": []})
    for index, origin in enumerate(origins):
        klr_rows[origin]["bir"].append(index)
    data = {"prefix": prefix, "file": source_file or "(source not available)",
            "first_line": 1, "source": source, "klr": klr_rows,
            "bir": [{"text": format_instruction(inst), "klr": origin}
                    for inst, origin in zip(program.instructions, origins)],
            "dot": dependency_dot(program, prefix),
            "check": None if check is None else dataclasses.asdict(check)}
    return Section("kernel", data, title or f"{kernel.name}: source, KLR and BIR",
                   len(program.instructions))
