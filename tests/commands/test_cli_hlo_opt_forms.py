"""`tilecc hlo-opt` as XLA's hlo-opt behaves, run as a user runs it (a subprocess): printing
without passes, short form, stdin, several modules and files, proto / StableHLO inputs,
--print-changed / --diff / -v, a --verify progress line, output file modes."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tilecc.hlo.parser import parse_module
from tilecc.hlo.printer import print_module

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hlo"
MODULE = """HloModule m, replica_count=4

add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}

ENTRY main {
  p = s32[] parameter(0)
  ROOT r = s32[] all-reduce(p), replica_groups={{0,1,2,3}}, to_apply=add
}
"""
PASS = "--passes=decompose-int-all-reduce"


def tilecc(*args: str, stdin: str | bytes = b"", cwd: Path | None = None,
           umask: int | None = None, prelude: str = "") -> subprocess.CompletedProcess[str]:
    code = f"{prelude}\nimport sys\nfrom tilecc.cli import main\nsys.exit(main(sys.argv[1:]))"
    data = stdin.encode() if isinstance(stdin, str) else stdin
    done = subprocess.run([sys.executable, "-c", code, *args], input=data, cwd=cwd,
                          capture_output=True, timeout=120,
                          preexec_fn=None if umask is None else (lambda: os.umask(umask)))
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(),
                                       done.stderr.decode())


def test_without_passes_a_short_module_is_printed_in_long_form(tmp_path: Path) -> None:
    short = FIXTURES / "psum_max.short.hlo"
    done = tilecc("hlo-opt", str(short))
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout == print_module(parse_module(short.read_text()))
    assert done.stdout.startswith("HloModule jit_psum_max") and "%region_0.1 (" in done.stdout


@pytest.mark.parametrize("form", ["short", "debug"])
def test_print_short_gives_jax_short_form_byte_for_byte(form: str) -> None:
    done = tilecc("hlo-opt", str(FIXTURES / f"mlp_train_step.{form}.hlo"), "--print-short")
    assert done.returncode == 0, done.stderr
    assert done.stdout == (FIXTURES / "mlp_train_step.short.hlo").read_text()


def test_stdin_is_the_default_input() -> None:
    done = tilecc("hlo-opt", PASS, stdin=MODULE)
    assert done.returncode == 0, done.stderr
    assert "all-gather(" in done.stdout and "all-reduce(" not in done.stdout
    assert done.stderr == "decompose-int-all-reduce: changed\n"


def test_two_concatenated_modules_name_the_second_header(tmp_path: Path) -> None:
    (tmp_path / "two.hlo").write_text(MODULE + MODULE)
    done = tilecc("hlo-opt", "two.hlo", cwd=tmp_path)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines()[0] == (
        "two.hlo:13:1: error: a second HloModule: separate modules with a '// -----' line and "
        "give --split-input-file")


def test_a_separator_without_the_flag_is_an_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / "two.hlo").write_text(MODULE + "// -----\n" + MODULE)
    done = tilecc("hlo-opt", "two.hlo", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith("two.hlo:13:1: error: a '// -----' separator: the file holds "
                                  "several modules (give --split-input-file)")


def test_split_input_file_runs_each_module_and_keeps_file_line_numbers(tmp_path: Path) -> None:
    (tmp_path / "two.hlo").write_text(MODULE + "// -----\n" + MODULE.replace("m,", "second,"))
    done = tilecc("hlo-opt", "two.hlo", "--split-input-file", PASS, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.split("// -----\n")
    assert first.startswith("HloModule m,") and second.startswith("HloModule second,")
    assert "all-gather(" in first and "all-gather(" in second
    assert done.stderr.count("decompose-int-all-reduce: changed") == 2
    # an error in the second module is at its line in the file
    (tmp_path / "bad.hlo").write_text(MODULE + "// -----\n" + MODULE.replace("add(a, b)", "plus(a, b)"))
    bad = tilecc("hlo-opt", "bad.hlo", "--split-input-file", cwd=tmp_path)
    assert bad.returncode == 1 and bad.stderr.startswith("bad.hlo (module 2):19:")
    assert "unknown opcode 'plus'" in bad.stderr.splitlines()[0]


def test_several_input_files_are_read_in_order(tmp_path: Path) -> None:
    (tmp_path / "a.hlo").write_text(MODULE)
    (tmp_path / "b.hlo").write_text(MODULE.replace("HloModule m", "HloModule b"))
    done = tilecc("hlo-opt", "a.hlo", "b.hlo", "-o", "out.hlo", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    parts = (tmp_path / "out.hlo").read_text().split("// -----\n")
    assert [p.split(",")[0] for p in parts] == ["HloModule m", "HloModule b"]


def test_print_changed_diff_and_verbose(tmp_path: Path) -> None:
    changed = tilecc("hlo-opt", PASS, "--print-changed", "--print-short", stdin=MODULE)
    assert changed.returncode == 0
    err = changed.stderr
    assert err.startswith("// <stdin> after decompose-int-all-reduce: 1 computation(s) changed\n"
                          "ENTRY main {\n")
    assert "add {" not in err   # the reducer computation did not change
    diff = tilecc("hlo-opt", PASS, "--diff", stdin=MODULE)
    lines = diff.stderr.splitlines()
    assert lines[:2] == ["--- <stdin> before decompose-int-all-reduce",
                         "+++ <stdin> after decompose-int-all-reduce"]
    assert "-  ROOT %r = s32[] all-reduce(%p), replica_groups={{0,1,2,3}}, to_apply=%add" in lines
    verbose = tilecc("hlo-opt", PASS + ",decompose-scalar-reduce", "-v", stdin=MODULE)
    first, second = verbose.stderr.splitlines()
    assert first.startswith("decompose-int-all-reduce: changed (1 match, ") and first.endswith(" ms)")
    assert second.startswith("decompose-scalar-reduce: no change (0 matches, ")
    quiet = tilecc("hlo-opt", "--passes=decompose-scalar-reduce", "--diff", stdin=MODULE)
    assert quiet.stderr == "decompose-scalar-reduce: no change\n"


def test_verify_prints_a_progress_line_first() -> None:
    done = tilecc("hlo-opt", PASS, "--verify", stdin=MODULE)
    assert done.returncode == 0
    lines = done.stderr.splitlines()
    assert lines[1] == "verify: running <stdin> before and after the passes on interpreter ..."
    assert lines[-1] == "  output 0: equal"


def test_outputs_get_the_umask_and_an_existing_output_keeps_its_mode(tmp_path: Path) -> None:
    (tmp_path / "in.hlo").write_text(MODULE)
    done = tilecc("hlo-opt", "in.hlo", PASS, "-o", "new.hlo", "--dump-dir", "dumps",
                  cwd=tmp_path, umask=0o022)
    assert done.returncode == 0, done.stderr
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in [tmp_path / "new.hlo",
                                                             *(tmp_path / "dumps").iterdir()]}
    assert modes == {"new.hlo": 0o644, "01-decompose-int-all-reduce.before.hlo": 0o644,
                     "01-decompose-int-all-reduce.after.hlo": 0o644}
    (tmp_path / "kept.hlo").write_text("old")
    os.chmod(tmp_path / "kept.hlo", 0o640)
    tilecc("hlo-opt", "in.hlo", "-o", "kept.hlo", cwd=tmp_path, umask=0o077)
    assert stat.S_IMODE((tmp_path / "kept.hlo").stat().st_mode) == 0o640
    assert (tmp_path / "kept.hlo").read_text().startswith("HloModule m")
    tilecc("hlo-opt", "in.hlo", "-o", "private.hlo", cwd=tmp_path, umask=0o077)
    assert stat.S_IMODE((tmp_path / "private.hlo").stat().st_mode) == 0o600


BLOCK_JAX = """
import importlib.abc, sys
class _NoJax(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("jax", "jaxlib"):
            raise ModuleNotFoundError(name)
sys.meta_path.insert(0, _NoJax())
"""


@pytest.mark.parametrize("name, data, what", [
    ("m.pb", b"\x0a\x03jit\x12\xa3\x01", "an HloModuleProto (binary .pb)"),
    ("m.mlir", b"module @jit_f {\n}\n", "a StableHLO module (.mlir)"),
])
def test_proto_and_stablehlo_without_jaxlib_name_the_format_and_the_extra(
        tmp_path: Path, name: str, data: bytes, what: str) -> None:
    (tmp_path / name).write_bytes(data)
    done = tilecc("hlo-opt", name, cwd=tmp_path, prelude=BLOCK_JAX)
    assert done.returncode == 1
    assert done.stderr == (f"error: {name}: {what}: reading it needs jaxlib 0.10.x, which is not "
                           f"installed (pip install 'tilecc[xla]'), or give HLO text\n")
    # stdin is recognised by its first bytes
    piped = tilecc("hlo-opt", stdin=data, prelude=BLOCK_JAX)
    assert piped.stderr.startswith(f"error: <stdin>: {what}: reading it needs jaxlib")


# written from XLA's HloModuleProto schema (xla/service/hlo.proto), not by a tool
HAND_PBTXT = """# an HloModuleProto written by hand
name: "handmade"
entry_computation_name: "main"
entry_computation_id: 1
computations {
  name: "main"  id: 1  root_id: 3
  instructions {
    name: "x"  opcode: "parameter"  id: 2  parameter_number: 0
    shape { element_type: S32 dimensions: 4 layout { minor_to_major: 0 } }
  }
  instructions {
    name: "neg"  opcode: "negate"  id: 3  operand_ids: 2
    shape { element_type: S32 dimensions: 4 layout { minor_to_major: 0 } }
  }
  program_shape {
    parameters { element_type: S32 dimensions: 4 layout { minor_to_major: 0 } }
    result { element_type: S32 dimensions: 4 layout { minor_to_major: 0 } }
    parameter_names: "x"
  }
}
host_program_shape {
  parameters { element_type: S32 dimensions: 4 layout { minor_to_major: 0 } }
  result { element_type: S32 dimensions: 4 layout { minor_to_major: 0 } }
  parameter_names: "x"
}
"""
HAND_HLO = """HloModule handmade, entry_computation_layout={(s32[4]{0})->s32[4]{0}}

ENTRY %main (x: s32[4]) -> s32[4] {
  %x = s32[4]{0} parameter(0)
  ROOT %neg = s32[4]{0} negate(%x)
}

"""


def test_proto_text_without_jaxlib_names_the_format_and_the_extra(tmp_path: Path) -> None:
    (tmp_path / "m.pbtxt").write_text(HAND_PBTXT)
    done = tilecc("hlo-opt", "m.pbtxt", cwd=tmp_path, prelude=BLOCK_JAX)
    assert done.returncode == 1
    assert done.stderr == ("error: m.pbtxt: an HloModuleProto in protobuf text format (.pbtxt): "
                           "reading it needs jaxlib 0.10.x and protobuf, which is not installed "
                           "(pip install 'tilecc[xla]'), or give HLO text\n")


@pytest.mark.oracle
def test_proto_text_is_read_with_the_schema_jaxlib_carries(tmp_path: Path) -> None:
    pytest.importorskip("jax")
    pytest.importorskip("google.protobuf")
    (tmp_path / "m.pbtxt").write_text(HAND_PBTXT)
    done = tilecc("hlo-opt", "m.pbtxt", cwd=tmp_path)
    assert (done.returncode, done.stderr, done.stdout) == (0, "", HAND_HLO)
    # a field the schema does not have: the text-format parser's line:column, one line
    (tmp_path / "bad.pbtxt").write_text('name: "m"\nentry_computation_nam: "main"\n')
    bad = tilecc("hlo-opt", "bad.pbtxt", cwd=tmp_path)
    assert bad.returncode == 1 and len(bad.stderr.splitlines()) == 1
    assert bad.stderr.startswith("error: bad.pbtxt: an HloModuleProto in protobuf text format")
    assert '2:1 : Message type "xla.HloModuleProto" has no field named ' \
           '"entry_computation_nam"' in bad.stderr


@pytest.mark.oracle
def test_proto_and_stablehlo_are_read_through_jaxlib(tmp_path: Path) -> None:
    pytest.importorskip("jax")
    make = subprocess.run([sys.executable, "-c", f"""
import jax, jax.numpy as jnp
from jax._src.lib import xla_client as xc
low = jax.jit(lambda a: (a * a).sum()).lower(jnp.ones((4, 8), jnp.int32))
open("f.mlir", "w").write(low.as_text())
module = xc.hlo.hlo_module_from_text(open({str(FIXTURES / 'psum_max.short.hlo')!r}).read())
open("m.pb", "wb").write(module.as_serialized_hlo_module_proto())
"""], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert make.returncode == 0, make.stderr
    proto = tilecc("hlo-opt", "m.pb", "--print-short", cwd=tmp_path)
    assert proto.returncode == 0, proto.stderr
    assert parse_module(proto.stdout).entry.name == "main.4"
    assert "all-reduce(" in proto.stdout
    mlir = tilecc("hlo-opt", "f.mlir", "--passes=decompose-scalar-reduce", cwd=tmp_path)
    assert mlir.returncode == 0, mlir.stderr
    assert "reduce(" in mlir.stdout and "multiply(" in mlir.stdout
    (tmp_path / "bad.mlir").write_text("module {\n  func.func @main( {\n}\n")
    bad = tilecc("hlo-opt", "bad.mlir", cwd=tmp_path)
    assert bad.returncode == 1 and bad.stderr.startswith(
        "error: bad.mlir: a StableHLO module (.mlir) that XLA cannot read: ")
    assert len(bad.stderr.splitlines()) == 1
