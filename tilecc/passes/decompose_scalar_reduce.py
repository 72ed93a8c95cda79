"""DecomposeScalarReduce (spec 000, registry order 74, aws_neuron_decompose_scalar_reduce).

Gate (spec 000, DecomposeScalarReduce::InstructionMatchesPattern, byte for byte):
    opcode == reduce
    and IsIntegralType(OUTPUT element type)    (PRED counts; a variadic reduce's tuple
                                                output never passes)
    and TrueNumDimensions(output shape) == 0
    and the root of the reduce computation is NOT add
    and rank(operand 0) == 2
    and product(operand 0 dims) & 0x7F == 0    (N % 128 == 0, N == 0 included)

Rewrite (spec 000 "Algorithm -- rewrite"), N = product(operand dims):
    rs  = reshape(operand) -> et[128, N/128]
    r1  = reduce(rs, init), dimensions={1}, to_apply=<the same computation>  -> et[128]
    b1  = maximum(r1, r1)                       (the spec's anti-fusion barrier; identity)
    r2  = reduce(b1, init), dimensions={0}, to_apply=<the same computation>  -> et[]
    out = reshape(r2) -> the reduce's shape
The init value and the computation are reused verbatim on both stages (spec 000, GOTCHA:
never a fresh identity). N == 0 gives `[128, 0]`, whose first stage yields the init on every
partition, as the original reduce does (DESIGN.md). Every new instruction carries the
reduce's metadata. The builders' rewrite is traced once per expansion_key and
stamped per match (tilecc.passes.expansion_template).
"""

from __future__ import annotations

from collections.abc import Hashable
from math import prod

from tilecc.hlo.builders import make_binary, make_reduce, make_reshape
from tilecc.hlo.ir import HloInstruction
from tilecc.hlo.opcodes import HloOpcode
from tilecc.hlo.types import is_integral
from tilecc.passes.pass_base import OpExpanderPass

PARTITIONS = 128  # the SBUF partition axis the two-stage reduce is laid across


class DecomposeScalarReduce(OpExpanderPass):
    name = "decompose-scalar-reduce"
    gate_opcodes = frozenset({HloOpcode.REDUCE})

    def instruction_matches_pattern(self, inst: HloInstruction) -> bool:
        if inst.opcode is not HloOpcode.REDUCE:
            return False
        if not is_integral(inst.shape.element_type):
            return False
        if inst.shape.true_num_dimensions() != 0:
            return False
        comp = inst.to_apply
        if comp is None or comp.root is None or comp.root.opcode is HloOpcode.ADD:
            return False
        operand = inst.operands[0]
        if operand.shape.rank != 2:
            return False
        return (prod(operand.shape.dims) & 0x7F) == 0

    def expansion_key(self, inst: HloInstruction) -> Hashable:
        return inst.shape, inst.operands[0].shape, inst.operands[1].shape, inst.to_apply

    def build_expansion(self, inst: HloInstruction) -> HloInstruction | None:
        assert self.instruction_matches_pattern(inst), f"{inst.name} does not match the gate"
        operand, init = inst.operands[0], inst.operands[1]
        reducer = inst.to_apply
        assert reducer is not None
        count = prod(operand.shape.dims)
        meta = inst.metadata
        # MakeReshapeHlo [128, N/128]; MakeReduceHlo dims {1}; MakeBinaryHlo(kMaximum, r1, r1);
        # MakeReduceHlo dims {0}; MakeReshapeHlo to the reduce's shape -- same Rc and init twice
        tiled = make_reshape((PARTITIONS, count >> 7), operand, meta)
        per_partition = make_reduce(tiled, init, (1,), reducer, meta)
        barrier = make_binary(HloOpcode.MAXIMUM, per_partition, per_partition, meta)
        total = make_reduce(barrier, init, (0,), reducer, meta)
        return make_reshape(inst.shape, total, meta)
