"""`tilecc host-opt` keeps the input's text where the passes changed nothing: byte for byte
for an unchanged program (line endings, encoding and byte order mark included), and
otherwise only the statements the pass added or rewrote printed anew, in the rewritten
functions' bodies (tilecc/host/source_splice.py)."""

from __future__ import annotations

import dataclasses

import pytest

from tilecc.cli import main
from tilecc.host import ir
from tilecc.host.parser import parse_module
from tilecc.host.pass_manager import PassPipeline
from tilecc.host.passes import get_pass
from tilecc.host.printer import print_module
from tilecc.host.source_splice import print_keeping_source

from .conftest import HEADER, synthesize

UNCHANGED = HEADER + """\
SIZE = 64  # elements


@pl.program
class NoReduce:
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, d: pld.DistributedTensor[[SIZE],   pl.FP32]):
        return d   # odd spacing stays

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self):
        buf = pld.alloc_window_buffer(SIZE * 4)
        d = pld.window(buf, [SIZE], dtype=pl.FP32)
        return d
"""

CHANGED = HEADER + """\
@pl.program
class Two:
    # the chip side, formatted by hand
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(
        self,
        d: pld.DistributedTensor[[16], pl.FP32],  # the window
    ):
        return d

    # the host side
    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self):
        \"\"\"Reduce one window.

        Args: none; the docstring keeps its own indentation.
        \"\"\"
        buf = pld.alloc_window_buffer(64)
        d = pld.window(buf, [16], dtype=pl.FP32)  # view
        return pld.tensor.allreduce(d)
    # after the host


if __name__ == "__main__":
    print(Two)   # kept as written
"""


def run_pass(module: ir.Module) -> ir.Module:
    return PassPipeline([get_pass("synthesize-allreduce-signals")]).run(module)


def run_cli(tmp_path, data: bytes) -> tuple[int, bytes]:
    src = tmp_path / "prog.py"
    src.write_bytes(data)
    out = tmp_path / "out.py"
    code = main(["host-opt", str(src), "-o", str(out)])
    return code, out.read_bytes() if out.exists() else b""


def test_unchanged_program_is_written_byte_for_byte(tmp_path):
    for data in (UNCHANGED.encode(), UNCHANGED.replace("\n", "\r\n").encode(),
                 b"\xef\xbb\xbf" + UNCHANGED.encode(), UNCHANGED.replace("    ", "\t").encode()):
        assert run_cli(tmp_path, data) == (0, data)


def test_only_the_rewritten_function_is_printed_anew(tmp_path):
    code, out = run_cli(tmp_path, CHANGED.encode())
    assert code == 0
    text = out.decode()
    # the chip function, the comments around the host and the main block are as written
    chip_source = CHANGED[CHANGED.index("    # the chip side"):CHANGED.index("    # the host side")]
    assert chip_source in text
    assert text.endswith("    # after the host\n\n\nif __name__ == \"__main__\":\n    print(Two)   # kept as written\n")
    assert "        return __allreduce_result_1\n" in text
    # the host's header and docstring are as written too: only its body is printed anew
    assert ('    def host(self):\n        """Reduce one window.\n\n        Args: none; the docstring keeps its own '
            'indentation.\n        """\n        __allreduce_signal_world_size_0 = pld.system.world_size()\n') in text
    # and in the body, the statements the pass kept are as written, comments on their lines too
    assert ("\"\"\"\n        __allreduce_signal_world_size_0 = pld.system.world_size()\n" in text
            and "        buf = pld.alloc_window_buffer(64)\n        d = pld.window(buf, [16], dtype=pl.FP32)  # view\n"
            "        __allreduce_result_1 = pld.tensor.allreduce(d, __allreduce_signal_0)\n" in text)
    # and the whole is the pass's result, its docstring unchanged
    result = synthesize(CHANGED)
    assert parse_module(text) == result
    assert result.programs[0].function("host").doc.startswith("Reduce one window.\n\n        Args")


def test_line_endings_byte_order_mark_and_tabs_are_kept_in_rewritten_functions(tmp_path):
    crlf = CHANGED.replace("\n", "\r\n").encode()
    code, out = run_cli(tmp_path, b"\xef\xbb\xbf" + crlf)
    assert code == 0 and out.startswith(b"\xef\xbb\xbf")
    assert b"\n" not in out.replace(b"\r\n", b"")
    assert parse_module(out[3:].decode().replace("\r\n", "\n")) == synthesize(CHANGED)
    tabs = CHANGED.replace("    ", "\t")
    code, out = run_cli(tmp_path, tabs.encode())
    assert code == 0
    assert "\n\t\t__allreduce_signal_0 = pld.tensor.window(" in out.decode()
    assert parse_module(out.decode()) == synthesize(tabs)


@pytest.mark.parametrize("header", [
    "    def host(\n        self,\n    ):  # a comment on the header's last line\n",
    "    def host(self): pld.tensor.allreduce(d_global)\n",
    "    def host(self):\n\n        # a comment after a blank line\n\n",
])
def test_headers_the_body_cannot_be_cut_from_still_give_the_pass_result(header):
    source = HEADER + "@pl.program\nclass H:\n    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)\n" + header
    if not header.endswith(")\n"):
        source += "        d = pld.tensor.allreduce(d_global)\n        return d\n"
    before = parse_module(source)
    after = run_pass(before)
    assert parse_module(print_keeping_source(source, before, after)) == after


def test_a_change_beyond_functions_prints_the_whole_module():
    before = parse_module(CHANGED)
    after = synthesize(CHANGED)
    renamed = ir.Module(tuple(dataclasses.replace(i, name="Renamed") if isinstance(i, ir.Program) else i
                              for i in after.items))
    assert print_keeping_source(CHANGED, before, renamed) == print_module(renamed)
    assert print_keeping_source(CHANGED, before, after, verify=False) == print_keeping_source(CHANGED, before, after)
    assert print_keeping_source(CHANGED, before, before) is CHANGED


def test_input_that_is_not_utf8_is_a_one_line_error(tmp_path, capsys):
    for data, reason in ((b"x = '\xff'\n", "not UTF-8 text, and no `# -*- coding: ... -*-` line declares"),
                         (b"# -*- coding: klingon -*-\n", "unknown encoding: klingon"),
                         (b"a = 1\nb = 2\nx = '\xff'\n", ":3:6: error: not UTF-8 text: byte 0xff (invalid start byte)")):
        code, out = run_cli(tmp_path, data)
        assert code == 1 and out == b""
        err = capsys.readouterr().err
        assert reason in err and err.count("\n") == 1


def test_a_declared_encoding_is_read_and_written(tmp_path):
    source = "# -*- coding: latin-1 -*-\n" + CHANGED.replace("the host side", "the h\xf4te side")
    code, out = run_cli(tmp_path, source.encode("latin-1"))
    assert code == 0
    text = out.decode("latin-1")
    assert "    # the h\xf4te side\n" in text and parse_module(text) == synthesize(source)


LOOPS = HEADER + """\
@pl.program
class Loops:
    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, flag: pl.Scalar[pl.BOOL], n: pl.Scalar[pl.INT32]):
        buf = pld.alloc_window_buffer(64)
        d = pld.window(buf,
                       [16], dtype=pl.FP32)   # kept as written

        for i in pl.range(n):  # the loop
            x = (i +
                 1)
            if flag:   # branch
                d = pld.tensor.allreduce(d)
            elif n > 2:
                pld.tensor.allreduce(d, op=pld.ReduceOp.Max)
            else:
                pass  # nothing
        while n > 0:
            n = n - 1
        return d
"""


def test_kept_statements_of_a_rewritten_body_keep_their_text():
    before = parse_module(LOOPS)
    result = run_pass(before)
    out = print_keeping_source(LOOPS, before, result)
    assert parse_module(out) == result
    # the output is the input with the three bindings added and the two calls rewritten
    added = [line for line in out.split("\n") if line not in LOOPS.split("\n")]
    assert added == [
        "        __allreduce_signal_world_size_0 = pld.system.world_size()",
        "        __allreduce_signal_buf_0: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_0 "
        "* 1 * pl.INT32.get_byte())",
        "        __allreduce_signal_0 = pld.tensor.window(__allreduce_signal_buf_0, [__allreduce_signal_world_size_0, "
        "1], dtype=pl.INT32)",
        "                d = pld.tensor.allreduce(d, __allreduce_signal_0)",
        "                pld.tensor.allreduce(d, __allreduce_signal_0, op=pld.ReduceOp.Max)",
    ]
    removed = [line for line in LOOPS.split("\n") if line not in out.split("\n")]
    assert removed == ["                d = pld.tensor.allreduce(d)",
                       "                pld.tensor.allreduce(d, op=pld.ReduceOp.Max)"]
