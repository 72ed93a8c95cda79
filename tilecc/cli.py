"""The `tilecc` command line: one subcommand per job, each in `tilecc/commands/<name>.py`.

Contract: a command module exposes `HELP` (one line), `add_arguments(parser)` and
`run(args) -> int` (the exit code). Command modules are imported only when their
subcommand runs, so `tilecc --help` stays fast. Any TileccError becomes one message on
stderr (each line cut to tilecc.limits' "message" length) and exit code 1 -- never a
traceback for a user error; Ctrl-C ends the command with one line and exit code 130.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import NoReturn

from tilecc import __version__
from tilecc.errors import ParseError, TileccError
from tilecc.limits import cut_lines

# subcommand -> module under tilecc.commands (the order is the order of `tilecc --help`)
COMMANDS: dict[str, str] = {
    "demo": "demo",
    "hlo-opt": "hlo_opt",
    "hlo-graph": "hlo_graph",
    "run": "run",
    "codegen": "codegen",
    "sim": "sim",
    "trace": "trace",
    "nki": "nki",
    "nki-shim": "nki_shim",
    "host-opt": "host_opt",
    "host-run": "host_run",
}


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad command line is one line and exit code 1 like any user error
    (argparse's own exit code 2 is `hlo-opt --verify`'s "mismatch")."""

    def error(self, message: str) -> NoReturn:
        self.exit(1, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser(selected: str | None) -> argparse.ArgumentParser:
    parser = _Parser(
        prog="tilecc",
        description="Reduction and collective lowering for 128-partition tile accelerators: "
                    "XLA HLO passes, KLR -> BIR codegen and simulator, host DSL passes.")
    parser.add_argument("--version", action="version", version=f"tilecc {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module_name in COMMANDS.items():
        if selected is not None and name != selected:
            sub.add_parser(name)
            continue
        module = importlib.import_module(f"tilecc.commands.{module_name}")
        cmd = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(cmd)
        cmd.set_defaults(_run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args: argparse.Namespace | None = None
    try:   # from the start: Ctrl-C while a command module imports is one line too
        selected = next((a for a in argv if a in COMMANDS), None)
        parser = build_parser(selected)
        args = parser.parse_args(argv)
        if getattr(args, "_run", None) is None:
            parser.print_help()
            return 1
        return int(args._run(args))
    except ParseError as err:
        print(cut_lines(err.render()), file=sys.stderr)
        return 1
    except TileccError as err:
        print(cut_lines(f"error: {err}"), file=sys.stderr)
        return 1
    except MemoryError as err:   # sizes from the input (--replicas, a shape, a launch grid)
        where = next((f"{v}: " for a in ("target", "input", "program", "kernel")
                      if isinstance(v := getattr(args, a, None), str)), "")
        print(cut_lines(f"error: {where}out of memory{f': {err}' if str(err) else ''}"),
              file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print("tilecc: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
