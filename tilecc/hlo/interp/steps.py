"""The interpreter's one table: opcode -> the builder of its step.

Contract: `STEPS[opcode](runner, inst)` returns the Step evaluating `inst` (see values), or
raises InterpError when the interpreter does not run it; an opcode missing from STEPS is
not supported. Parameters have no step: the interpreter binds them to argument slots.
A new family of opcodes lives in its own module and adds its rows here.
"""

from __future__ import annotations

from tilecc.hlo.interp import async_steps as s
from tilecc.hlo.interp import batch_norm as bn
from tilecc.hlo.interp import basic_steps as b
from tilecc.hlo.interp import called_steps as c
from tilecc.hlo.interp import collective_steps as k
from tilecc.hlo.interp.conv import convolution_step
from tilecc.hlo.interp.custom_calls import custom_call_step
from tilecc.hlo.interp.fft import fft_step
from tilecc.hlo.interp.gather import gather_step, scatter_step
from tilecc.hlo.interp.rng_steps import rng_get_and_update_state_step, rng_step
from tilecc.hlo.interp.select_scatter import select_and_scatter_step
from tilecc.hlo.interp.scan import scan_step
from tilecc.hlo.interp.shapes import HANDLERS as DATA_MOVEMENT
from tilecc.hlo.interp.topk import topk_step
from tilecc.hlo.interp.triangular_solve import triangular_solve_step
from tilecc.hlo.interp.values import Builder
from tilecc.hlo.opcodes import ELEMENTWISE_BINARY, ELEMENTWISE_UNARY, HloOpcode as Op

# elementwise opcodes with a builder of their own (operand types or attributes matter)
_SPECIAL = {Op.CONVERT, Op.BITCAST_CONVERT, Op.IS_FINITE, Op.REAL, Op.IMAG,
            Op.REDUCE_PRECISION, Op.COMPARE}

STEPS: dict[Op, Builder] = {
    **{op: b.unary_step for op in ELEMENTWISE_UNARY - _SPECIAL},
    **{op: b.binary_step for op in ELEMENTWISE_BINARY - _SPECIAL},
    Op.COPY: b.first_operand_step,
    Op.CONSTANT: b.constant_step, Op.IOTA: b.iota_step,
    Op.COMPARE: b.compare_step, Op.SELECT: b.select_step, Op.CLAMP: b.clamp_step,
    Op.CONVERT: b.convert_step, Op.BITCAST_CONVERT: b.bitcast_convert_step,
    Op.IS_FINITE: b.is_finite_step, Op.REDUCE_PRECISION: b.reduce_precision_step,
    Op.REAL: b.real_imag_step, Op.IMAG: b.real_imag_step,
    Op.OPTIMIZATION_BARRIER: b.first_operand_step,
    Op.RNG_BIT_GENERATOR: b.rng_bit_generator_step, Op.RNG: rng_step,
    Op.RNG_GET_AND_UPDATE_STATE: rng_get_and_update_state_step,
    **{op: b.data_movement_step for op in DATA_MOVEMENT},
    Op.RESHAPE: b.reshape_step, Op.BROADCAST: b.broadcast_step,
    Op.TRANSPOSE: b.transpose_step, Op.DOT: b.dot_step,
    Op.TUPLE: b.tuple_step, Op.GET_TUPLE_ELEMENT: b.get_tuple_element_step,
    Op.CONVOLUTION: convolution_step, Op.GATHER: gather_step, Op.SCATTER: scatter_step,
    Op.SELECT_AND_SCATTER: select_and_scatter_step, Op.CUSTOM_CALL: custom_call_step,
    Op.CALL: c.call_step, Op.FUSION: c.call_step, Op.REDUCE: c.reduce_step,
    Op.REDUCE_WINDOW: c.reduce_window_step, Op.MAP: c.map_step, Op.SORT: c.sort_step,
    Op.WHILE: c.while_step, Op.CONDITIONAL: c.conditional_step,
    Op.REPLICA_ID: k.replica_id_step, Op.PARTITION_ID: k.partition_id_step,
    Op.ALL_REDUCE: k.all_reduce_step, Op.ALL_GATHER: k.all_gather_step,
    Op.REDUCE_SCATTER: k.reduce_scatter_step, Op.ALL_TO_ALL: k.all_to_all_step,
    Op.COLLECTIVE_PERMUTE: k.collective_permute_step,
    Op.COLLECTIVE_BROADCAST: k.collective_broadcast_step,
    Op.ALL_REDUCE_START: k.all_reduce_step, Op.ALL_REDUCE_DONE: b.first_operand_step,
    Op.ALL_GATHER_START: s.all_gather_start_step, Op.ALL_GATHER_DONE: s.element_step(1),
    Op.COLLECTIVE_PERMUTE_START: s.collective_permute_start_step,
    Op.COLLECTIVE_PERMUTE_DONE: s.element_step(1),
    Op.COPY_START: s.copy_start_step, Op.COPY_DONE: s.element_step(0),
    Op.ASYNC_START: s.async_start_step, Op.ASYNC_UPDATE: b.first_operand_step,
    Op.ASYNC_DONE: s.element_step(1),
    Op.AFTER_ALL: s.after_all_step, Op.ADD_DEPENDENCY: b.first_operand_step,
    Op.DOMAIN: b.first_operand_step, Op.TOPK: topk_step,
    Op.FFT: fft_step, Op.TRIANGULAR_SOLVE: triangular_solve_step, Op.SCAN: scan_step,
    Op.BATCH_NORM_TRAINING: bn.batch_norm_training_step,
    Op.BATCH_NORM_INFERENCE: bn.batch_norm_inference_step,
    Op.BATCH_NORM_GRAD: bn.batch_norm_grad_step,
}
