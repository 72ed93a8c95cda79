"""Randomly damaged BIR documents give a Program or a ParseError, and the verifier accepts
or raises VerifyError, never another exception (seeded, deterministic)."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest

from tilecc.bir.json import read_program_json
from tilecc.bir.verifier import verify_program
from tilecc.errors import ParseError, VerifyError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "klr"
SOURCES = ["activation_accumulate", "tensor_scalar_variants", "tensor_reduce", "exponential",
           "data_movement", "scalar_tensor_tensor"]
JUNK: list[Any] = [None, True, -1, 0, 1, 5, 32, 2 ** 40, 1.5, "nan", "", "C", "DVE", "SB",
                   "float32", "int32", [], {}, [[1, 1]], [[0, 128], [1, 0]], {"dtype": "int32"}]


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            out += paths(value, prefix + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += paths(value, prefix + (i,))
    return out


@pytest.mark.parametrize("case", SOURCES)
def test_mutated_programs(case: str) -> None:
    rng = random.Random(case)
    original = json.loads((FIXTURES / f"{case}.bir.json").read_text())
    all_paths = paths(original)[1:]
    counts = {"parse": 0, "verify": 0, "ok": 0}
    for _ in range(200):
        doc = copy.deepcopy(original)
        path = rng.choice(all_paths)
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        if rng.random() < 0.2 and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = copy.deepcopy(rng.choice(JUNK))
        try:
            program = read_program_json(json.dumps(doc), "m.bir.json")
        except ParseError:
            counts["parse"] += 1
            continue
        try:
            verify_program(program)
            counts["ok"] += 1
        except VerifyError:
            counts["verify"] += 1
    assert counts["parse"] > 50 and counts["verify"] > 5
