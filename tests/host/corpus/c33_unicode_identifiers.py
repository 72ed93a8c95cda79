"""Unicode identifiers (class, function, variables) and comments."""

import pypto.language as pl
import pypto.language.distributed as pld

TAILLE = 32


@pl.program
class Réduction:
    @pl.function(type=pl.FunctionType.Orchestration)
    def puce(self, données: pld.DistributedTensor[[TAILLE], pl.FP32]):
        return données  # renvoie les données

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def hôte(self):
        tampon = pld.alloc_window_buffer(TAILLE * 4)
        données = pld.window(tampon, [TAILLE], dtype=pl.FP32)
        for rang in pl.range(pld.world_size()):
            self.puce(données, device=rang)
        données = pld.tensor.allreduce(données, op=pld.ReduceOp.Sum)  # Σ sur les rangs
        Δ = pld.tensor.allreduce(données, op=pld.ReduceOp.Max)
        return Δ
