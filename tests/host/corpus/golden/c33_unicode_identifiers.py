# SynthesizeAllReduceSignals output for ../c33_unicode_identifiers.py
"""Unicode identifiers (class, function, variables) and comments."""
import pypto.language as pl
import pypto.language.distributed as pld
TAILLE = 32


@pl.program
class Réduction:

    @pl.function(type=pl.FunctionType.Orchestration)
    def puce(self, données: pld.DistributedTensor[[TAILLE], pl.FP32]):
        # renvoie les données
        return données

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def hôte(self):
        __allreduce_signal_world_size_0 = pld.system.world_size()
        __allreduce_signal_buf_0: pl.Ptr = pld.tensor.alloc_window_buffer(__allreduce_signal_world_size_0 * 1 * pl.INT32.get_byte())
        __allreduce_signal_0 = pld.tensor.window(__allreduce_signal_buf_0, [__allreduce_signal_world_size_0, 1], dtype=pl.INT32)
        tampon = pld.tensor.alloc_window_buffer(TAILLE * 4)
        données = pld.tensor.window(tampon, [TAILLE], dtype=pl.FP32)
        for rang in pl.range(pld.system.world_size()):
            self.puce(données, device=rang)
        # Σ sur les rangs
        données = pld.tensor.allreduce(données, __allreduce_signal_0, op=pld.ReduceOp.Sum)
        Δ = pld.tensor.allreduce(données, __allreduce_signal_0, op=pld.ReduceOp.Max)
        return Δ
