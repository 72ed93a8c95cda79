"""The birverifier checks of spec 003 plus the structural invariants of `bir.inst`.

Contract: `verify_program(p)` returns None or raises VerifyError naming the instruction
(`instruction 4 'TensorTensor-4' (TensorTensor): ...`) or the memory location. Checks:
- memory locations: unique names; SB / PSUM at most 128 partitions and at most
  192 KiB (SB) / 16 KiB (PSUM) per partition; bytes a multiple of the dtype size;
  program inputs / outputs name HBM locations whose shape fills them;
- every access pattern: its memref exists, same dtype, partition pair first with the
  row length as step, at most 128 partitions (SB / PSUM), start partition 0/32/64/96
  (NKI: more than 64 partitions start at 0, 33..64 at 0 or 64; not for DMA copies, whose
  queues address any partition), every free index
  inside the row; immediates are float32 floats or int32 ints;
- checkTensorTensor: two tile inputs, of one dtype when both are in SB
  (checkTensorTensorInputType: "both SBUF-resident inputs ... share a dtype"; a PSUM input,
  e.g. an fp32 matmul result, may meet a bf16 SB tile), acc == Idle,
  engine != Unassigned, equal element counts;
- checkTensorReduce: the cross-lane axes (C, XYZWC) have no negate and 32-multiple
  partition and element counts; a free-axis reduce folds at most the pairs it has; the
  output has the input's elements divided by the folded ones;
- elementwise instructions (activation, tensor-scalar, copies, reciprocal, exponential)
  write as many elements as they read;
- checkScalarTensorTensor: [tensor0, scalar, tensor1] with a [P,1] or immediate scalar
  and tensor1 the size of tensor0; scalar operands of TensorScalarPtr / Cache are
  immediates or [P,1] tiles and is_tensor_scalar_addr says which; TensorScalarPtr's
  flags and outputs select one variant (`bir.tensor_scalar_variant`, its refusals).
"""

from __future__ import annotations

from tilecc.bir import inst as b
from tilecc.bir.enums import (BIR_DTYPE_SIZE, CROSS_LANE_AXES, BirDtype,
                              EngineAccumulationType, EngineType, MemoryKind)
from tilecc.bir.tensor_scalar_variant import TensorScalarVariant as Variant
from tilecc.bir.tensor_scalar_variant import TensorScalarVariantError, tensor_scalar_variant
from tilecc.bir.inst_tensor_engine import InstDmaTranspose, InstIndirectDMACopy
from tilecc.bir.verify_tensor_engine import TENSOR_ENGINE_CHECKS
from tilecc.bir.inst_random import NO_OUTPUT, InstDevicePrint
from tilecc.bir.verifier_random import CHECKS as RANDOM_CHECKS
from tilecc.bir.verifier_vector import CHECKS as VECTOR_CHECKS
from tilecc.errors import VerifyError

MAX_PARTITIONS = 128
PARTITION_BYTES = {MemoryKind.SB: 0x30000, MemoryKind.PSUM: 0x4000}
_INT32 = (-(2 ** 31), 2 ** 31 - 1)
# instructions that read through a DMA queue (device_print's debug stream is one): any start


def verify_program(p: b.Program) -> None:
    locs: dict[str, b.MemoryLocation] = {}
    for loc in p.memory_locations:
        _check_location(loc, locs)
        locs[loc.name] = loc
    for io in p.inputs + p.outputs:
        _check_io(io, locs)
    checker = InstChecker(locs)
    for index, inst in enumerate(p.instructions):
        checker.index, checker.inst = index, inst
        checker.check()


def _check_location(loc: b.MemoryLocation, seen: dict[str, b.MemoryLocation]) -> None:
    where = f"memory location '{loc.name}'"
    if loc.name in seen:
        raise VerifyError(f"{where} is declared twice")
    if loc.bytes_per_partition % BIR_DTYPE_SIZE[loc.dtype]:
        raise VerifyError(f"{where}: {loc.bytes_per_partition} bytes per partition is not a "
                          f"multiple of the {loc.dtype.name} size")
    if loc.kind in PARTITION_BYTES:
        if not 0 < loc.partitions <= MAX_PARTITIONS:
            raise VerifyError(f"{where}: {loc.partitions} partitions (1..{MAX_PARTITIONS})")
        if loc.bytes_per_partition > PARTITION_BYTES[loc.kind]:
            raise VerifyError(f"{where}: {loc.bytes_per_partition} bytes per partition exceed "
                              f"the {PARTITION_BYTES[loc.kind]} of {loc.kind.name}")


def _check_io(io: b.IOTensor, locs: dict[str, b.MemoryLocation]) -> None:
    loc = locs.get(io.name)
    if loc is None or loc.kind != MemoryKind.HBM:
        raise VerifyError(f"kernel tensor '{io.name}' is not an HBM memory location")
    free = 1
    for d in io.shape[1:]:
        free *= d
    if (loc.dtype != io.dtype or not io.shape or loc.partitions != io.shape[0]
            or loc.bytes_per_partition != free * BIR_DTYPE_SIZE[io.dtype]):
        raise VerifyError(f"kernel tensor '{io.name}' ({io.dtype.name} {list(io.shape)}) does "
                          f"not match its memory location")


class InstChecker:
    """Checks the instruction `inst` (number `index`); reused for every instruction."""

    def __init__(self, locs: dict[str, b.MemoryLocation]) -> None:
        self.index = 0
        self.inst: b.Inst = b.InstIota("", EngineType.Unassigned, [], [])
        self.locs = locs
        self.checked: dict[int, b.Argument] = {}  # id -> argument found valid (immutable)

    def fail(self, message: str) -> VerifyError:
        inst = self.inst
        return VerifyError(f"instruction {self.index} '{inst.name}' "
                           f"({type(inst).__name__[4:]}): {message}")

    def check(self) -> None:
        inst = self.inst
        checked = self.checked
        for arg in inst.ins:
            if checked.get(id(arg)) is not arg:
                self.check_arg(arg)
        for out in inst.outs:
            if checked.get(id(out)) is not out:
                self.check_arg(out)
        if not inst.outs and type(inst) not in _DRAINS:
            raise self.fail("has no output")
        check = _CHECKS.get(type(inst))
        if check is not None:
            check(self)

    # ------------------------------------------------------------ arguments
    def check_arg(self, arg: b.Argument) -> None:
        self.check_arg_uncached(arg)
        if not isinstance(self.inst, ANY_START):  # a DMA skips the start rule: not cached
            self.checked[id(arg)] = arg

    def check_arg_uncached(self, arg: b.Argument) -> None:
        if isinstance(arg, b.Immediate):
            ok = (isinstance(arg.value, float) if arg.dtype == BirDtype.float32 else
                  arg.dtype == BirDtype.int32 and isinstance(arg.value, int)
                  and _INT32[0] <= arg.value <= _INT32[1])
            if not ok:
                raise self.fail(f"immediate {arg.value!r} is not a valid {arg.dtype.name}")
            return
        loc = self.locs.get(arg.memref)
        if loc is None:
            raise self.fail(f"unknown memory location '{arg.memref}'")
        if arg.dtype != loc.dtype:
            raise self.fail(f"access of '{arg.memref}' as {arg.dtype.name}, the location holds "
                            f"{loc.dtype.name}")
        if not arg.ap:
            raise self.fail(f"access of '{arg.memref}' has no partition pair")
        row = loc.bytes_per_partition // BIR_DTYPE_SIZE[loc.dtype]
        (pstep, pnum), free = arg.ap[0], arg.ap[1:]
        if pnum > 1 and pstep != row:
            raise self.fail(f"access of '{arg.memref}': partition step {pstep} is not the row "
                            f"length {row}")
        start, first = divmod(arg.offset, row) if row else (0, 0)
        if loc.kind != MemoryKind.HBM:
            if pnum > MAX_PARTITIONS:
                raise self.fail(f"access of '{arg.memref}': {pnum} partitions exceed "
                                f"{MAX_PARTITIONS}")
            # the start-partition rule is the compute engines' (32-partition SBUF banks);
            # a DMA queue addresses SBUF partitions one by one (nl.store(out, t[5:10]))
            if not isinstance(self.inst, ANY_START) and start not in allowed_starts(pnum):
                raise self.fail(f"access of '{arg.memref}': {pnum} partitions cannot start at "
                                f"partition {start} (0/32/64/96; >64 at 0; 33..64 at 0 or 64)")
        if start + pnum > loc.partitions:
            raise self.fail(f"access of '{arg.memref}': partitions {start}..{start + pnum - 1} "
                            f"outside its {loc.partitions}")
        lo = hi = first
        for step, num in free:
            if num == 0:
                lo = hi = first
                break
            span = step * (num - 1)
            lo, hi = lo + min(span, 0), hi + max(span, 0)
        if lo < 0 or hi >= max(row, 1):
            raise self.fail(f"access of '{arg.memref}': free elements {lo}..{hi} outside the "
                            f"row of {row}")

    def tile(self, arg: b.Argument, what: str) -> b.AccessPattern:
        if not isinstance(arg, b.AccessPattern):
            raise self.fail(f"{what} must be a tile, found an immediate")
        return arg

    def scalar(self, arg: b.Argument, what: str) -> None:
        """An immediate or a [P,1] per-partition tile."""
        if isinstance(arg, b.AccessPattern) and elements(arg) != arg.ap[0][1]:
            raise self.fail(f"{what} must be an immediate or a [P,1] tile, found "
                            f"{[n for _, n in arg.ap]}")

    def scalars(self, args: list[b.Argument]) -> bool:
        """Each of `args` (scalar 0, 1, ...) is a scalar; whether one of them is a tile."""
        has_tile = False
        for i, arg in enumerate(args):
            if isinstance(arg, b.AccessPattern):
                has_tile = True
                self.scalar(arg, f"scalar {i}")
        return has_tile

    def same_size(self, src: b.Argument, dst: b.AccessPattern) -> None:
        """Elementwise instructions write as many elements as they read."""
        if isinstance(src, b.AccessPattern) and elements(src) != elements(dst):
            raise self.fail(f"input of {elements(src)} elements, output of {elements(dst)}")

    def count(self, n_ins: tuple[int, ...], n_outs: int) -> None:
        if len(self.inst.ins) not in n_ins or len(self.inst.outs) != n_outs:
            raise self.fail(f"expected {'/'.join(map(str, n_ins))} inputs and {n_outs} outputs, "
                            f"found {len(self.inst.ins)} and {len(self.inst.outs)}")

    # ------------------------------------------------------------ per opcode
    def check_tensor_tensor(self) -> None:
        inst = self.inst
        assert isinstance(inst, b.InstTensorTensor)
        self.count((2,), 1)
        a, c = self.tile(inst.ins[0], "input 0"), self.tile(inst.ins[1], "input 1")
        if (a.dtype != c.dtype and self.locs[a.memref].kind == MemoryKind.SB
                and self.locs[c.memref].kind == MemoryKind.SB):
            raise self.fail(f"SB inputs differ in dtype ({a.dtype.name}, {c.dtype.name})")
        if inst.acc != EngineAccumulationType.Idle:
            raise self.fail(f"acc must be Idle, found {inst.acc.name}")
        if inst.engine == EngineType.Unassigned:
            raise self.fail("engine must be assigned")
        if not elements(a) == elements(c) == elements(inst.outs[0]):
            raise self.fail("inputs and output differ in element count")

    def check_tensor_reduce(self) -> None:
        inst = self.inst
        assert isinstance(inst, b.InstTensorReduce)
        self.count((1,), 1)
        src = self.tile(inst.ins[0], "input")
        if inst.axis in CROSS_LANE_AXES:
            if inst.negate:
                raise self.fail("Cross-lane-reduce cannot negate")
            pnum = src.ap[0][1]
            if pnum % 32 or (elements(src) // max(pnum, 1)) % 32:
                raise self.fail(f"Cross-lane-reduce needs partition and element counts in "
                                f"multiples of 32, found {[n for _, n in src.ap]}")
            folded = pnum
        else:
            if inst.axis + 1 > len(src.ap) - 1:
                raise self.fail(f"axis {inst.axis.name} folds {inst.axis + 1} free dims, the "
                                f"input has {len(src.ap) - 1}")
            folded = 1
            for _, num in src.ap[len(src.ap) - inst.axis - 1:]:
                folded *= num
        if elements(inst.outs[0]) * folded != elements(src):
            raise self.fail(f"output of {elements(inst.outs[0])} elements does not match "
                            f"{elements(src)} input elements folded by {folded}")

    def check_tensor_scalar_ptr(self) -> None:
        inst = self.inst
        assert isinstance(inst, b.InstTensorScalarPtr)
        try:
            variant = tensor_scalar_variant(inst)
        except TensorScalarVariantError as err:
            raise self.fail(str(err)) from None
        if variant in (Variant.TENSOR_TENSOR_SCAN, Variant.SCALAR_TENSOR_TENSOR):
            self.count((3,), 1)
            t0, t1 = self.tile(inst.ins[0], "tensor0"), self.tile(inst.ins[2], "tensor1")
            if variant == Variant.SCALAR_TENSOR_TENSOR:
                self.scalar(inst.ins[1], "scalar")
                if inst.acc != EngineAccumulationType.Idle:
                    raise self.fail(f"acc must be Idle, found {inst.acc.name}")
            if elements(t0) != elements(t1):
                raise self.fail("tensor0 and tensor1 differ in element count")
            return
        reduce = variant == Variant.REDUCE
        self.count((2, 3), 2 if reduce else 1)
        self.same_size(self.tile(inst.ins[0], "input"), inst.outs[0])
        has_tile = self.scalars(inst.ins[1:])
        if reduce:
            self.scalar(inst.outs[1], "reduce output")
        elif inst.is_tensor_scalar_addr != has_tile:
            raise self.fail(f"is_tensor_scalar_addr is {inst.is_tensor_scalar_addr} but the "
                            f"scalars {'include' if has_tile else 'have no'} tiles")

    def check_tensor_scalar_cache(self) -> None:
        inst = self.inst
        assert isinstance(inst, b.InstTensorScalarCache)
        self.count((2, 3), 1)
        self.same_size(self.tile(inst.ins[0], "input"), inst.outs[0])
        self.scalars(inst.ins[1:])

    def check_activation(self) -> None:
        inst = self.inst
        assert isinstance(inst, b.InstActivation)
        if inst.is_activate2:
            self.count((4, 5), 1)
        else:
            base = 3 if inst.scale is None else 2
            self.count((base, base + 1), 1)
            self.scalar(inst.ins[1], "bias")
            if inst.scale is None:
                self.scalar(self.tile(inst.ins[2], "scale"), "scale")
        self.same_size(self.tile(inst.ins[0], "input"), inst.outs[0])

    def check_single(self) -> None:
        self.count((1,), 1)
        self.same_size(self.tile(self.inst.ins[0], "input"), self.inst.outs[0])

    def check_exponential(self) -> None:
        self.count((3,), 1)
        self.scalar(self.inst.ins[0], "max value")
        self.scalar(self.inst.ins[1], "reduce init")
        self.same_size(self.tile(self.inst.ins[2], "input"), self.inst.outs[0])

    def check_memset(self) -> None:
        self.count((1,), 1)
        if not isinstance(self.inst.ins[0], b.Immediate):
            raise self.fail("the value must be an immediate")

    def check_iota(self) -> None:
        self.count((0,), 1)

    def check_drain(self) -> None:
        self.count((1,), 0)
        self.scalar(self.tile(self.inst.ins[0], "accumulator"), "accumulator")


def allowed_starts(pnum: int) -> tuple[int, ...]:
    if pnum > 64:
        return (0,)
    if pnum > 32:
        return (0, 64)
    return (0, 32, 64, 96)


def elements(ap: b.AccessPattern) -> int:
    pairs = ap.ap
    if len(pairs) == 2:   # [partitions, one free pair]: most accesses
        return pairs[0][1] * pairs[1][1]
    n = 1
    for _, num in pairs:
        n *= num
    return n


DMA_INSTS = (b.InstDMACopy, InstDmaTranspose, InstIndirectDMACopy)   # DMA queues: any start partition
ANY_START = (*DMA_INSTS, InstDevicePrint)   # and a print, which reads like a DMA
_DRAINS = frozenset({b.InstDveReadAccumulator, b.InstReadActivationAccumulator}) | NO_OUTPUT
_CHECKS = {
    b.InstTensorTensor: InstChecker.check_tensor_tensor,
    b.InstTensorReduce: InstChecker.check_tensor_reduce,
    b.InstTensorScalarPtr: InstChecker.check_tensor_scalar_ptr,
    b.InstTensorScalarCache: InstChecker.check_tensor_scalar_cache,
    b.InstActivation: InstChecker.check_activation,
    b.InstReciprocal: InstChecker.check_single,
    b.InstDMACopy: InstChecker.check_single,
    b.InstTensorCopy: InstChecker.check_single,
    b.InstExponential: InstChecker.check_exponential,
    b.InstMemset: InstChecker.check_memset,
    b.InstIota: InstChecker.check_iota,
    b.InstDveReadAccumulator: InstChecker.check_drain,
    b.InstReadActivationAccumulator: InstChecker.check_drain,
    **TENSOR_ENGINE_CHECKS,
}
_CHECKS.update(VECTOR_CHECKS)
_CHECKS.update(RANDOM_CHECKS)
