"""Comments survive parse -> print and the pass (tilecc/host/comments.py): attached to the
statement, function or program they precede, printed at the right indentation, whatever
characters they hold."""

from __future__ import annotations

import pytest

from tilecc.host import ir
from tilecc.host.comments import CommentPool, restore
from tilecc.host.parser import parse_module
from tilecc.host.printer import print_module

from .conftest import HEADER, host_program, synthesized_source

NASTY = [
    "# plain",
    "# it's \"quoted\" both ways",
    "# ends with a backslash \\",
    '# triple """ and \'\'\' quotes',
    "#no space, unicode \u00e9\u4e2d",
    "# #tilecc-comment# lookalike",
]


@pytest.mark.parametrize("text", NASTY)
def test_any_comment_text_round_trips_first_and_inside_a_body(text):
    source = host_program(f"        {text}\n        x = 1\n        if x:\n            {text}\n            y = 2\n"
                          f"        return x  {text}\n")
    module = parse_module(source)
    body = module.programs[0].function("host_orch").body
    assert body[0] == ir.Comment(text) and body[2].then[0] == ir.Comment(text)
    assert body[3] == ir.Comment(text) and isinstance(body[4], ir.Return)
    printed = print_module(module)
    lines = printed.splitlines()
    assert lines.count(f"        {text}") == 2 and lines.count(f"            {text}") == 1
    assert parse_module(printed) == module


def test_comment_positions():
    module = parse_module(HEADER + """\
# before the program
@pl.program
class P:  # on the class line
    # before f
    @pl.function(  # in the decorator
        level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def f(self,
          a,  # on a parameter
          ):
        '''doc'''  # after the docstring
        for i in pl.range(4):  # on the loop header
            # first in the loop
            a = a + 1
            # last in the loop
        # between loop and while
        while a:
            pass
        return a
# at the end
""")
    program = module.programs[0]
    assert program.comments == ("# before the program", "# on the class line")
    func = program.functions[0]
    assert func.comments == ("# before f", "# in the decorator", "# on a parameter", "# after the docstring")
    loop = func.body[1]
    assert func.body[0] == ir.Comment("# on the loop header")
    increment = ir.Assign(ir.Var("a"), ir.BinOp("+", ir.Var("a"), ir.Const(1)))
    assert loop.body == (ir.Comment("# first in the loop"), increment)
    # a comment after a block's last statement goes before the next statement
    assert func.body[2:4] == (ir.Comment("# last in the loop"), ir.Comment("# between loop and while"))
    assert module.items[-1] == ir.Verbatim("# at the end")
    printed = print_module(module)
    assert parse_module(printed) == module and print_module(parse_module(printed)) == printed


def test_pass_keeps_comments_after_the_hoisted_signal():
    out = synthesized_source(host_program("""\
        # the data window
        data_buf = pld.alloc_window_buffer(1024)
        data = pld.window(data_buf, [256], dtype=pl.FP32)
        # reduce it
        return pld.tensor.allreduce(data)  # lifted
"""))
    lines = [line.strip() for line in out.splitlines()]
    start = lines.index("def host_orch(self):")
    assert lines[start + 1].startswith("__allreduce_signal_world_size_0 =")
    assert lines[start + 4] == "# the data window"
    assert lines[start + 7:start + 10] == ["# reduce it", "# lifted",
                                           "__allreduce_result_1 = pld.tensor.allreduce(data, __allreduce_signal_0)"]


def test_verbatim_code_keeps_its_text_and_comments():
    source = HEADER + "def helper(x):\n    # why\n    return x   # as is\n\n\nA = 1; B = 2  # shared line\n"
    printed = print_module(parse_module(source))
    assert "def helper(x):\n    # why\n    return x   # as is\n" in printed
    assert "# shared line\nA = 1\n" in printed and printed.endswith("B = 2\n")
    assert parse_module(printed) == parse_module(source)


def test_comment_pool_ignores_hashes_in_strings_and_takes_each_comment_once():
    pool = CommentPool("x = '# no'  # yes\ns = '''\n# in a string\n'''\n# last\n")
    assert pool.take(1, 10) == ("# yes", "# last")
    assert pool.take(1, 10) == ()


def test_restore_leaves_other_strings_alone():
    assert restore("x = '#not-a-marker#'\n'plain'") == "x = '#not-a-marker#'\n'plain'"
