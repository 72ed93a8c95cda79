"""Randomly damaged KLR documents give a Kernel or a ParseError, never another exception;
what reads lowers to verified BIR or fails with a TileccError (seeded, deterministic)."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest

from tilecc.bir.verifier import verify_program
from tilecc.codegen.klr_to_bir import codegen_kernel
from tilecc.errors import ParseError, TileccError
from tilecc.klr import ast as k
from tilecc.klr import read as read_module
from tilecc.klr.json_fast import NotFast
from tilecc.klr.read import read_kernel_json

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "klr"
SOURCES = [FIXTURES.parent / "klr0012" / "k06_ts_bf16.klr.json",
           FIXTURES / "activation_accumulate.klr.json", FIXTURES / "tensor_reduce.klr.json",
           FIXTURES / "data_movement.klr.json"]
JUNK: list[Any] = [None, True, -1, 0, 3, 2 ** 40, 1.5, "inf", "", "mult", "sbuf", [], {},
                   [1, [2, 3]], {"imm": {"float": {"f": 1}}}, {"abstract": {}}]


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            out += paths(value, prefix + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += paths(value, prefix + (i,))
    return out


def mutate(doc: Any, rng: random.Random) -> Any:
    doc = copy.deepcopy(doc)
    path = rng.choice(paths(doc)[1:])
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    action = rng.random()
    if action < 0.2 and isinstance(parent, dict):
        del parent[path[-1]]
    elif action < 0.3 and isinstance(parent, list):
        parent.append(copy.deepcopy(parent[path[-1]]))
    elif action < 0.4 and isinstance(parent, dict):
        # a second key beside this one: ignored in payloads, refused in constructors
        parent[rng.choice(("extra", "reciprocal", "oper", "pos", "label"))] = copy.deepcopy(
            parent[path[-1]])
    else:
        parent[path[-1]] = copy.deepcopy(rng.choice(JUNK))
    return doc


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_mutated_documents(source: Path) -> None:
    rng = random.Random(source.stem)
    original = json.loads(source.read_text())
    outcomes = {"read": 0, "rejected": 0}
    for _ in range(150):
        text = json.dumps(mutate(original, rng))
        try:
            kernel = read_kernel_json(text, "m.json")
        except ParseError as err:
            assert err.field is not None and str(err).startswith("m.json:")
            outcomes["rejected"] += 1
            continue
        outcomes["read"] += 1
        try:
            verify_program(codegen_kernel(kernel))
        except TileccError:
            pass
    assert outcomes["rejected"] > 50


def outcome(text: str) -> Any:
    """The kernel read from `text`, or the text of its ParseError."""
    try:
        return read_kernel_json(text, "m.json")
    except ParseError as err:
        return str(err)


def declined(text: str | bytes) -> k.Kernel:
    raise NotFast


def plain_outcome(text: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The same, decoding the text with the checked reader (no fast path)."""
    with monkeypatch.context() as m:
        m.setattr(read_module, "fast_head_kernel", declined)
        return outcome(text)


TEXT_EDITS = ['"', "\\", "}", "}}", "{", '"simple":', '"simple":{"name":"x"}}', "\\u0000",
              ",", " ", '\\"simple":', "]", "1"]


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_fast_path_reads_as_the_checked_reader(source: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Compact documents take the msgspec fast path (HEAD) or the checked reader: documents
    damaged as JSON values and as raw text read to the same kernel or fail with the same
    error on both paths."""
    rng = random.Random("shared" + source.stem)
    original = json.loads(source.read_text())
    compact = json.dumps(original, separators=(",", ":"))
    kinds = {"same kernel": 0, "same error": 0}
    texts = [json.dumps(mutate(original, rng), separators=(",", ":")) for _ in range(60)]
    for _ in range(120):
        at_ = rng.randrange(len(compact))
        cut = rng.choice((0, 0, 1, 2))
        texts.append(compact[:at_] + rng.choice(TEXT_EDITS) + compact[at_ + cut:])
    for text in texts:
        got, want = outcome(text), plain_outcome(text, monkeypatch)
        assert got == want
        kinds["same error" if isinstance(want, str) else "same kernel"] += 1
    assert kinds["same kernel"] >= 5 and kinds["same error"] > 50
