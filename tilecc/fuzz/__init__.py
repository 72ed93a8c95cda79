"""Fuzzing tilecc as a hostile user would: mutants of the real fixtures of every input
format run through every command, each classified against the bad-input promise.

mutators.py makes the mutants, targets.py pairs fixtures with command lines, runner.py
runs one case (fork server or fresh interpreter) and classifies it, minimize.py shrinks a
failure, campaign.py runs many in parallel. tests/fuzz runs short seeded campaigns;
bench/fuzz.py runs the long ones.
"""
