"""Register, multi-core and collective instructions are refused with one located line that
names the instruction and says why (tilecc/nki/isa_refused.py)."""

from __future__ import annotations

import numpy as np
import pytest

import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl
from tilecc.nki import KernelError

CALLS = {
    "register_alloc": lambda t: nisa.register_alloc(0),
    "register_move": lambda t: nisa.register_move(None, 1),
    "register_load": lambda t: nisa.register_load(None, t),
    "register_store": lambda t: nisa.register_store(t, None),
    "core_barrier": lambda t: nisa.core_barrier(t, (0, 1)),
    "sendrecv": lambda t: nisa.sendrecv(t, t, 1, 0, 0),
    "dma_compute": lambda t: nisa.dma_compute(t, [t, t], nl.add),
}
REASONS = {"register": "register file", "core_barrier": "one NeuronCore", "sendrecv": "one NeuronCore",
           "dma_compute": "one NeuronCore"}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_refused_instruction_is_named_at_its_line(name):
    def kernel(a):
        t = nl.load(a)
        CALLS[name](t)
        return a

    with pytest.raises(KernelError) as info:
        nki.simulate(kernel)(np.zeros((4, 4), np.float32))
    err = info.value
    assert err.line == CALLS[name].__code__.co_firstlineno  # the kernel code making the call
    reason = next(v for k, v in REASONS.items() if name.startswith(k))
    assert f"nisa.{name} is refused by tilecc" in str(err) and reason in str(err)
    assert "\n" not in str(err)


def test_unknown_name_is_still_an_attribute_error():
    with pytest.raises(AttributeError):
        nisa.no_such_instruction  # noqa: B018


def test_the_simulated_generation_compares_as_nki_kernels_expect():
    assert nisa.get_nc_version() == nisa.nc_version.gen3
    assert nisa.nc_version.gen2 < nisa.get_nc_version() < nisa.nc_version.gen4
    assert nisa.get_nc_sub_version() == 0
