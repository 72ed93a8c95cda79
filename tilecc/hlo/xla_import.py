"""HLO text from the formats only XLA reads: HloModuleProto (.pb, .pbtxt) and StableHLO (.mlir).

Contract: `hlo_text_through_xla(data, form, path)` returns XLA's long-form text of the
module in `data` -- `form` "proto" (a serialized HloModuleProto, as `--xla_dump_hlo_as_proto`
writes it), "prototext" (the same message in protobuf text format, read with the schema
jaxlib carries: tilecc/hlo/xla_prototext.py) or "stablehlo" (MLIR text or bytecode, as jax's
`lowered.as_text()` or
`.compiler_ir()` gives it) -- by running jaxlib (pinned 0.10.x, the `[xla]` extra) in a
child process (`python -m tilecc.hlo.xla_import FORM`), as tilecc.hlo.xla does: XLA aborts
the whole process on some inputs. Without jax / jaxlib the error names the format and the
extra to install; XLA's own refusal is one line naming the file.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

from tilecc.errors import TileccError

FORMS = {"proto": "an HloModuleProto (binary .pb)",
         "prototext": "an HloModuleProto in protobuf text format (.pbtxt)",
         "stablehlo": "a StableHLO module (.mlir)"}
_NEEDS = {"proto": ("jax", "jaxlib"), "stablehlo": ("jax", "jaxlib"),
          "prototext": ("jax", "jaxlib", "google.protobuf")}
_TIMEOUT_S = 300


def hlo_text_through_xla(data: bytes, form: str, path: str) -> str:
    what = FORMS[form]
    if not all(_importable(name) for name in _NEEDS[form]):
        needs = "jaxlib 0.10.x and protobuf" if form == "prototext" else "jaxlib 0.10.x"
        raise TileccError(f"{path}: {what}: reading it needs {needs}, which is not "
                          f"installed (pip install 'tilecc[xla]'), or give HLO text")
    try:
        done = subprocess.run([sys.executable, "-m", "tilecc.hlo.xla_import", form], input=data,
                              capture_output=True, timeout=_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise TileccError(f"{path}: {what}: jaxlib did not convert it within "
                          f"{_TIMEOUT_S} s") from None
    if done.returncode != 0:
        lines = [line for line in done.stderr.decode("utf-8", "replace").splitlines()
                 if line.strip()]
        reason = lines[-1].strip() if lines else f"exit code {done.returncode}"
        raise TileccError(f"{path}: {what} that XLA cannot read: {reason}")
    return done.stdout.decode("utf-8")


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a broken or blocked installation counts as none
        return False


def _child_main(form: str) -> int:
    from jax._src.lib import xla_client as xc
    data = sys.stdin.buffer.read()
    try:
        if form in ("proto", "prototext"):
            if form == "prototext":
                from tilecc.hlo.xla_prototext import prototext_to_binary
                data = prototext_to_binary(data.decode("utf-8"))
            text = xc.hlo.HloModule.from_serialized_hlo_module_proto(data).to_string()
        else:
            computation = xc._xla.mlir.mlir_module_to_xla_computation(
                data, use_tuple_args=False, return_tuple=False)
            text = xc.hlo.hlo_module_from_text(computation.as_hlo_text()).to_string()
    except Exception as exc:  # XLA's message is the whole answer
        print(" ".join(str(exc).split()) or type(exc).__name__, file=sys.stderr)
        return 1
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(_child_main(sys.argv[1]))
