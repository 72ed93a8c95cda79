"""What XLA's parser refuses in attribute values: convolution labels and windows, shardings,
and attributes newer than the pinned XLA (jaxlib 0.10.2).

Contract: each `check_*` takes what the parser read and returns None or the message of the
ParseError XLA's parser raises (or the CHECK it aborts on) for it; tilecc.hlo.parse_rules
calls the per-instruction ones, the parser calls `check_sharding` on every `sharding=`.
Rules (hlo_parser.cc of the XLA jaxlib 0.10.2 ships, which the corpus' verdicts come from):
- convolution's `dim_labels=<lhs>_<rhs>-><out>`: lhs / out are b, f and one digit per
  spatial dimension, rhs i, o and the digits; all three have the same number of spatial
  dimensions and each digit names one of them once;
- a `window={...}` `pad=` is `low_high` per dimension, dimensions joined by `x`;
- a sharding's explicit device list `devices=[d0,d1,...]i,j,...` has prod(d) ids (XLA
  reads past the end of the list otherwise); `unreduced=<kind>{...}` mesh shardings are
  newer than that XLA;
- attributes that XLA added after that version (topk's `is_stable`, collective-broadcast's
  `has_dynamic_root`, async-update's `output_to_operand_aliasing`) are unknown to it.
"""

from __future__ import annotations

import re
from math import prod

from tilecc.hlo.ir import HloInstruction
from tilecc.hlo.opcodes import HloOpcode as Op

NEWER_ATTRIBUTES: dict[Op, tuple[str, ...]] = {
    Op.TOPK: ("is_stable",),
    Op.COLLECTIVE_BROADCAST: ("has_dynamic_root",),
    Op.ASYNC_UPDATE: ("output_to_operand_aliasing",),
}
"""opcode -> attributes of newer XLA versions that jaxlib 0.10.2's parser does not know."""

_LABELS = re.compile(r"([^_\s]+)_([^-\s]+)->(\S+)")
_PAD = re.compile(r"-?\d+_-?\d+")
_WINDOW_PAD = re.compile(r"(?:^|[\s{])pad=([^\s}]*)")
_UNREDUCED_KIND = re.compile(r"unreduced=[a-z]")  # `unreduced={'x'}` is older: no kind
_EXPLICIT_DEVICES = re.compile(r"devices=\[([\d,\s]+)\]\s*(\d+(?:\s*,\s*\d+)*)")


def newer_attribute(inst: HloInstruction) -> str | None:
    """An attribute of `inst` that the pinned XLA's parser does not know, as its message."""
    for key in NEWER_ATTRIBUTES.get(inst.opcode, ()):
        if key in inst.attributes:
            return f'unexpected attribute "{key}" for {inst.opcode.mnemonic}'
    return None


def _spatial(part: str, pair: str) -> int | None:
    """The spatial dimension count of one dim_labels part, None when it is malformed."""
    digits = [c for c in part if c not in pair]
    if sorted(part.count(c) for c in pair) != [1, 1] or not all(c.isdigit() for c in digits):
        return None
    if sorted(int(c) for c in digits) != list(range(len(digits))):
        return None
    return len(digits)


def check_convolution(inst: HloInstruction) -> str | None:
    """dim_labels and window of a convolution (see the module contract)."""
    labels = inst.attributes.get("dim_labels")
    if labels is not None:
        m = _LABELS.fullmatch(labels)
        if m is None:
            return f"dim_labels {labels} is not <lhs>_<rhs>-><out>"
        counts = [_spatial(m.group(1), "bf"), _spatial(m.group(2), "io"),
                  _spatial(m.group(3), "bf")]
        if None in counts:
            return (f"dim_labels {labels}: input and output take b, f and one digit per "
                    "spatial dimension, the kernel i, o and the digits")
        if len(set(counts)) != 1:
            return ("input, kernel, and output must have same number of spatial dimensions, "
                    f"but got {counts[0]}, {counts[1]}, {counts[2]}")
    return check_window(inst.attributes.get("window"))


def check_window(window: str | None) -> str | None:
    """A window's `pad=` field (see the module contract)."""
    if window is None or "pad=" not in window:
        return None
    m = _WINDOW_PAD.search(window)
    if m is not None and not all(_PAD.fullmatch(p) for p in m.group(1).split("x")):
        return f"expects padding_low and padding_high separated by '_', got pad={m.group(1)}"
    return None


def check_sharding(value: str) -> str | None:
    """A `sharding=` value (see the module contract)."""
    if "unreduced=" in value and _UNREDUCED_KIND.search(value):
        return ("unreduced=<kind>{...} shardings are newer than the XLA this reads as; "
                f"got {value}")
    if "devices=[" not in value:
        return None
    for m in _EXPLICIT_DEVICES.finditer(value):
        dims = [int(d) for d in m.group(1).split(",") if d.strip()]
        ids = m.group(2).split(",")
        if len(ids) != prod(dims):
            return (f"sharding devices=[{m.group(1)}] needs {prod(dims)} device ids, "
                    f"got {len(ids)}")
    return None
