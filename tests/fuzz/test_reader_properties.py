"""Each reader on arbitrary input, at the API level: it returns a value or raises one of
tilecc's own exceptions (TileccError), never anything else -- no IndexError, RecursionError,
UnicodeError or numpy exception escapes. Inputs are real fixtures with hypothesis' edits
(insertions of hostile snippets, deletions, truncations) and free text; derandomized, so a
failure is reproducible and CI deterministic."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tilecc.bir.json import read_program_json
from tilecc.errors import TileccError
from tilecc.commands.inputs import load_array
from tilecc.fileio import parse_json_text
from tilecc.hlo.parser import parse_module as parse_hlo
from tilecc.hlo.verifier import verify_module
from tilecc.host.parser import parse_module as parse_host
from tilecc.klr.read import read_kernel_json
from tilecc.nki.loader import split_target

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

SNIPPETS = ["\n" * 30, " " * 30, "//", "/*", "*/", "{", "}", "[", "]", "(", ")", ",", "=", "\"",
            "'", "\\", "\x00", "\x0b", "\x85", "\u2028", "-1", "99999999999999999999", "1e309",
            "nan", "-" * 300, "[" * 300, "ROOT ", "ENTRY ", "%", ":", "null", "true", "{}", "[]"]


def edited(text: str) -> st.SearchStrategy[str]:
    """`text` with a few insertions, deletions and a possible truncation."""
    @st.composite
    def build(draw: Callable[..., Any]) -> str:
        out = text
        for _ in range(draw(st.integers(1, 4))):
            at = draw(st.integers(0, len(out)))
            if draw(st.booleans()):
                out = out[:at] + draw(st.sampled_from(SNIPPETS) | st.text(max_size=8)) + out[at:]
            else:
                out = out[:at] + out[at + draw(st.integers(1, 40)):]
        if draw(st.integers(0, 4)) == 0:
            out = out[:draw(st.integers(0, len(out)))]
        return out
    return build()


def only_tilecc_errors(read: Callable[[], object]) -> None:
    try:
        read()
    except TileccError:
        pass


HLO = [(FIXTURES / "hlo" / n).read_text() for n in ("psum_max.short.hlo", "ops_mix.short.hlo")]
KLR = [(FIXTURES / "klr" / "activate2.klr.json").read_text(),
       (FIXTURES / "klr0012" / "k02_ts_two_ops.klr.json").read_text()]
BIR = [(FIXTURES / "klr" / "tensor_reduce.bir.json").read_text()]
HOST = [(REPO / "examples" / "host" / "allreduce_mesh.py").read_text(),
        (REPO / "tests" / "host" / "corpus" / "c01_builder_reveal.py").read_text()]


@SETTINGS
@given(st.sampled_from(HLO).flatmap(edited) | st.text(max_size=200))
def test_hlo_parser_and_verifier(text: str) -> None:
    def read() -> None:
        verify_module(parse_hlo(text, "fuzz.hlo"))
    only_tilecc_errors(read)


@SETTINGS
@given(st.sampled_from(KLR).flatmap(edited) | st.text(max_size=200))
def test_klr_reader_both_forms(text: str) -> None:
    only_tilecc_errors(lambda: read_kernel_json(text, "fuzz.klr.json"))


@SETTINGS
@given(st.sampled_from(BIR).flatmap(edited) | st.text(max_size=200))
def test_bir_reader(text: str) -> None:
    only_tilecc_errors(lambda: read_program_json(text, "fuzz.bir.json"))


@SETTINGS
@given(st.sampled_from(HOST).flatmap(edited) | st.text(max_size=200))
def test_host_parser(text: str) -> None:
    only_tilecc_errors(lambda: parse_host(text, "fuzz.py"))


@SETTINGS
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3) |
                    st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=20))
def test_json_documents_of_any_shape(doc: object) -> None:
    text = json.dumps(doc)
    only_tilecc_errors(lambda: parse_json_text(text, "fuzz.json"))
    only_tilecc_errors(lambda: read_kernel_json(text, "fuzz.klr.json"))
    only_tilecc_errors(lambda: read_program_json(text, "fuzz.bir.json"))


def _npy_bytes() -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.arange(12, dtype=np.float32).reshape(3, 4))
    return buffer.getvalue()


@SETTINGS
@given(st.builds(lambda cut, at, junk: (_npy_bytes()[:at] + junk + _npy_bytes()[at:])[:cut],
                 st.integers(0, 200), st.integers(0, 200), st.binary(max_size=12)))
def test_npy_reader(data: bytes) -> None:
    def read() -> None:
        path = Path(f"/tmp/tilecc-fuzz-{id(data)}.npy")
        path.write_bytes(data)
        try:
            load_array("a", str(path))
        finally:
            path.unlink()
    only_tilecc_errors(read)


@SETTINGS
@given(st.text(max_size=40))
def test_kernel_targets(target: str) -> None:
    only_tilecc_errors(lambda: split_target("k.py:" + target))
