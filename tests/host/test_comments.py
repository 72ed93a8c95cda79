"""Comments survive parse -> print and the pass (tilecc/host/comments.py): attached to the
statement, function or program they precede, printed at the right indentation, whatever
characters they hold."""

from __future__ import annotations

import dataclasses
import io
import random
import tokenize

import pytest

from tilecc.host import ir
from tilecc.host.comments import CommentPool, comments_by_regex, comments_by_tokenizer
from tilecc.host.parser import parse_module
from tilecc.host.pass_manager import PassPipeline
from tilecc.host.passes import get_pass
from tilecc.host.printer import print_module
from tilecc.host.source_splice import print_keeping_source

from .conftest import HEADER, host_program, synthesize, synthesized_source
from .test_corpus import CORPUS

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


STRINGY = [
    "x = '# no'  # yes\ns = '''\n# in a string\n'''\n# last\n",
    's = """a "quoted" \\""" # still in it\n"""  # after\n',
    "s = 'it\\'s # no'; t = \"\\\\\"  # yes, after an escaped backslash\n",
    "s = ('a\\\n# continued, not a comment'  # one\n     '')\n",
    "s = rb'\\\\' + f'{x!r:>{w}}#' + Rb\"#\" + u'\u00e9#'  # only this\n# and this\r\n",
    "s = ''  # empty strings\nt = \"\"\"\"\"\" # six quotes\nu = '''x\\'''' # escaped\n",
    "s = '''two \"\"\" kinds'''  # c\nif\"a\"==s: pass  # keyword before a string\n",
]


@pytest.mark.parametrize("text", STRINGY + [host_program(f"        x = 1  {c}\n        {c}\n") for c in NASTY])
def test_the_comment_scanner_finds_what_the_tokenizer_finds(text):
    compile(text, "<test>", "exec")
    assert comments_by_regex(text) == comments_by_tokenizer(text)
    assert comments_by_regex(text)


def test_the_comment_scanner_finds_what_the_tokenizer_finds_in_every_fixture():
    from .test_printer_reference import SOURCES
    assert len(SOURCES) > 50
    for name, text in SOURCES:
        assert comments_by_regex(text) == comments_by_tokenizer(text), name


def test_comments_of_a_program_nested_in_a_builder_are_read_back_as_its_own():
    # a comment on the decorator line is printed above the class: read back, it must be the
    # program's leading comment again, not a line of the builder's kept text
    source = HEADER + """\
def build(n):
    x = n  # kept with the builder

    # above the program
    @pl.program  # on the decorator
    class P:  # on the class line
        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host(self, d: pld.DistributedTensor[[16], pl.FP32]):
            return d

    return P
"""
    module = parse_module(source)
    program = module.programs[0]
    assert program.comments == ("# above the program", "# on the decorator", "# on the class line")
    printed = print_module(module)
    assert "    x = n  # kept with the builder\n\n    # above the program\n    # on the decorator\n" in printed
    assert parse_module(printed) == module
    assert print_module(parse_module(printed)) == printed


SEEDS = range(2)


def sprinkle_comments(text: str, seed: int) -> str:
    """`text` with comments added at the ends of code lines and on lines of their own."""
    rng = random.Random(seed)
    in_strings: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
            in_strings.update(range(tok.start[0], tok.end[0] + 1))
    out: list[str] = []
    for n, line in enumerate(text.split("\n"), start=1):
        out.append(line)
        if n in in_strings or not line.strip() or "#" in line or line.rstrip().endswith("\\"):
            continue
        if rng.random() < 0.3:
            out[-1] = f"{line}  # end {n}"
        if rng.random() < 0.15:
            out.append(f"{line[:len(line) - len(line.lstrip())]}# own line {n}")
    return "\n".join(out)


@pytest.mark.parametrize("seed", SEEDS)
def test_comments_anywhere_in_the_corpus_change_nothing_else(seed):
    """Comments sprinkled over every corpus program: it parses to the same program once
    comments are dropped, the pass gives the same result, printing is a fixed point and the
    source-keeping output parses back to the pass result."""
    for path in sorted(CORPUS.glob("c*.py")):
        text = path.read_text()
        plain = synthesize(text)
        sprinkled = sprinkle_comments(text, seed)
        module = parse_module(sprinkled, path.name)
        result = PassPipeline([get_pass("synthesize-allreduce-signals")]).run(module)
        assert without_comments(result) == without_comments(plain), path.name
        printed = print_module(result)
        assert parse_module(printed) == result and print_module(parse_module(printed)) == printed, path.name
        assert parse_module(print_keeping_source(sprinkled, module, result)) == result, path.name


def without_comments(module: ir.Module) -> list[ir.Program]:
    def body(stmts: tuple[ir.Stmt, ...]) -> tuple[ir.Stmt, ...]:
        out: list[ir.Stmt] = []
        for stmt in stmts:
            if isinstance(stmt, (ir.For, ir.While, ir.With)):
                stmt = dataclasses.replace(stmt, body=body(stmt.body))
            elif isinstance(stmt, ir.If):
                stmt = dataclasses.replace(stmt, then=body(stmt.then), orelse=body(stmt.orelse))
            if not isinstance(stmt, ir.Comment):
                out.append(stmt)
        return tuple(out)

    return [dataclasses.replace(p, comments=(), functions=tuple(dataclasses.replace(f, comments=(), body=body(f.body))
                                                               for f in p.functions)) for p in module.programs]
