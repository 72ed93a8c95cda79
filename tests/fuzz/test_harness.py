"""The fuzzing harness itself: mutants are reproducible, each class is recognised from its
evidence, the fork server and a fresh interpreter classify alike, the minimizer shrinks."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tilecc.fuzz.minimize import minimize
from tilecc.fuzz.mutators import KINDS, MUTATOR_SETS, mutate
from tilecc.fuzz.runner import Case, ForkServer, Outcome, classify, run_subprocess
from tilecc.fuzz.targets import TARGETS, available

REPO = Path(__file__).resolve().parents[2]
HLO = (REPO / "examples" / "hlo" / "psum_max.hlo").read_bytes()
LOOP = b"""HloModule m
cond {
  p = s32[] parameter(0)
  n = s32[] constant(2147483647)
  ROOT lt = pred[] compare(p, n), direction=LT
}
body {
  p = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT a = s32[] add(p, one)
}
ENTRY e {
  z = s32[] constant(0)
  ROOT w = s32[] while(z), condition=cond, body=body
}
"""


@pytest.mark.parametrize("kind", KINDS)
def test_a_mutant_is_a_function_of_its_seed(kind):
    data = HLO if kind != "npy" else b"\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': " \
        b"False, 'shape': (2,), }" + b" " * 60 + b"\n" + bytes(8)
    first = [mutate(data, kind, random.Random(f"s{i}")) for i in range(20)]
    again = [mutate(data, kind, random.Random(f"s{i}")) for i in range(20)]
    assert first == again
    assert len(set(first)) > 10 and data not in first[:3]


def test_the_two_mutator_families_share_no_structured_mutator():
    for kind in KINDS:
        assert not set(MUTATOR_SETS["main"][kind]) & set(MUTATOR_SETS["held-out"][kind])


def _case(files=None, argv=None, outputs=("out.hlo",), codes=(0, 1)):
    return Case("hlo-opt", argv or [], files if files is not None else {"in.hlo": b"x"},
                list(outputs), codes)


@pytest.mark.parametrize("returncode, timed_out, stderr, written, expected", [
    (0, False, "", {"out.hlo": b"m"}, "ok"),
    (1, False, "in.hlo:1:1: error: bad\n", {}, "clean error"),
    (1, False, "Traceback (most recent call last):\n  ...\nValueError\n", {}, "traceback"),
    (None, True, "", {}, "hang"),
    (-24, False, "", {}, "hang"),          # SIGXCPU: over the CPU-time limit
    (-11, False, "", {}, "killed"),
    (3, False, "error: x\n", {}, "bad exit code"),
    (1, False, "", {}, "bad exit code"),   # no message at all
    (1, False, "error: " + "x" * 600 + "\n", {}, "bad exit code"),   # uncut
    (1, False, "a\nb\nc\nd\n", {}, "bad exit code"),   # more than message, line and caret
    (1, False, "p: no change\nverify: running\nf:1:1: error: x\n  y\n  ^\n", {}, "clean error"),
    (1, False, "p: changed\nerror: x\na\nb\nc\n", {}, "bad exit code"),
    (1, False, "p: changed\n" * 9 + "error: x\n", {}, "bad exit code"),
    (1, False, "error: x\n", {"in.hlo": b"changed"}, "input modified"),
    (1, False, "error: x\n", {"out.hlo": b"half"}, "partial output"),
    (1, False, "error: x\n", {".out.hlo.abc.tmp": b"half"}, "partial output"),
    (0, False, "", {}, "partial output"),   # success without the output
])
def test_classify_reads_the_evidence(returncode, timed_out, stderr, written, expected, tmp_path):
    case = _case()
    (tmp_path / "in.hlo").write_bytes(b"x")
    for name, data in written.items():
        (tmp_path / name).write_bytes(data)
    assert classify(case, tmp_path, returncode, timed_out, stderr) == expected


def test_an_empty_folder_of_outputs_is_a_success(tmp_path):
    # a BIR program whose outputs list was emptied runs and writes no file
    (tmp_path / "in.hlo").write_bytes(b"x")
    (tmp_path / "o").mkdir()
    assert classify(_case(outputs=("o",)), tmp_path, 0, False, "") == "ok"
    (tmp_path / "o").rmdir()
    assert classify(_case(outputs=("o",)), tmp_path, 0, False, "") == "partial output"


def test_a_vertical_tab_in_a_message_does_not_count_as_a_line(tmp_path):
    (tmp_path / "in.hlo").write_bytes(b"x")
    assert classify(_case(), tmp_path, 1, False, "f:1:1: error: a\nsource \x0b x\n ^\n",
                    ) == "clean error"


@pytest.fixture(scope="module")
def server():
    return ForkServer(cpu_limit=2)


@pytest.mark.parametrize("name, files, argv, outputs, expected", [
    ("ok", {"in.hlo": HLO}, ["hlo-opt", "in.hlo", "--passes=decompose-int-all-reduce", "-o",
                             "out.hlo"], ["out.hlo"], "ok"),
    ("clean", {"in.hlo": HLO[:40]}, ["hlo-opt", "in.hlo", "--passes=decompose-int-all-reduce",
                                     "-o", "out.hlo"], ["out.hlo"], "clean error"),
    ("usage", {"in.hlo": HLO}, ["hlo-opt", "in.hlo", "--no-such-flag"], [], "clean error"),
    ("hang", {"in.hlo": LOOP}, ["run", "in.hlo", "--max-steps", "1000000000000", "--out", "o"],
     ["o"], "hang"),
])
def test_the_fork_server_classifies_like_a_fresh_interpreter(name, files, argv, outputs, expected,
                                                             server):
    case = Case(argv[0], argv, files, outputs)
    forked = server.run(case)
    fresh = run_subprocess(case, cpu_limit=2)
    assert (forked.klass, fresh.klass) == (expected, expected), (forked.stderr, fresh.stderr)
    assert forked.returncode == fresh.returncode or expected == "hang"


def test_the_minimizer_keeps_only_what_makes_the_failure():
    noise = b"".join(f"line {i}\n".encode() for i in range(200))
    case = _case({"in.hlo": noise[:700] + b"xxBADxx\n" + noise[700:]})

    def run(c: Case) -> Outcome:
        return Outcome("traceback" if b"BAD" in c.files["in.hlo"] else "clean error", 1, "", 0.0)
    small = minimize(case, run, "traceback", ["in.hlo"], budget=400)
    assert small.files["in.hlo"] == b"BAD"


def test_every_target_makes_cases_from_real_fixtures():
    if not available():
        pytest.skip("needs a source checkout (examples/ and tests/fixtures/)")
    for name, target in TARGETS.items():
        case, mutated = target.case_at("t", 0)
        assert case.command == target.command and case.argv[0] == target.command
        assert all(m in case.files for m in mutated), name
        assert len(target.all_seeds()) >= 3, name
