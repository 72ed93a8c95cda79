"""`tilecc run kernel.py:fn --input NAME=a.npy ... --out DIR`: run an NKI kernel written in
Python end to end (argument parsing: tilecc/commands/run.py).

Contract: traces the function with the inputs, lowers the KLR to BIR, verifies it,
simulates it and writes DIR/<output>.npy for every tensor the kernel returns (DIR is
created if missing; each file is written atomically), one summary line per output.
- `--input` (commands/inputs.py): an array or a number per parameter. A kernel file with
  `make_inputs(rng)` (examples/kernels) supplies the arrays not given (seeded by `--seed`);
  `--save-inputs DIR` writes the arrays used as DIR/<parameter>.npy.
- `--check`: the outputs are compared with the file's `reference(*inputs)` (its
  TOLERANCE, else rtol 1e-5 / atol 1e-6); a mismatch names the output and the first
  differing index and exits 1.
- `--keep-temps DIR` keeps the kernel's KLR (DIR/<fn>.klr.json) and BIR
  (DIR/<fn>.bir.json).
Tracing stops with a KernelError after `--max-trace-steps N` trace steps (tilecc.limits).
`--html R.html` writes the kernel report page (tilecc.viz.kernel_report): with `--check`
it pictures the difference from the KLR reference interpreter.
"""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from tilecc.commands.inputs import ARRAY, NUMBER, read_inputs, split_input_spec, typed
from tilecc.commands.outputs import write_results
from tilecc.errors import TileccError
from tilecc.fileio import write_text_atomic
from tilecc.limits import cut, raised
from tilecc.nki.dtypes import canonical_dtype, dtype_info
from tilecc.nki.driver import TracedKernel, lower_traced, run_traced, trace_kernel
from tilecc.nki.loader import kernel_failure, load_kernel, split_target
from tilecc.sim.stats import report_estimates

DEFAULT_TOLERANCE = {"rtol": 1e-5, "atol": 1e-6}


def run(args: argparse.Namespace) -> int:
    if args.replicas is not None or args.partitions is not None:
        raise TileccError("--replicas / --partitions apply to HLO modules, not to kernels")
    if getattr(args, "max_steps", None) is not None:
        raise TileccError("--max-steps applies to HLO modules; a kernel's tracing is bounded "
                          "by --max-trace-steps")
    with raised("trace-steps", getattr(args, "max_trace_steps", None)):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    kernel = load_kernel(args.target)
    module = getattr(getattr(kernel, "fn", kernel), "__globals__", {})
    arrays = kernel_arguments(args.input, kernel, (ARRAY, NUMBER))
    make_inputs = module.get("make_inputs")
    if callable(make_inputs):
        arrays = {**_made_inputs(kernel, make_inputs, args.seed), **arrays}
    require_all(kernel, arrays)
    if args.save_inputs:
        write_results(args.save_inputs, ((n, a) for n, a in arrays.items()
                                         if isinstance(a, np.ndarray)), "--save-inputs")
    traced = _trace(kernel, arrays)
    if args.keep_temps:
        keep_temps(traced, Path(args.keep_temps), split_target(args.target)[1])
    klr_inputs = {t.name: arrays[t.name] for t in traced.kernel.inputs}
    outputs = run_traced(traced, klr_inputs, uninit=getattr(args, "uninit", "error"))
    named = list(zip((t.name for t in traced.kernel.outputs), outputs))
    write_results(args.out, named)
    if getattr(args, "stats", False) or getattr(args, "profile", None):
        report_estimates(lower_traced(traced), args.stats, args.profile)
    status = check_reference(module, traced, dict(named), arrays, kernel) if args.check else 0
    if (html := getattr(args, "html", None)):
        from tilecc.viz.kernel_report import report_kernel_run
        status = max(status, report_kernel_run(traced, klr_inputs, outputs, html, args.check))
    return status


def kernel_arguments(specs: list[str], kernel: Callable[..., Any],
                     kinds: tuple[str, ...], mmap: bool = False) -> dict[str, Any]:
    """Parameter name -> array / number (/ ShapeSpec) for every --input; a 0-d array is a
    scalar argument, raw records are bfloat16 (commands/inputs.py)."""
    target = getattr(kernel, "fn", kernel)
    params = inspect.signature(target).parameters

    def resolve(name: str) -> str:
        if name not in params:
            raise TileccError(f"--input {name}: {target.__name__} has no parameter {name!r} "
                              f"(parameters: {', '.join(params)})")
        return name

    texts = dict(split_input_spec(spec) for spec in specs)
    arguments: dict[str, Any] = {}
    for name, value in read_inputs(specs, resolve, kinds, mmap).values():
        if isinstance(value, np.ndarray):
            value = value.item() if value.ndim == 0 else typed(name, value)
        if not isinstance(value, (int, float)):
            value = _nki_typed(name, texts[name], value, convert=not mmap)
        arguments[name] = value
    return arguments


def _nki_typed(name: str, text: str, value: Any, convert: bool) -> Any:
    """An array argument of an NKI dtype, with `convert` in that dtype's numpy storage (a
    bool array as uint8, as `nki.simulate` passes it); else the error naming the --input
    and its file."""
    try:
        dtype = dtype_info(canonical_dtype(value.dtype)).numpy
    except ValueError as err:
        raise TileccError(f"--input {name}: {cut(text)}: {err}") from None
    if convert and isinstance(value, np.ndarray) and value.dtype != dtype:
        return value.astype(dtype)
    return value


def require_all(kernel: Callable[..., Any], arguments: dict[str, Any]) -> None:
    target = getattr(kernel, "fn", kernel)
    missing = [p.name for p in inspect.signature(target).parameters.values()
               if p.default is inspect.Parameter.empty and p.name not in arguments
               and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if missing:
        raise TileccError(f"{target.__name__}: no --input for parameter(s) {', '.join(missing)}")


def _made_inputs(kernel: Callable[..., Any], make_inputs: Callable[..., Any],
                 seed: int) -> dict[str, Any]:
    """The file's make_inputs(rng), by parameter name (its tuple is positional)."""
    try:
        made = make_inputs(np.random.default_rng(seed))
    except Exception as err:
        raise kernel_failure(err, "make_inputs raised") from None
    values = made if isinstance(made, tuple) else (made,)
    names = list(inspect.signature(getattr(kernel, "fn", kernel)).parameters)
    return dict(zip(names, values))


def _trace(kernel: Callable[..., Any], arguments: dict[str, Any]) -> TracedKernel:
    try:
        return trace_kernel(kernel, **arguments)
    except (TileccError, MemoryError):  # MemoryError: the CLI's one line
        raise
    except Exception as err:
        raise kernel_failure(err) from None


def keep_temps(traced: TracedKernel, folder: Path, function: str) -> None:
    """The KLR and the verified BIR of the kernel, as `tilecc trace` / `codegen` write them."""
    from tilecc.bir.json import write_program_json
    from tilecc.bir.verifier import verify_program
    from tilecc.codegen.klr_to_bir import codegen_kernel
    from tilecc.klr.read import write_kernel_json
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise TileccError(f"{folder}: cannot create the --keep-temps folder: "
                          f"{err.strerror or err}") from None
    program = codegen_kernel(traced.kernel)
    verify_program(program)
    for suffix, text in ((".klr.json", write_kernel_json(traced.kernel)),
                         (".bir.json", write_program_json(program, pretty=True))):
        path = folder / f"{function}{suffix}"
        write_text_atomic(str(path), text + "\n")
        print(f"{path}: kept")


def check_reference(module: dict[str, Any], traced: TracedKernel, outputs: dict[str, np.ndarray],
                    arguments: dict[str, Any], kernel: Callable[..., Any]) -> int:
    reference = module.get("reference")
    if not callable(reference):
        raise TileccError(f"--check: {getattr(kernel, '__name__', 'the kernel')}'s file has no "
                          f"reference() function to compare with")
    try:
        want = reference(**arguments)
    except Exception as err:
        raise kernel_failure(err, "reference raised") from None
    wants = list(want) if isinstance(want, (tuple, list)) else [want]
    got = [outputs[name] for name in traced.returned_names]
    tolerance = module.get("TOLERANCE", DEFAULT_TOLERANCE)
    if len(wants) != len(got):
        raise TileccError(f"--check: reference() returned {len(wants)} array(s), the kernel "
                          f"{len(got)}")
    ok = True
    for name, g, w in zip(traced.returned_names, got, wants):
        report = compare_to_reference(g, np.asarray(w), tolerance)
        print(f"check {name}: {report}")
        ok = ok and report.startswith("equal")
    return 0 if ok else 1


def compare_to_reference(got: np.ndarray, want: np.ndarray, tolerance: dict[str, float]) -> str:
    """'equal within rtol R, atol A', or 'MISMATCH ...' at the first index outside it."""
    if got.shape != want.shape:
        return f"MISMATCH: shape {list(got.shape)}, reference {list(want.shape)}"
    g, w = got.astype(np.float64), want.astype(np.float64)
    close = np.isclose(g, w, rtol=tolerance.get("rtol", 0.0), atol=tolerance.get("atol", 0.0),
                       equal_nan=True)
    bounds = f"rtol {tolerance.get('rtol', 0.0):g}, atol {tolerance.get('atol', 0.0):g}"
    if bool(np.all(close)):
        return f"equal within {bounds}"
    index = tuple(int(i) for i in np.argwhere(~close)[0])
    return (f"MISMATCH at {list(index)}: {g[index]!r}, reference {w[index]!r} "
            f"({int((~close).sum())} element(s) outside {bounds})")
