"""`tilecc nki-shim -- COMMAND ...`: run a command with `neuronxcc.nki` / `nki` imports
resolving to tilecc's frontend (tilecc/nki/shim.py).

Contract: COMMAND (e.g. `pytest test_nki_isa_tensor_scalar.py`, `python script.py`) runs
in a child process whose Python interpreters install the shim at start-up; the exit code
is COMMAND's. A missing command is one line and exit 1; a command that cannot be started
is named with the reason, exit 1. Nothing is left behind in the temporary folder.
"""

from __future__ import annotations

import argparse
import subprocess

from tilecc.errors import TileccError

HELP = "run COMMAND (pytest ..., python script.py) with neuronxcc.nki / nki imports resolved to tilecc"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("command", nargs=argparse.REMAINDER,
                        help="the command to run, after `--` (e.g. -- pytest test_file.py)")


def run(args: argparse.Namespace) -> int:
    command = [part for part in args.command]
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise TileccError("nki-shim: expected a command after `--` (e.g. tilecc nki-shim -- pytest tests/)")
    from tilecc.nki.shim import command_environment
    try:
        with command_environment() as env:
            return subprocess.call(command, env=env)
    except OSError as err:
        raise TileccError(f"nki-shim: cannot run {command[0]!r}: {err.strerror or err}") from None
