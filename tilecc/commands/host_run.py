"""`tilecc host-run PROGRAM.py [--ranks N]`: run a pypto host program on N ranks.

Contract: parses PROGRAM.py, runs the host passes (--passes, default
synthesize-allreduce-signals, so implicit allreduces get their signals) and runs the host
function (--function, default: the program's only host orchestrator) of --program (default:
the file's only program) on every rank.
- Backend: launched under `mpiexec -n N` (MPI's launcher environment is present), every
  process is one rank of the MPI backend (tilecc/host/runtime/mpi_world.py) and --ranks,
  if given, must equal N; otherwise the ranks are threads of this process (--ranks,
  default 1). Both print the same text and write the same files for the same input.
- Arguments: --input NAME=FILE.npy or NAME=INT per parameter; the others are built from
  the annotations with --seed (host_inputs.py); --dim NAME=INT sizes pl.dynamic dimensions.
- Output: for every rank r and returned value k one line `rank r out<k>: dtype[shape]
  sha256 <first 16 hex digits of the bytes>`; with --out DIR also DIR/out<k>.npy holding
  every rank's value stacked on a leading rank axis.
- A rank that fails or times out (--timeout seconds per wait) stops every rank; the run
  prints one line `error: rank r ...` naming it and exits 1 (under MPI, from rank 0 only,
  every process exiting 1).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from typing import Any

import numpy as np

from tilecc.commands import seed_value
from tilecc.commands.host_opt import decode_source
from tilecc.errors import TileccError
from tilecc.commands.inputs import ARRAY, NUMBER, read_inputs
from tilecc.fileio import read_bytes, write_npy_outputs
from tilecc.host import ir
from tilecc.host.parser import parse_module
from tilecc.host.passes import build_pipeline, pass_names
from tilecc.host.runtime.host_inputs import host_arguments
from tilecc.host.runtime.world import Window
from tilecc.mpi_launch import under_mpiexec

HELP = "run a pypto host program on N ranks (threads, or MPI processes under mpiexec)"


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got '{text}'") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got '{text}'") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("program", metavar="PROGRAM.py", help="pypto host program")
    parser.add_argument("--ranks", type=positive, default=None,
                        help="number of ranks (threads; under mpiexec: the process count)")
    parser.add_argument("--program", dest="program_name", default=None, help="the @pl.program class to run")
    parser.add_argument("--function", default=None, help="the host function to run")
    parser.add_argument("--passes", default="synthesize-allreduce-signals",
                        help="host passes run first, comma-separated ('' for none; default: %(default)s)")
    parser.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                        help="a host argument: an array file or NAME=INT (repeatable)")
    parser.add_argument("--dim", action="append", default=[], metavar="NAME=INT",
                        help="the value of a pl.dynamic dimension (repeatable)")
    parser.add_argument("--seed", type=seed_value, default=0, help="seed of generated arguments")
    parser.add_argument("--timeout", type=seconds, default=20.0, help="seconds a rank waits (default 20)")
    parser.add_argument("--out", default=None, metavar="DIR", help="folder for out<k>.npy")


def _pick(names: list[str], given: str | None, what: str, path: str) -> str:
    if given is not None:
        if given not in names:
            raise TileccError(f"{path}: no {what} `{given}` (found: {', '.join(names) or 'none'})")
        return given
    if len(names) != 1:
        raise TileccError(f"{path}: {len(names)} {what}s ({', '.join(names) or 'none'}); choose one with --{what}")
    return names[0]


def _int_option(spec: str, option: str) -> tuple[str, int]:
    name, _, text = spec.partition("=")
    try:
        return name, int(text)
    except ValueError:
        raise TileccError(f"--{option} {spec!r}: expected NAME=INT") from None


def load_program(args: argparse.Namespace) -> tuple[ir.Module, str, ir.Function, list[Any]]:
    path = args.program
    text, _, _ = decode_source(read_bytes(path), path)
    module = parse_module(text, path)
    module = build_pipeline(pass_names(args.passes), path=path).run(module)
    program = _pick([p.name for p in module.programs], args.program_name, "program", path)
    prog = module.program(program)
    hosts = [f.name for f in prog.functions if f.is_host_orchestrator] if args.function is None \
        else [f.name for f in prog.functions]
    function = prog.function(_pick(hosts, args.function, "function", path))
    given: dict[str, Any] = {}
    for name, value in read_inputs(list(args.input), lambda name: name, (ARRAY, NUMBER)).values():
        given[name] = value
    dims = dict(_int_option(spec, "dim") for spec in args.dim)
    return module, program, function, host_arguments(module, function, given, dims, args.seed)


def as_array(value: Any, local: Any) -> np.ndarray:
    if isinstance(value, Window):
        return np.array(local(value))
    if isinstance(value, tuple):
        raise TileccError("host-run prints one returned value per rank; the function returns a tuple")
    return np.array(value)


def report(per_rank: list[list[np.ndarray]], out: str | None) -> None:
    for rank, values in enumerate(per_rank):
        for k, array in enumerate(values):
            digest = hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()[:16]
            print(f"rank {rank} out{k}: {array.dtype}{list(array.shape)} sha256 {digest}")
    if out is not None and per_rank and per_rank[0]:
        write_npy_outputs(out, ((f"out{k}", np.stack([values[k] for values in per_rank]))
                                for k in range(len(per_rank[0]))))


def _values(result: Any, local: Any) -> list[np.ndarray]:
    return [] if result is None else [as_array(result, local)]


def run(args: argparse.Namespace) -> int:
    if under_mpiexec():
        return run_mpi(args)
    from tilecc.host.runtime.interpreter import run_host
    from tilecc.host.runtime.world import World
    module, program, function, host_args = load_program(args)
    ranks = args.ranks or 1
    world = World(ranks, args.timeout)
    results = run_host(module, program, function.name, ranks, host_args, world=world, path=args.program)
    report([_values(res, lambda w, r=r: w.local(world, r)) for r, res in enumerate(results)], args.out)
    return 0


def run_mpi(args: argparse.Namespace) -> int:
    from tilecc.host.runtime.mpi_world import MpiWorld
    world = MpiWorld(args.timeout)
    try:
        return _run_on(world, args)
    finally:   # collective, and every process gets here: no rank leaves windows behind
        world.free()


def _run_on(world: Any, args: argparse.Namespace) -> int:
    from tilecc.host.runtime.mpi_run import run_host_mpi
    try:
        if args.ranks is not None and args.ranks != world.world_size:
            raise TileccError(f"--ranks {args.ranks} but mpiexec started {world.world_size} processes")
        module, program, function, host_args = load_program(args)
    except TileccError:   # every process reads the same input: rank 0 reports it
        if world.rank == 0:
            raise
        return 1
    outcome = run_host_mpi(module, program, function.name, host_args, args.timeout, world=world,
                           path=args.program)
    values: list[np.ndarray] | str = []
    if outcome.error is None:
        try:
            values = _values(outcome.result, lambda w: w.local(world, world.rank))
        except TileccError as err:
            values = str(err)
    gathered = world.comm.gather(values, root=0)
    if world.rank != 0:
        return 1 if outcome.error is not None or isinstance(values, str) else 0
    if outcome.error is not None:
        raise outcome.error
    if (problem := next((v for v in gathered if isinstance(v, str)), None)) is not None:
        raise TileccError(problem)
    report(gathered, args.out)
    sys.stdout.flush()
    return 0
