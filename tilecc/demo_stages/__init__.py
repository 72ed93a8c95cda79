"""Stages of `tilecc demo`, one module per component.

Contract: a stage module exposes `TITLE` and `run_stage(examples: Path, out: TextIO) -> bool`;
it reads its bundled inputs under `examples/`, prints what it did to `out`, and returns
False when a check it makes fails (the demo then exits 1).
"""
