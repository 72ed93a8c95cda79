"""Custom calls the HLO interpreter recognises: the sharding annotations jax writes into
modules lowered before SPMD partitioning, the host-offloading annotations, XLA's
`LayoutConstraint` and `control_dep`, and XLA CPU's `TopK`.

Contract: `is_identity_custom_call(inst)` says whether XLA CPU runs `inst` as the identity
(an annotation with one operand whose result has its operand's element types and dims,
an array or a tuple, layouts ignored); `refusal_hint(inst)` is the
text appended to the interpreter's refusal of any other custom call, naming its target and,
for a sharding marker, the per-device dump to run instead. `custom_call_step` is the
custom-call builder: the identity for those annotations, `TopK` and `control_dep` as XLA
CPU runs them, else that refusal.
- `custom_call_target="control_dep"` (written by XLA's AsyncCollectiveReplacer): XLA CPU's
  ControlDepRewriter turns it into a control edge and deletes it, so it takes exactly two
  operands (any shapes) and its result, the empty tuple `()`, has no user; XLA CPU refuses
  another operand count (a check failure) or a result with a user (measured, jaxlib 0.10.2).
- `custom_call_target="TopK"` (written by XLA's TopkRewriter into optimized CPU modules for a
  sort + slice or a topk): operand x[..., n], result (x's type[..., k], s32[..., k]); XLA
  CPU's runtime (runtime_topk.cc) takes the k largest of the last axis in the total order
  -NaN < -inf < ... < -0 < +0 < ... < inf < NaN, equal values in index order, whatever the
  called comparator (the rewriter only makes TopK of a greater-than comparator): the topk
  step's order with largest=true (interp/topk.py).
"""

from __future__ import annotations

from tilecc.errors import InterpError
from tilecc.hlo.interp.topk import top_k
from tilecc.hlo.interp.values import Runner, Step
from tilecc.hlo.ir import HloInstruction
from tilecc.hlo.opcodes import HloOpcode as Op
from tilecc.hlo.types import PrimitiveType, Shape, compatible, is_floating

IDENTITY_CUSTOM_CALLS = frozenset({
    "Sharding", "xla.sdy.FuncResultSharding", "xla.sdy.PropagationBarrier",
    "SPMDFullToShardShape", "SPMDShardToFullShape", "ShardBarrierFrom", "ShardBarrierTo",
    "MoveToHost", "MoveToDevice", "annotate_device_placement", "LayoutConstraint"})
"""Annotations XLA CPU runs as the identity when the result has the operand's shape
(measured, jaxlib 0.10.2): the sharding annotations of modules lowered before SPMD
partitioning (a plain jit with NamedSharding arguments runs as the global program on one
device), and the memory-space annotations of host offloading (`MoveToHost`,
`MoveToDevice`, jax's `annotate_device_placement`), which CPU, having one memory space,
runs as a copy, whatever their frontend attributes), and `LayoutConstraint`, which only fixes
its operand's layout (operand_layout_constraints) and so keeps its values. Each runs as the
identity of a tuple operand too (a tuple result of the same shapes)."""
# Custom calls jax writes into modules lowered before SPMD partitioning (Shardy's markers,
# the GSPMD sharding annotation) that change shapes between the global program and one
# device's part of it: such a module does not say what one device runs.
_SHARDING_TARGETS = ("xla.sdy.", "Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape")


def custom_call_target(inst: HloInstruction) -> str:
    return inst.attributes.get("custom_call_target", "").strip('"')


def is_identity_custom_call(inst: HloInstruction) -> bool:
    """An annotation XLA CPU runs as the identity (see IDENTITY_CUSTOM_CALLS)."""
    # layouts ignored: the interpreter's values are logical arrays (LayoutConstraint's
    # result has another layout than its operand by design)
    return (inst.opcode is Op.CUSTOM_CALL and custom_call_target(inst) in IDENTITY_CUSTOM_CALLS
            and len(inst.operands) == 1 and compatible(inst.operands[0].shape, inst.shape))


def refusal_hint(inst: HloInstruction) -> str:
    """What to run instead, for the custom calls of jax's unpartitioned modules."""
    if inst.opcode is not Op.CUSTOM_CALL:
        return ""
    target = custom_call_target(inst)
    if target.startswith(_SHARDING_TARGETS):
        return (f" (custom_call_target={target}, a sharding marker of a module lowered "
                "before SPMD partitioning: run the per-device module XLA dumps after its "
                "SPMD partitioner, *.spmd-partitioner.*.txt under --xla_dump_to)")
    return f" (custom_call_target={target})" if target else ""


def custom_call_step(runner: Runner, inst: HloInstruction) -> Step:
    if custom_call_target(inst) == "TopK":
        return _topk_call(inst)
    if custom_call_target(inst) == "control_dep":
        return _control_dep(inst)
    if not is_identity_custom_call(inst):
        raise InterpError(f"{inst.name}: opcode custom-call is not supported by the "
                          f"interpreter{refusal_hint(inst)}")
    return lambda a, d: a[0]


def _control_dep(inst: HloInstruction) -> Step:
    """XLA's control_dep marker; see the module contract."""
    if len(inst.operands) != 2 or inst.shape != Shape.tuple(()) or inst.users:
        raise InterpError(f"{inst.name}: custom-call control_dep takes two operands and gives "
                          f"() with no user, as XLA CPU runs it, not {inst.shape} of "
                          f"{len(inst.operands)} operand(s)"
                          f"{' used by ' + inst.users[0].name if inst.users else ''}")
    return lambda a, d: ()


def _topk_call(inst: HloInstruction) -> Step:
    """XLA CPU's TopK custom call; see the module contract."""
    x = inst.operands[0].shape if len(inst.operands) == 1 else None
    parts = inst.shape.tuple_shapes if inst.shape.is_tuple else ()
    if (x is None or not x.is_array or not x.dims or len(parts) != 2
            or parts[0].element_type != x.element_type
            or parts[1].element_type != PrimitiveType.S32
            or parts[0].dims != parts[1].dims or parts[0].dims[:-1] != x.dims[:-1]
            or parts[0].dims[-1] > x.dims[-1]):
        raise InterpError(f"{inst.name}: custom-call TopK takes one array x[..., n] and gives "
                          f"(x's type[..., k], s32[..., k]) with k <= n, not {inst.shape} of "
                          f"{', '.join(str(o.shape) for o in inst.operands) or 'no operand'}")
    k, floating = parts[0].dims[-1], is_floating(x.element_type)
    return lambda a, d: top_k(a[0], k, True, floating)
