"""`nki.typing` for tilecc: the `tensor[...]` annotation kernels write on tiles
(`a: tensor[128, 512] = nl.load(a_tensor)`).

Contract: `tensor[shape...]` is accepted wherever an annotation is evaluated and means
nothing to the tracer (Python does not evaluate annotations of local variables); it exists
so that `from nki.typing import tensor` keeps working after the import is changed.
"""

from __future__ import annotations


class tensor:  # noqa: N801 (NKI's name)
    """Annotation of a tile's shape: `tensor[128, 512]`."""

    def __class_getitem__(cls, shape: object) -> type[tensor]:
        return cls
