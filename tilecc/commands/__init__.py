"""Subcommands of the `tilecc` command line (see tilecc.cli for the module contract), and the
argparse value types they share."""

from __future__ import annotations

import argparse


def seed_value(text: str) -> int:
    """A `--seed`: numpy's generators take non-negative integers only."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer seed, got '{text}'") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer seed, got {value}")
    return value


def step_count(text: str) -> int:
    """A bound given on the command line (`--max-steps`, `--max-trace-steps`): a positive
    integer."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number of steps, got '{text}'")
    return value
