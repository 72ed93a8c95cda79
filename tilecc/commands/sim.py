"""`tilecc sim PROGRAM.bir.json --input NAME=FILE.npy ... --out DIR`: run a BIR program.

Contract: reads the BIR JSON program (bir/json.py), loads one .npy per kernel input
(`--input` as every command reads it: commands/inputs.py; NAME is the input's name), runs
the simulator and writes `DIR/<name>.npy` for each kernel output in the output's dtype,
atomically (DIR is created if missing), one summary line each.
- A tensor that is both an input and an output (the klr tool's kernels list `out` among
  their inputs; the reader keeps it as an output only when the kernel never reads it) takes
  `--input` initial contents: the output keeps every element the kernel does not write.
- numpy stores bfloat16 / fp8 arrays as raw records ('<V2' / '|V1'): such a file is
  accepted as an input of that dtype and read back with
  `np.load(f).view(ml_dtypes.bfloat16)`. A 1-d array of n elements is accepted for an
  input of shape [1, n] (KLR's shape of a 1-d tensor, as `tilecc trace` writes it for a
  1-d argument).
- A wrong name, shape or dtype, an unreadable file, a KLR kernel or other file of another
  stage (named, with the command that takes it) or a simulator fault is one line on stderr
  and exit code 1.
"""

from __future__ import annotations

import argparse
import dataclasses

import numpy as np

from tilecc.bir.inst import IOTensor, Program
from tilecc.bir.json import read_program_json
from tilecc.commands.inputs import read_inputs, split_input_spec, typed
from tilecc.commands.outputs import refuse_stdout, write_results
from tilecc.commands.stages import refuse_wrong_stage
from tilecc.errors import SimError
from tilecc.fileio import read_text
from tilecc.limits import cut
from tilecc.sim.dtypes import numpy_dtype
from tilecc.sim.execute import simulate

HELP = "run a BIR program (JSON) on the simulator with .npy inputs"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("program", help="BIR program as JSON (tilecc codegen output)")
    parser.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                        help="value of kernel input NAME, or initial contents of an in/out "
                        "tensor (repeat for each input)")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="folder that receives <output name>.npy per kernel output")
    parser.add_argument("--uninit", choices=("error", "warn", "ignore"), default="error",
                        help="undefined data reaching HBM is an error (default), a warning, or ignored")


def parse_inputs(specs: list[str], tensors: list[IOTensor]) -> dict[str, np.ndarray]:
    """Tensor name -> array of the tensor's dtype for every --input naming one of `tensors`."""
    by_name = {t.name: t for t in tensors}

    def resolve(name: str) -> str:
        if name not in by_name:
            raise SimError(f"--input {name}: the kernel has no input of that name "
                           f"(inputs: {', '.join(sorted(by_name)) or 'none'})")
        return name

    files = dict(split_input_spec(spec) for spec in specs)
    inputs: dict[str, np.ndarray] = {}
    for name, value in read_inputs(specs, resolve).values():
        assert isinstance(value, np.ndarray)  # arrays only here
        tensor = by_name[name]
        dtype = numpy_dtype(tensor.dtype)
        value = typed(name, value, dtype)
        if value.ndim == 1 and tuple(tensor.shape) == (1, value.size):
            value = value.reshape(tensor.shape)
        if value.shape != tuple(tensor.shape) or value.dtype != dtype:
            raise SimError(f"--input {name}: {cut(files[name])} holds {value.dtype}"
                           f"{list(value.shape)}; the kernel's input {name} is {dtype}"
                           f"{list(tensor.shape)}")
        inputs[name] = value
    return inputs


def with_in_out_tensors(program: Program, names: set[str]) -> Program:
    """`program` with the outputs in `names` also loaded as inputs (initial contents)."""
    extra = [t for t in program.outputs if t.name in names
             and all(t.name != i.name for i in program.inputs)]
    return dataclasses.replace(program, inputs=[*program.inputs, *extra]) if extra else program


def run(args: argparse.Namespace) -> int:
    refuse_wrong_stage(args.program, "sim")
    refuse_stdout(args.out, "--out")
    path = "<stdin>" if args.program == "-" else args.program
    program = read_program_json(read_text(args.program), path)
    inputs = [*program.inputs, *(t for t in program.outputs
                                 if all(t.name != i.name for i in program.inputs))]
    given = parse_inputs(args.input, inputs)
    try:
        outputs = simulate(with_in_out_tensors(program, set(given)), given, uninit=args.uninit)
    except SimError as err:   # a fault of the program: name the file it came from
        raise SimError(f"{path}:{err}" if str(err).startswith("instructions[") else
                       f"{path}: {err}") from None
    write_results(args.out, outputs.items())
    return 0
