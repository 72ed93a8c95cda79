"""Which kind of file a command was given, so a file of another stage is named, not misparsed.

Contract: `file_kind(path)` looks at a file's name and first bytes and returns one of KINDS
(or None: unknown, stdin, unreadable -- the command's own reader then reports it).
`refuse_wrong_stage(path, command)` raises a ParseError at the file's start when the file
is of a kind the command does not take, naming the kind and the command that takes it:

    $ tilecc sim k.klr.json ...
    k.klr.json:1:1: error: a KLR kernel (JSON), not a BIR program; lower it first:
    tilecc codegen k.klr.json -o k.bir.json

The order of the pipeline: kernel.py:fn --trace--> KLR JSON --codegen--> BIR JSON --sim-->
results; HLO text goes to hlo-opt and run; pypto host programs to host-opt.
"""

from __future__ import annotations

import re
from pathlib import Path

from tilecc.errors import ParseError, TileccError

HLO, KLR, BIR, KERNEL_PY, HOST_PY, PYTHON = "hlo", "klr", "bir", "kernel", "host", "python"
KINDS = {HLO: "an HLO module", KLR: "a KLR kernel (JSON)", BIR: "a BIR program (JSON)",
         KERNEL_PY: "a Python file of NKI kernels", HOST_PY: "a pypto host program",
         PYTHON: "a Python file"}
# command -> the kinds it takes
TAKES: dict[str, tuple[str, ...]] = {
    "hlo-opt": (HLO,), "run": (HLO,), "codegen": (KLR,), "sim": (BIR,),
    "trace": (KERNEL_PY, PYTHON), "host-opt": (HOST_PY, PYTHON)}

_HEAD_BYTES = 8192
_JSON_KEY = re.compile(rb'"(memory_locations|instructions|body|freeDims|parDim)"\s*:')
_FUNCTIONS = re.compile(r"^(?:async\s+)?def\s+([A-Za-z_]\w*)", re.MULTILINE)


def file_kind(path: str) -> str | None:
    if path == "-":
        return None
    try:
        with open(path, "rb") as handle:
            head = handle.read(_HEAD_BYTES)
    except OSError:
        return None
    if path.endswith(".py"):
        if b"pypto" in head:
            return HOST_PY
        return KERNEL_PY if b"nki" in head else PYTHON
    stripped = head.lstrip()
    if stripped.startswith(b"HloModule"):
        return HLO
    if stripped.startswith(b"{"):
        keys = {m.group(1) for m in _JSON_KEY.finditer(head)}
        if keys & {b"memory_locations", b"instructions"}:
            return BIR
        if keys & {b"body", b"freeDims", b"parDim"}:
            return KLR
    return None


def refuse_wrong_stage(path: str, command: str) -> None:
    file = path.rpartition(":")[0] if command in ("trace", "run") and ":" in path else path
    kind = file_kind(file)
    if kind is None or kind in TAKES[command]:
        return
    # located at the file's start, which is what tells its kind
    raise ParseError(file, 1, 1, f"{KINDS[kind]}, {_not_what(command)}; {_advice(kind, file)}")


def _not_what(command: str) -> str:
    return {"hlo-opt": "not an HLO module", "run": "not an HLO module or kernel.py:FUNCTION",
            "codegen": "not a KLR kernel", "sim": "not a BIR program",
            "trace": "not a Python kernel file", "host-opt": "not a pypto host program"}[command]


def _advice(kind: str, file: str) -> str:
    stem = Path(file).name.removesuffix(".json").removesuffix(".klr").removesuffix(".bir")
    if kind == HLO:
        return f"optimize it with `tilecc hlo-opt {file}` or execute it with `tilecc run {file}`"
    if kind == KLR:
        return f"lower it first: tilecc codegen {file} -o {stem}.bir.json"
    if kind == BIR:
        return f"run it with `tilecc sim {file} --input NAME=FILE.npy ... --out DIR`"
    if kind == HOST_PY:
        return f"rewrite it with `tilecc host-opt {file}`"
    return f"trace or run a kernel in it as {file}:FUNCTION{_functions(file)}"


def kernel_function_missing(target: str) -> None:
    """`run kernel.py` without `:FUNCTION` would be read as HLO text: say what to write."""
    if target.endswith(".py") and ":" not in target:
        raise TileccError(f"{target}: a Python file; name the kernel to run: "
                          f"{target}:FUNCTION{_functions(target)}")


def _functions(file: str) -> str:
    try:
        text = Path(file).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    names = _FUNCTIONS.findall(text)
    return f" (functions: {', '.join(names)})" if names else ""
