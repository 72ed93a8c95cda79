"""How much work and memory one input may ask for, and how a user raises the bound.

Contract: `LIMITS` is the one table of bounds that protect a command from its input --
loop steps (weighted by the element operations of each), elements of one value, the
instructions a pass may add for one it rewrites, nesting depth, launch-grid programs, the length of an
error message line, trace steps of a kernel, the size of an integer a kernel computes with
`**`. `limit(name)` is the bound in force: the value of the limit's option inside
`raised(name, value)` (a command given the option), else the environment variable the
table names when it is set (a positive integer), else the default. An input
beyond a bound is a `LimitError` (one line naming the place, the bound and how to raise
it), never a hang, a crash or a partial result. `StepBudget` counts the steps of one long
run against a bound and shows progress on a terminal. `cut(text)` shortens user text
quoted in a message; `cut_lines(message)` cuts every line of a message the CLI prints.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
import time
from collections.abc import Iterator

from tilecc.errors import TileccError


@dataclasses.dataclass(frozen=True)
class Limit:
    default: int
    env: str
    what: str
    option: str = ""
    """the command-line option that sets it for one run, if any"""

    def how_to_raise(self) -> str:
        via = f"{self.option} or " if self.option else ""
        return f"raise it with {via}{self.env}=N"


LIMITS: dict[str, Limit] = {
    "steps": Limit(1_000_000, "TILECC_MAX_STEPS",
                   "HLO steps in one run (a step is 1024 element operations on each "
                   "device)", "--max-steps"),
    "elements": Limit(1 << 28, "TILECC_MAX_ELEMENTS",
                      "elements of one value (all devices together)"),
    "rewrite": Limit(1 << 14, "TILECC_MAX_REWRITE",
                     "instructions an HLO pass adds to rewrite one instruction"),
    "depth": Limit(100, "TILECC_MAX_DEPTH", "levels of nesting in a host program"),
    "grid": Limit(4096, "TILECC_MAX_GRID", "programs in an SPMD launch grid"),
    "trace-steps": Limit(1_000_000, "TILECC_MAX_TRACE_STEPS",
                         "trace steps (an NKI instruction traced, or one iteration of an "
                         "nl.affine_range / sequential_range / static_range loop)",
                         "--max-trace-steps"),
    "int-bits": Limit(1 << 20, "TILECC_MAX_INT_BITS",
                      "bits of an integer a kernel computes with **"),
    "message": Limit(1000, "TILECC_MAX_MESSAGE", "characters of one line of an error message"),
}


class LimitError(TileccError):
    """An input asks for more than a bound of LIMITS allows."""


# name -> the bound one command line sets with the limit's option (`raised`)
_SET_BY_OPTION: dict[str, int] = {}


@contextlib.contextmanager
def raised(name: str, bound: int | None) -> Iterator[None]:
    """`limit(name)` is `bound` inside (the value of the limit's option for one command;
    None: the option was not given, the variable or the default stays in force)."""
    if bound is None:
        yield
        return
    before = _SET_BY_OPTION.get(name)
    _SET_BY_OPTION[name] = bound
    try:
        yield
    finally:
        if before is None:
            del _SET_BY_OPTION[name]
        else:
            _SET_BY_OPTION[name] = before


def limit(name: str) -> int:
    if (bound := _SET_BY_OPTION.get(name)) is not None:
        return bound
    entry = LIMITS[name]
    text = os.environ.get(entry.env)
    if text is None:
        return entry.default
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise LimitError(f"{entry.env}={text!r}: expected a positive integer "
                         f"(the bound on {entry.what})")
    return value


def beyond(name: str, amount: int, where: str, bound: int | None = None) -> LimitError:
    """The error for `amount` > the bound `name` at `where` (an instruction, a file:line)."""
    return LimitError(f"{where}: {over(name, amount, bound)}")


def over(name: str, amount: int, bound: int | None = None) -> str:
    """The words of `beyond` without the place, for readers that add the place themselves
    (a field path of a JSON document)."""
    entry = LIMITS[name]
    bound = limit(name) if bound is None else bound
    return f"needs {amount} {entry.what}, more than the limit of {bound}; {entry.how_to_raise()}"


def cut(text: str, most: int = 200) -> str:
    """`text` whole when at most `most` characters, else its start and end around
    `...(N more characters)...`, `most` characters in all: user text (a name, a value)
    quoted in a message."""
    if len(text) <= most:
        return text
    marker_most = len(f"...({len(text)} more characters)...")
    half = max(1, (most - marker_most) // 2)
    return f"{text[:half]}...({len(text) - 2 * half} more characters)...{text[-half:]}"


def cut_lines(message: str) -> str:
    """Each line of an error message cut to the "message" bound, the one place that keeps
    a message that quotes a huge input from flooding the terminal."""
    try:
        most = limit("message")
    except LimitError:
        most = LIMITS["message"].default
    return "\n".join(cut(line, most) for line in message.split("\n"))


class StepBudget:
    """Steps of one run counted against a bound; a progress line on a terminal every
    PROGRESS_SECONDS so a long run is visibly alive and its bound visible."""

    PROGRESS_SECONDS = 2.0

    def __init__(self, bound: int | None = None, name: str = "steps") -> None:
        self.name = name
        self.bound = limit(name) if bound is None else bound
        self.used = 0
        self._next_check = 1 << 14
        self._last_progress = time.monotonic()

    def spend(self, steps: int, where: str) -> None:
        self.used += steps
        if self.used > self.bound:
            raise beyond(self.name, self.used, where, self.bound)
        if self.used >= self._next_check:
            self._next_check = self.used + (1 << 14)
            now = time.monotonic()
            if now - self._last_progress >= self.PROGRESS_SECONDS and sys.stderr.isatty():
                self._last_progress = now
                entry = LIMITS[self.name]
                print(f"... {self.used} of at most {self.bound} {entry.what} "
                      f"({entry.how_to_raise()})", file=sys.stderr, flush=True)
