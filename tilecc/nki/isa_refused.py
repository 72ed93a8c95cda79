"""nki.isa calls tilecc refuses on purpose, each with the reason a kernel author reads.

Contract: `refusal(name)` is the one-line reason for a refused instruction, or None; the
call itself raises a KernelError at the kernel line (tilecc/nki/isa.py `__getattr__`).
The instructions of the NKI ISA reference
(https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/api/nki.isa.html) refused:
- register_alloc / register_move / register_load / register_store: engine registers hold
  values computed at run time (loop counts, dynamic offsets); tilecc traces a kernel once
  into a straight-line KLR body, which has no register file or control flow to use them.
- core_barrier / sendrecv / dma_compute: they synchronise or move data between
  NeuronCores; tilecc simulates one core (collectives belong to its host runtime).
"""

from __future__ import annotations

_REGISTERS = ("engine registers hold run-time values, and tilecc traces a kernel into "
              "straight-line KLR without a register file or control flow")
_MULTI_CORE = "it works across NeuronCores, and tilecc simulates one NeuronCore"

REFUSED: dict[str, str] = {
    "register_alloc": _REGISTERS, "register_move": _REGISTERS, "register_load": _REGISTERS,
    "register_store": _REGISTERS, "core_barrier": _MULTI_CORE, "sendrecv": _MULTI_CORE,
    "dma_compute": _MULTI_CORE,
}


def refusal(name: str) -> str | None:
    reason = REFUSED.get(name)
    return None if reason is None else f"nisa.{name} is refused by tilecc: {reason}"
