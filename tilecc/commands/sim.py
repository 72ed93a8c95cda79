"""`tilecc sim PROGRAM.bir.json --input NAME=FILE.npy ... --out DIR`: run a BIR program.

Contract: reads the BIR JSON program (bir/json.py), loads one .npy per kernel input (NAME
is the input's name; a tensor that is both input and output is given as an input and keeps
the values the kernel does not write), runs the simulator and writes `DIR/<name>.npy` for
each kernel output in the output's dtype, atomically (DIR is created if missing). numpy
stores bfloat16 / fp8 arrays as raw records ('<V2' / '|V1'): such a file is accepted as an
input of that dtype and read back with `np.load(f).view(ml_dtypes.bfloat16)`. A 1-d array
of n elements is accepted for an input of shape [1, n] (KLR's shape of a 1-d tensor, as
`tilecc trace` writes it for a 1-d argument). A wrong
name, shape or dtype, an unreadable file or a simulator fault is one line on stderr and
exit code 1.
"""

from __future__ import annotations

import argparse

import numpy as np

from tilecc.bir.json import read_program_json
from tilecc.errors import SimError, TileccError
from tilecc.fileio import load_npy, read_text, split_input_spec, write_npy_outputs
from tilecc.sim.dtypes import numpy_dtype
from tilecc.sim.execute import simulate

HELP = "run a BIR program (JSON) on the simulator with .npy inputs"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("program", help="BIR program as JSON (tilecc codegen output)")
    parser.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                        help="value of kernel input NAME (repeat for each input)")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="folder that receives <output name>.npy per kernel output")
    parser.add_argument("--uninit", choices=("error", "warn", "ignore"), default="error",
                        help="undefined data reaching HBM is an error (default), a warning, or ignored")


def parse_inputs(specs: list[str], expected: dict[str, np.dtype],
                 shapes: dict[str, tuple[int, ...]] | None = None) -> dict[str, np.ndarray]:
    inputs: dict[str, np.ndarray] = {}
    for spec in specs:
        name, path = split_input_spec(spec)
        if name in inputs:
            raise TileccError(f"--input {name!r} is given twice")
        if name not in expected:
            raise SimError(f"--input {name!r}: the kernel has no input of that name "
                           f"(inputs: {', '.join(sorted(expected)) or 'none'})")
        value = load_npy(path, f"input {name!r}")
        want = expected[name]
        # numpy writes ml_dtypes arrays as raw records of the same size
        if value.dtype.kind == "V" and value.dtype.itemsize == want.itemsize:
            value = value.view(want)
        if shapes is not None and value.ndim == 1 and shapes[name] == (1, value.size):
            value = value.reshape(shapes[name])
        if shapes is not None and (value.shape != shapes[name] or value.dtype != want):
            raise SimError(f"--input {name}={path}: {value.dtype}{list(value.shape)}, but the "
                           f"kernel input {name!r} is {want}{list(shapes[name])}")
        inputs[name] = value
    return inputs


def run(args: argparse.Namespace) -> int:
    path = "<stdin>" if args.program == "-" else args.program
    program = read_program_json(read_text(args.program), path)
    expected = {t.name: numpy_dtype(t.dtype) for t in program.inputs}
    shapes = {t.name: tuple(t.shape) for t in program.inputs}
    inputs = parse_inputs(args.input, expected, shapes)
    try:
        outputs = simulate(program, inputs, uninit=args.uninit)
    except SimError as err:   # a fault of the program: name the file it came from
        raise SimError(f"{path}:{err}" if str(err).startswith("instructions[") else
                       f"{path}: {err}") from None
    write_npy_outputs(args.out, outputs.items())
    return 0
