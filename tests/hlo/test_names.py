"""Module-wide names follow XLA's NameUniquer (name_uniquer.cc) and are never reused."""

from __future__ import annotations

from tilecc.hlo.builders import make_binary
from tilecc.hlo.names import NameUniquer, sanitize, split_suffix
from tilecc.hlo.opcodes import HloOpcode
from tilecc.hlo.parser import parse_module
from tilecc.hlo.printer import print_module
from tilecc.hlo.verifier import verify_module


def test_sequential_ids_per_root_like_name_uniquer() -> None:
    u = NameUniquer("instruction")
    # GetUniqueName("add") -> add, add.1, add.2; an explicit free suffix is kept; a taken
    # one gets the next free id of the root (name_uniquer_test.cc: NumericSuffixes)
    assert [u.claim("add") for _ in range(3)] == ["add", "add.1", "add.2"]
    assert u.claim("add.7") == "add.7"
    assert u.claim("add.1") == "add.3"
    assert [u.claim("add") for _ in range(4)] == ["add.4", "add.5", "add.6", "add.8"]
    assert u.claim("foo.0") == "foo.0" and u.claim("foo") == "foo.1"
    assert u.claim("") == "instruction"


def test_sanitizing_like_get_sanitized_name() -> None:
    assert sanitize("a b/c") == "a_b_c"
    assert sanitize("1abc") == "_abc"
    assert sanitize("s32") == "s32_" and sanitize("tuple") == "tuple"
    assert sanitize("__foo") == "a_foo" and sanitize("__xla_x") == "__xla_x"
    assert split_suffix("add.3") == ("add", 3, True)
    assert split_suffix("add.x") == ("add.x", 0, False)
    assert split_suffix(".5") == (".5", 0, False) and split_suffix("a.") == ("a.", 0, False)


def test_registered_names_are_never_handed_out() -> None:
    u = NameUniquer("instruction")
    for name in ("reshape", "reshape.2", "x.01"):
        u.register(name)
    assert [u.claim("reshape") for _ in range(3)] == ["reshape.1", "reshape.3", "reshape.4"]
    assert u.claim("x") == "x" and u.claim("x.1") == "x.2"
    assert u.peek("reshape") == "reshape.5" and u.claim("reshape") == "reshape.5"


def test_a_removed_instructions_name_is_not_reused() -> None:
    m = parse_module("""HloModule m
ENTRY e {
  p = s32[] parameter(0)
  add = s32[] add(p, p)
  ROOT r = s32[] negate(p)
}
""")
    comp = m.entry
    comp.remove_instruction(comp.instruction_by_name("add"))
    p = comp.parameters[0]
    fresh = make_binary(HloOpcode.ADD, p, p)
    assert fresh.name == "add.1"  # XLA's uniquer still holds `add`
    assert m.claim_name("add") == "add.2"
    verify_module(m)
    assert "%add.1 = s32[] add(%p, %p)" in print_module(m)


def test_claim_many_hands_out_what_claims_one_by_one_would() -> None:
    """Every start state: a fresh root, a taken bare name, an explicit suffix, registered
    ids in the way (and leading-zero aliases), counts 0 to 6."""
    setups = [(), ("slice",), ("slice", "slice.2", "slice.04"), ("slice.0",), ("slice.1",)]
    for registered in setups:
        for wanted in ("slice", "slice.3", "slice.0", "9lives", ""):
            for count in range(7):
                one, many = NameUniquer("instruction"), NameUniquer("instruction")
                for name in registered:
                    one.register(name)
                    many.register(name)
                for _ in range(2):  # the second round starts from a root with a counter
                    expected = [one.claim(wanted) for _ in range(count)]
                    assert many.claim_many(wanted, count) == expected, (registered, wanted)
                assert many.names == one.names and many._next == one._next
