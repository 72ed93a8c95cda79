"""KlirToBirCodegen: KLR kernel -> BIR program, one leaf per KLR operator (spec 003).

Contract: `KlirToBirCodegen().codegen_kernel(kernel)` returns a Program whose instructions
are the kernel's operators in order, each lowered by its leaf as spec 003's shared skeleton
does: the instruction is named `<Op>-<id>` from one counter per codegen instance (the KLR
class name; TensorTensor instead gets the builder's `<out>=TensorTensor_<op>(<in0>, <in1>)`
and takes no id), operands are bound in the spec's positional order (see bir.inst), enums
go through codegen.enum_maps, and the mode / flag fields are stamped as the spec gives.
Every tensor becomes one MemoryLocation (its address: partitions x bytes per partition;
HBM for kernel arguments); an access becomes an AccessPattern with the partition pair
[row length, partitions] first and the flat element offset partition * row + free offset.
Choices the spec leaves open (documented, tested): the zero-bias tensor is
`COMPILER-GENERATED-zero_bias_act_<n>` (SB, float32, 128 x 1) zeroed by
`COMPILER-GENERATED-memset_zero_bias_<n>`, both created on the first bias-less activation
of the codegen instance and shared by all later ones; <n> is the smallest number whose
tensor name no tensor of the kernel uses (inputs, outputs and every operator access), and
the name is fixed when the body is lowered (every kernel tensor seen; until then the
activations and the memset hold a provisional access, rewritten in place), and the
location takes its place in the program's list at the first use. Once named, the
zero-bias tensor is registered like a kernel tensor, so on a reused instance a clash of
names can only be the CodegenError "used with two different definitions";
leaves without an engine rule keep Unassigned; an operator `dtype` must be None or dst's
dtype (BIR carries dtypes on the accesses only); a reduce_res without reduce_op,
TensorScalarReduce without reduce_op or with another reduce_cmd than ZeroAccumulate, and a
TensorScalar with only one of imm1 / op1 are rejected with CodegenError rather than
silently dropped. Each instruction a leaf emits carries its operator's source position
(`Inst.pos`, set here in the dispatcher, never in a leaf).
"""

from __future__ import annotations

from functools import partial
from typing import Any, Callable

from tilecc.bir import inst as b
from tilecc.bir.enums import (AluOpType, AxisListType, BirDtype, EngineAccumulationType,
                              EngineType, TSCMode)
from tilecc.codegen import enum_maps as m
from tilecc.codegen.tensor_engine import TENSOR_ENGINE_LEAVES
from tilecc.codegen import random as random_leaves
from tilecc.codegen import vector as vector_leaves
from tilecc.errors import CodegenError
from tilecc.klr import ast as k

# spec 003 getActBiasTensor: the name prefixes; the suffix is the first free number
ZERO_BIAS_PREFIX = "COMPILER-GENERATED-zero_bias_act_"
ZERO_BIAS_MEMSET_PREFIX = "COMPILER-GENERATED-memset_zero_bias_"
ZERO_BIAS_NAME = ZERO_BIAS_PREFIX + "0"  # the names when the kernel does not use them
ZERO_BIAS_MEMSET_NAME = ZERO_BIAS_MEMSET_PREFIX + "0"


class KlirToBirCodegen:
    def __init__(self) -> None:
        self._reset()
        self.leaves: dict[type, Callable[[Any], None]] = {
            k.NcActivate: self.codegen_activation, k.ActivationReduce: self.codegen_activation,
            k.Activate2: self.codegen_activate2, k.Exponential: self.codegen_exponential,
            k.Reciprocal: self.codegen_reciprocal, k.TensorScalar: self.codegen_tensor_scalar,
            k.TensorScalarReduce: self.codegen_tensor_scalar_reduce,
            k.TensorScalarCumulative: self.codegen_tensor_scalar_cumulative,
            k.NcScalarTensorTensor: self.codegen_scalar_tensor_tensor,
            k.TensorTensor: self.codegen_tensor_tensor,
            k.TensorTensorScan: self.codegen_tensor_tensor_scan,
            k.TensorReduce: self.codegen_tensor_reduce,
            k.TensorPartitionReduce: self.codegen_tensor_partition_reduce,
            k.NcDmaCopy: self.codegen_dma_copy, k.NcCopy: self.codegen_copy,
            k.MemSet: self.codegen_memset, k.Iota: self.codegen_iota,
            **{cls: partial(leaf, self) for cls, leaf in TENSOR_ENGINE_LEAVES.items()},
        }
        for family in (vector_leaves.LEAVES, random_leaves.LEAVES):
            self.leaves.update({cls: partial(leaf, self) for cls, leaf in family.items()})

    def _reset(self) -> None:
        self.next_id = 0
        self.locations: dict[str, b.MemoryLocation] = {}
        self.tensors: dict[str, k.TensorName] = {}
        self.insts: list[b.Inst] = []
        self.zero_bias: b.MemoryLocation | None = None
        # a zero-bias tensor used but not named yet: its slot in `locations`, its memset and
        # the activations whose ins[1] is its provisional access
        self.pending_bias: tuple[int, b.Inst, list[b.InstActivation]] | None = None
        self.refs: dict[int, tuple[k.Access, b.AccessPattern]] = {}
        self.imms: dict[int, tuple[k.Immediate, b.Immediate]] = {}
        # partitions -> the zero-bias access (provisional, memref "", until it is named)
        self.bias_refs: dict[int, b.AccessPattern] = {}

    # ------------------------------------------------------------ driver
    def codegen_kernel(self, kernel: k.Kernel) -> b.Program:
        inputs = [self.kernel_arg(t) for t in kernel.inputs]
        outputs = [self.kernel_arg(t) for t in kernel.outputs]
        positions: dict[int, tuple[k.Pos, b.SourcePos]] = {}
        leaves, insts = self.leaves, self.insts
        for index, op in enumerate(kernel.body):
            leaf = leaves.get(type(op))
            if leaf is None:
                raise CodegenError(f"body[{index}]: no BIR lowering for {type(op).__name__}")
            first = len(insts)
            try:
                if getattr(op, "dtype", None) is not None:
                    self.check_dtype(op)
                leaf(op)
            except CodegenError as err:
                raise CodegenError(f"body[{index}] ({type(op).__name__}): {err}") from None
            if (pos := op.pos) is not None:  # every instruction of the leaf: the operator's line
                # one SourcePos per shared (frozen) KLR Pos, as accesses are memoized
                hit = positions.get(id(pos))
                if hit is None or hit[0] is not pos:
                    hit = positions[id(pos)] = (pos, b.SourcePos(pos.filename, pos.line,
                                                                 pos.column))
                if len(insts) == first + 1:  # most leaves emit one instruction
                    insts[first].pos = hit[1]
                else:
                    for inst in insts[first:]:
                        inst.pos = hit[1]
        self.name_zero_bias()
        return b.Program(kernel.name, list(self.locations.values()), inputs, outputs, insts)

    def kernel_arg(self, t: k.TensorName) -> b.IOTensor:
        if t.address.memory not in k.HBM_MEMORIES:
            raise CodegenError(f"kernel argument '{t.name}' must be in HBM")
        self.location(t)
        return b.IOTensor(t.name, m.codegen_dtype(t.dtype), (t.shape.par_dim,) + t.shape.free_dims)

    def check_dtype(self, op: Any) -> None:
        dtype = getattr(op, "dtype", None)
        if dtype is not None and dtype != k.access_tensor(op.dst).dtype:
            raise CodegenError(f"dtype {k.Dtype(dtype).name} differs from the dtype of dst "
                               f"'{k.access_tensor(op.dst).name}'")

    def returned_id(self) -> int:
        """returnAndIncrementId: the one counter behind every `<Op>-<id>` name."""
        i = self.next_id
        self.next_id += 1
        return i

    def emit(self, inst: b.Inst) -> b.Inst:
        self.insts.append(inst)
        return inst

    def name(self, op: Any) -> str:
        i = self.next_id  # returned_id, inlined: one name per operator
        self.next_id = i + 1
        return f"{type(op).__name__}-{i}"

    # ------------------------------------------------------------ operands
    def location(self, t: k.TensorName) -> b.MemoryLocation:
        loc = self.locations.get(t.name)
        if loc is not None:
            known = self.tensors[t.name]
            if known is not t and known != t:
                raise CodegenError(f"tensor '{t.name}' is used with two different definitions")
            return loc
        loc = b.MemoryLocation(t.name, m.codegen_memory(t.address.memory),
                               m.codegen_dtype(t.dtype), t.address.par_size,
                               t.address.free_size)
        self.locations[t.name] = loc
        self.tensors[t.name] = t
        return loc

    def tensor_ref(self, access: k.Access) -> b.AccessPattern:
        """codegenTensorRef: the access as a physical pattern, partition pair first."""
        # accesses are immutable and shared (the reader shares TensorNames): memoize by id
        hit = self.refs.get(id(access))
        if hit is not None and hit[0] is access:
            return hit[1]
        result = self.tensor_ref_uncached(access)
        self.refs[id(access)] = (access, result)
        return result

    def tensor_ref_uncached(self, access: k.Access) -> b.AccessPattern:
        ap = k.to_pattern(access)
        loc = self.location(ap.tensor)
        row = loc.bytes_per_partition // k.DTYPE_SIZE[ap.tensor.dtype]
        pairs = ((row, ap.par_num),) + tuple((p.step, p.num) for p in ap.pattern)
        return b.AccessPattern(loc.name, loc.dtype, ap.par_offset * row + ap.free_offset, pairs)

    def operand(self, operand: k.Operand) -> b.Argument:
        """addOperandToInst: an immediate becomes an ImmediateValue, a tensor an AP."""
        if isinstance(operand, k.Immediate):
            # the reader shares Immediates (frozen) too: memoized by id as accesses are
            hit = self.imms.get(id(operand))
            if hit is not None and hit[0] is operand:
                return hit[1]
            result = immediate(operand)
            self.imms[id(operand)] = (operand, result)
            return result
        return self.tensor_ref(operand)

    def act_bias_tensor(self, partitions: int) -> b.AccessPattern:
        """getActBiasTensor: the lazily created, shared zero-bias SB tensor (unit AP); while
        it is unnamed, a provisional access that `name_zero_bias` rewrites."""
        # one access per partition count, shared as tensor_ref's results are
        if (bias := self.bias_refs.get(partitions)) is not None:
            return bias
        if self.zero_bias is None and self.pending_bias is None:
            memset = self.emit(b.InstMemset("", EngineType.Unassigned,
                                            [b.Immediate(BirDtype.float32, 0.0)], []))
            self.pending_bias = (len(self.locations), memset, [])
        name = "" if self.zero_bias is None else self.zero_bias.name
        bias = self.bias_refs[partitions] = b.AccessPattern(name, BirDtype.float32, 0,
                                                            ((1, partitions), (1, 1)))
        return bias

    def name_zero_bias(self) -> None:
        """Every kernel tensor has been seen: the zero-bias tensor takes the first free
        number, its location its slot, the memset and the activations their accesses."""
        if self.pending_bias is None:
            return
        slot, memset, users = self.pending_bias
        self.pending_bias = None
        n = 0
        while f"{ZERO_BIAS_PREFIX}{n}" in self.locations:
            n += 1
        tensor = k.make_tensor(f"{ZERO_BIAS_PREFIX}{n}", k.Dtype.float32, (128, 1),
                               k.Memory.sbuf)
        names = list(self.locations)
        self.zero_bias = self.location(tensor)
        names.insert(slot, tensor.name)
        self.locations = {name: self.locations[name] for name in names}
        memset.name = f"{ZERO_BIAS_MEMSET_PREFIX}{n}"
        memset.outs.append(b.AccessPattern(tensor.name, BirDtype.float32, 0, ((1, 128), (1, 1))))
        self.bias_refs = {n: b.AccessPattern(tensor.name, bias.dtype, bias.offset, bias.ap)
                          for n, bias in self.bias_refs.items()}
        for act in users:
            bias = act.ins[1]
            assert isinstance(bias, b.AccessPattern)
            act.ins[1] = self.bias_refs[bias.ap[0][1]]

    # ------------------------------------------------------------ activation engine
    def codegen_activation(self, op: k.NcActivate) -> None:
        out, src = self.tensor_ref(op.dst), self.tensor_ref(op.src)
        func = m.codegen_activation_func(op.activation_func)
        bias = (self.act_bias_tensor(src.ap[0][1]) if op.bias is None
                else self.tensor_ref(op.bias))
        ins: list[b.Argument] = [src, bias]
        scale: float | None
        if isinstance(op.scale, k.Immediate):
            if not isinstance(op.scale.value, float):
                raise CodegenError("scale for activation must be a float32")
            scale = op.scale.value
        else:
            scale = None
            ins.append(self.tensor_ref(op.scale))
        inst = b.InstActivation(self.name(op), EngineType.Activation, ins, [out], scale=scale,
                                func=func, acc=m.codegen_accum_cmd(op.accumulator_cmd))
        if op.reduce_op is not None:
            if op.reduce_op != k.AluOp.add:
                raise CodegenError("Accumulation is the only supported op on activation_reduce")
            if op.reduce_res is not None:
                ins.append(self.tensor_ref(op.reduce_res))
        elif op.reduce_res is not None:
            raise CodegenError("reduce_res is given without a reduce_op")
        self.emit(inst)
        if op.bias is None and self.pending_bias is not None:
            self.pending_bias[2].append(inst)  # ins[1] is the provisional zero-bias access

    def codegen_activate2(self, op: k.Activate2) -> None:
        inst = b.InstActivation(self.name(op), EngineType.Activation, [], [],
                                func=m.codegen_activation_func(op.activation_func),
                                is_activate2=True, op0=m.codegen_alu_op(op.op0),
                                op1=m.codegen_alu_op(op.op1),
                                reduce_op=m.codegen_alu_op(op.reduce_op),
                                acc=m.codegen_accum_cmd(op.reduce_cmd),
                                reverse0=op.reverse0, reverse1=op.reverse1)
        inst.outs.append(self.tensor_ref(op.dst))
        inst.ins.append(self.tensor_ref(op.src))
        inst.ins.extend(self.operand(o) for o in (op.imm0, op.imm1, op.relu_param))
        if op.reduce_res is not None:
            inst.ins.append(self.tensor_ref(op.reduce_res))
        self.emit(inst)

    def codegen_exponential(self, op: k.Exponential) -> None:
        inst = self.emit(b.InstExponential(self.name(op), EngineType.DVE, [], [],
                                           reduce_cmd=m.codegen_accum_cmd(op.reducecmd)))
        inst.outs.append(self.tensor_ref(op.dst))
        inst.ins.extend((self.operand(op.max_value), self.operand(op.reduce_init),
                         self.tensor_ref(op.src)))
        if op.reduce_res is not None:
            self.emit(b.InstDveReadAccumulator(
                f"DveReadAccumulator-{self.returned_id()}", EngineType.DVE,
                [self.tensor_ref(op.reduce_res)], [], acc=EngineAccumulationType.Accumulate))

    def codegen_reciprocal(self, op: k.Reciprocal) -> None:
        out, src = self.tensor_ref(op.dst), self.tensor_ref(op.src)
        self.emit(b.InstReciprocal(self.name(op), EngineType.Unassigned, [src], [out]))

    # ------------------------------------------------------------ tensor-scalar family
    def codegen_tensor_scalar(self, op: k.TensorScalar) -> None:
        if (op.imm1 is None) != (op.op1 is None):
            raise CodegenError("imm1 and op1 must be given together")
        out, src = self.tensor_ref(op.dst), self.tensor_ref(op.src)
        ins = [src, self.operand(op.imm0)]
        op1 = AluOpType.bypass
        if op.imm1 is not None and op.op1 is not None:
            ins.append(self.operand(op.imm1))
            op1 = m.codegen_alu_op(op.op1)
        rev0, rev1 = m.set_tensor_scalar_reverse_ops(op.reverse)
        self.emit(b.InstTensorScalarPtr(
            self.name(op), m.codegen_engine(op.engine), ins, [out],
            op0=m.codegen_alu_op(op.op0), reverse0=rev0, op1=op1, reverse1=rev1,
            is_tensor_scalar_addr=isinstance(ins[1], b.AccessPattern)
            or isinstance(ins[-1], b.AccessPattern)))

    def codegen_tensor_scalar_reduce(self, op: k.TensorScalarReduce) -> None:
        if op.reduce_op is None:
            raise CodegenError("TensorScalarReduce needs a reduce_op")
        if op.reduce_cmd != k.AccumCmd.ZeroAccumulate or op.reduce_init is not None:
            raise CodegenError("TensorScalarReduce lowers with acc = ZeroAccumulate only "
                               "(reduce_cmd ZeroAccumulate, no reduce_init)")
        out, src = self.tensor_ref(op.dst), self.tensor_ref(op.src)
        ins = [src, self.operand(op.operand0)]
        self.emit(b.InstTensorScalarPtr(
            self.name(op), EngineType.Unassigned, ins, [out, self.tensor_ref(op.reduce_res)],
            op0=m.codegen_alu_op(op.op0), reverse0=op.reverse0,
            op1=m.codegen_alu_op(op.reduce_op), acc=EngineAccumulationType.ZeroAccumulate))

    def codegen_tensor_scalar_cumulative(self, op: k.TensorScalarCumulative) -> None:
        if op.reduce_cmd == k.AccumCmd.LoadAccumulate and op.imm1 is None:
            raise CodegenError("LoadAccumulate takes its initial value from imm1, which is absent")
        out, src = self.tensor_ref(op.dst), self.tensor_ref(op.src)
        ins = [src, self.operand(op.imm0)]
        if op.imm1 is not None:
            ins.append(self.operand(op.imm1))
        rev0, rev1 = m.set_tensor_scalar_reverse_ops(op.reverse)
        self.emit(b.InstTensorScalarCache(
            self.name(op), EngineType.DVE, ins, [out], op0=m.codegen_alu_op(op.op0),
            reverse0=rev0, op1=m.codegen_alu_op(op.op1), reverse1=rev1,
            mode=TSCMode.Cumulative, acc=m.codegen_accum_cmd(op.reduce_cmd)))

    def codegen_scalar_tensor_tensor(self, op: k.NcScalarTensorTensor) -> None:
        out = self.tensor_ref(op.dst)
        ins = [self.tensor_ref(op.data), self.operand(op.src0), self.operand(op.src1)]
        rev0, rev1 = m.set_tensor_scalar_reverse_ops(op.reverse_operands)
        self.emit(b.InstTensorScalarPtr(
            self.name(op), EngineType.Unassigned, ins, [out], op0=m.codegen_alu_op(op.op0),
            reverse0=rev0, op1=m.codegen_alu_op(op.op1), reverse1=rev1,
            is_scalar_tensor_tensor=True))

    # ------------------------------------------------------------ tensor-tensor
    def codegen_tensor_tensor(self, op: k.TensorTensor) -> None:
        out, in0, in1 = (self.tensor_ref(op.dst), self.tensor_ref(op.src0),
                         self.tensor_ref(op.src1))
        alu = m.codegen_alu_op(op.op)
        name = f"{out.memref}=TensorTensor_{alu.name}({in0.memref}, {in1.memref})"
        self.emit(b.InstTensorTensor(name, m.codegen_engine(op.engine), [in0, in1], [out],
                                     op=alu))

    def codegen_tensor_tensor_scan(self, op: k.TensorTensorScan) -> None:
        out, in0, in1 = (self.tensor_ref(op.dst), self.tensor_ref(op.src0),
                         self.tensor_ref(op.src1))
        rev0, rev1 = m.set_tensor_scalar_reverse_ops(op.reverse_operands)
        self.emit(b.InstTensorScalarPtr(
            self.name(op), EngineType.Unassigned, [in0, self.operand(op.imm0), in1], [out],
            op0=m.codegen_alu_op(op.op0), reverse0=rev0, op1=m.codegen_alu_op(op.op1),
            reverse1=rev1, acc=m.codegen_accum_cmd(op.accumulator_cmd),
            is_tensor_tensor_scan=True, is_scalar_tensor_tensor=True))

    # ------------------------------------------------------------ reduce
    def codegen_tensor_reduce(self, op: k.TensorReduce) -> None:
        out, src = self.tensor_ref(op.dst), self.tensor_ref(op.src)
        self.emit(b.InstTensorReduce(self.name(op), EngineType.Unassigned, [src], [out],
                                     op=m.codegen_alu_op(op.op),
                                     axis=m.codegen_tensor_sub_dim(op.op_dim),
                                     negate=op.negated))

    def codegen_tensor_partition_reduce(self, op: k.TensorPartitionReduce) -> None:
        out, src = self.tensor_ref(op.dst), self.tensor_ref(op.data)
        # spec 003: axis and negate are codegen constants (C, false), not KLR fields
        self.emit(b.InstTensorReduce(self.name(op), EngineType.Unassigned, [src], [out],
                                     op=m.codegen_alu_op(op.op), axis=AxisListType.C,
                                     negate=False))

    # ------------------------------------------------------------ data movement
    def codegen_dma_copy(self, op: k.NcDmaCopy) -> None:
        out, src = self.tensor_ref(op.dst), self.tensor_ref(op.src)
        engine = m.codegen_engine(op.engine)
        compute = AluOpType.add if op.compute_op == k.DgeComputeOp.add else AluOpType.bypass
        self.emit(b.InstDMACopy(self.name(op), engine if engine else EngineType.DMA, [src],
                                [out], compute_op=compute))

    def codegen_copy(self, op: k.NcCopy) -> None:
        out, src = self.tensor_ref(op.dst), self.tensor_ref(op.src)
        self.emit(b.InstTensorCopy(self.name(op), m.codegen_engine(op.engine), [src], [out]))

    def codegen_memset(self, op: k.MemSet) -> None:
        out = self.tensor_ref(op.dst)
        self.emit(b.InstMemset(self.name(op), m.codegen_engine(op.engine),
                               [immediate(op.value)], [out]))

    def codegen_iota(self, op: k.Iota) -> None:
        out = self.tensor_ref(op.dst)
        pattern = tuple((p.step, p.num) for p in op.pattern.pattern)
        self.emit(b.InstIota(self.name(op), EngineType.Unassigned, [], [out],
                             offset=op.pattern.offset, pattern=pattern,
                             channel_multiplier=op.pattern.channel_multiplier))




def immediate(imm: k.Immediate) -> b.Immediate:
    if isinstance(imm.value, float):
        return b.Immediate(BirDtype.float32, imm.value)
    return b.Immediate(BirDtype.int32, imm.value)


def codegen_kernel(kernel: k.Kernel) -> b.Program:
    return KlirToBirCodegen().codegen_kernel(kernel)
