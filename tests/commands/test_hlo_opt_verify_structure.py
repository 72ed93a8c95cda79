"""`tilecc hlo-opt --verify` reads the module once and checks it without a text round trip:
one parse, one clone (the module before the passes), one print (the output), whatever
route a parse or print would take (the parser class and the per-computation printer are
counted, not one imported name)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tilecc.cli import main
from tilecc.hlo import clone, printer
from tilecc.hlo.parser import _Parser, parse_module

from test_hlo_opt import MODULE   # an all-reduce and a scalar reduce: both passes match

PASSES = "--passes=decompose-int-all-reduce,decompose-scalar-reduce"


@pytest.fixture
def counted(monkeypatch) -> Counter:
    calls: Counter = Counter()

    def counting(key, fn):
        def wrapper(*args, **kwargs):
            calls[key] += 1
            return fn(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(_Parser, "parse", counting("parse", _Parser.parse))
    monkeypatch.setattr(clone, "clone_module", counting("clone", clone.clone_module))
    monkeypatch.setattr(printer, "print_computation",
                        counting("print computation", printer.print_computation))
    return calls


@pytest.mark.parametrize("oracle", [[], ["--oracle=interpreter"]])
def test_verify_parses_once_clones_once_prints_only_the_output(
        counted: Counter, oracle: list[str], tmp_path: Path, capsys) -> None:
    source = tmp_path / "in.hlo"
    source.write_text(MODULE)
    out = tmp_path / "out.hlo"
    assert main(["hlo-opt", str(source), PASSES, "-o", str(out), "--verify", *oracle]) == 0
    assert "output 0: equal" in capsys.readouterr().err
    module_computations = 3  # add_s32, max_s32, main: printed once, for the output file
    assert counted == Counter({"parse": 1, "clone": 1,
                               "print computation": module_computations})
    rewritten = parse_module(out.read_text())
    assert "all-reduce" not in [i.opcode.mnemonic for i in rewritten.entry.instructions]


def test_without_verify_nothing_is_cloned(counted: Counter, tmp_path: Path) -> None:
    source = tmp_path / "in.hlo"
    source.write_text(MODULE)
    assert main(["hlo-opt", str(source), PASSES, "-o", str(tmp_path / "out.hlo")]) == 0
    assert counted == Counter({"parse": 1, "print computation": 3})
