"""The NeuronCore generation a kernel is traced for: nki.isa.nc_version, get_nc_version(),
get_nc_sub_version() (re-exported by tilecc.nki.isa).

Pages: https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/api/generated/
nki.isa.get_nc_version.html (and .nc_version, .get_nc_sub_version). Kernels branch on the
generation (`if nisa.get_nc_version() >= nisa.nc_version.gen3:`), so the members compare
as their numbers. tilecc simulates a NeuronCore-v3 (trn2, the platform_target of the
published examples): get_nc_version() is gen3, get_nc_sub_version() 0 (first revision).
"""

from __future__ import annotations

from enum import IntEnum


class nc_version(IntEnum):  # noqa: N801 (NKI's name)
    """NeuronCore generations, ordered so kernels can compare them (gen2 Trn1 / Inf2, gen3
    Trn2, gen4 Trn3)."""

    gen2 = 2
    gen3 = 3
    gen4 = 4


SIMULATED = nc_version.gen3


def get_nc_version() -> nc_version:
    """The simulated NeuronCore generation."""
    return SIMULATED


def get_nc_sub_version() -> int:
    """The silicon revision within the generation: 0, the first."""
    return 0
