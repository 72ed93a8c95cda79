"""Replica groups of a collective, in the form the text used.

Contract: a `ReplicaGroups` value remembers which of XLA's four spellings it came from and
prints back in that same spelling (XLA's printer keeps the form it read):
- explicit `{{0,1},{2,3}}` (`kind == "explicit"`),
- empty `{}` meaning "all participants" (`kind == "empty"`, `groups()` is None),
- iota `[G,S]<=[d0,d1,...]` or `[G,S]<=[dims]T(perm)` (`kind == "iota"`), meaning
  iota(prod(dims)).reshape(dims).transpose(perm).reshape(G, S),
- mesh `mesh['a'=2,'b'=4] {'b'}` (`kind == "mesh"`): devices are numbered row-major over
  the mesh axes; a group holds the devices that differ only along the listed axes (ordered
  by the listed axes, first listed = most significant), groups ordered row-major over the
  remaining axes. XLA prints a mesh whose devices are not in iota order with its device
  order, `mesh['a'=4,'b'=2], device_ids=([2,4]T(1,0)) {'a'}` (an iota list
  `[dims]T(perm)` = iota(prod(dims)).reshape(dims).transpose(perm), or explicit ids
  `0,4,1,5,...`): the device at row-major mesh position k is the k-th id of that list
  (XLA's Mesh / MeshAxesReplicaGroupList, replica_group.cc); the text is kept verbatim.
`groups()` expands any non-empty form to explicit lists of ids.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from math import prod

import numpy as np


@dataclass(frozen=True, slots=True)
class ReplicaGroups:
    kind: str
    explicit: tuple[tuple[int, ...], ...] = ()
    iota_shape: tuple[int, int] = (0, 0)
    iota_dims: tuple[int, ...] = ()
    iota_perm: tuple[int, ...] | None = None
    mesh_axes: tuple[tuple[str, int], ...] = ()
    mesh_selected: tuple[str, ...] = ()
    mesh_device_ids: tuple[int, ...] = ()  # device at each row-major mesh position; () = iota
    mesh_device_text: str = ""  # the device_ids=(...) text as written, printed back
    _text: str | None = field(default=None, init=False, repr=False, compare=False)
    """to_text()'s result, kept on first use (the parser shares one object per spelling)."""

    @staticmethod
    def from_groups(groups: list[list[int]] | tuple[tuple[int, ...], ...]) -> ReplicaGroups:
        """Explicit groups; an empty list gives the empty form `{}`."""
        if not groups:
            return ReplicaGroups("empty")
        return ReplicaGroups("explicit", tuple(tuple(int(i) for i in g) for g in groups))

    @staticmethod
    def empty() -> ReplicaGroups:
        return ReplicaGroups("empty")

    @staticmethod
    def iota(group_count: int, group_size: int, dims: tuple[int, ...] | list[int],
             perm: tuple[int, ...] | list[int] | None = None,
             sized: bool = True) -> ReplicaGroups:
        """`[G,S]<=[dims]T(perm)`; ValueError unless prod(dims) == G*S (when `sized`: XLA's
        parser reads `[2,2]<=[16]`, and `groups()` refuses it) and perm permutes dims."""
        dims = tuple(int(d) for d in dims)
        if sized and prod(dims) != group_count * group_size:
            raise ValueError(f"iota replica groups [{group_count},{group_size}] need "
                             f"{group_count * group_size} ids but dims {list(dims)} give {prod(dims)}")
        if perm is not None:
            perm = tuple(int(p) for p in perm)
            if sorted(perm) != list(range(len(dims))):
                raise ValueError(f"T{perm} is not a permutation of {len(dims)} dims")
        return ReplicaGroups("iota", iota_shape=(int(group_count), int(group_size)),
                             iota_dims=dims, iota_perm=perm)

    @staticmethod
    def mesh(axes: list[tuple[str, int]] | tuple[tuple[str, int], ...],
             selected: list[str] | tuple[str, ...],
             device_text: str | None = None) -> ReplicaGroups:
        """`mesh['a'=2,'b'=4] {'b'}` (with `device_text`, the inside of `device_ids=(...)`);
        ValueError for a selected axis the mesh lacks or a device list that is not a
        permutation of the mesh's devices."""
        names = [name for name, _ in axes]
        if len(set(names)) != len(names):
            raise ValueError(f"mesh axis names repeat: {names}")
        for name in selected:
            if name not in names:
                raise ValueError(f"mesh has no axis '{name}' (axes: {', '.join(names)})")
        if len(set(selected)) != len(selected):
            raise ValueError(f"mesh axes listed twice: {list(selected)}")
        device_ids: tuple[int, ...] = ()
        if device_text is not None:
            device_ids = _device_order(device_text.strip())
            count = prod(int(s) for _, s in axes)
            if sorted(device_ids) != list(range(count)):
                raise ValueError(f"device_ids=({device_text}) is not an order of the mesh's "
                                 f"{count} devices")
        return ReplicaGroups("mesh", mesh_axes=tuple((n, int(s)) for n, s in axes),
                             mesh_selected=tuple(selected), mesh_device_ids=device_ids,
                             mesh_device_text=device_text.strip() if device_text else "")

    def groups(self) -> list[list[int]] | None:
        """Explicit id lists, or None for the empty form (all participants)."""
        if self.kind == "empty":
            return None
        if self.kind == "explicit":
            return [list(g) for g in self.explicit]
        if self.kind == "iota":
            g, s = self.iota_shape
            if prod(self.iota_dims) != g * s:
                raise ValueError(f"iota replica groups [{g},{s}] need {g * s} ids but dims "
                                 f"{list(self.iota_dims)} give {prod(self.iota_dims)}")
            ids = np.arange(prod(self.iota_dims)).reshape(self.iota_dims)
            if self.iota_perm is not None:
                ids = ids.transpose(self.iota_perm)
            return ids.reshape(self.iota_shape).tolist()
        return self._mesh_groups()

    def _mesh_groups(self) -> list[list[int]]:
        names = [n for n, _ in self.mesh_axes]
        sizes = [s for _, s in self.mesh_axes]
        order = self.mesh_device_ids if self.mesh_device_ids else range(prod(sizes))
        ids = np.array(order, dtype=np.int64).reshape(sizes)
        rest = [names.index(n) for n in names if n not in self.mesh_selected]
        chosen = [names.index(n) for n in self.mesh_selected]
        group_size = prod(sizes[i] for i in chosen)
        return ids.transpose(rest + chosen).reshape(-1, group_size).tolist()

    def first_group_size(self) -> int | None:
        """Size of the first group (the spec's replica_groups[0].size()); None when empty."""
        if self.kind == "empty":
            return None
        if self.kind == "explicit":
            return len(self.explicit[0])
        if self.kind == "iota":
            return self.iota_shape[1]
        sizes = dict(self.mesh_axes)
        return prod(sizes[n] for n in self.mesh_selected)

    def num_groups(self) -> int:
        groups = self.groups()
        return 0 if groups is None else len(groups)

    def to_text(self) -> str:
        text = self._text
        if text is None:
            text = self._spelling()
            object.__setattr__(self, "_text", text)  # a cache, not a field: frozen stays true
        return text

    def _spelling(self) -> str:
        if self.kind == "empty":
            return "{}"
        if self.kind == "explicit":
            return "{" + ",".join("{" + ",".join(map(str, g)) + "}" for g in self.explicit) + "}"
        if self.kind == "iota":
            g, s = self.iota_shape
            text = f"[{g},{s}]<=[{','.join(map(str, self.iota_dims))}]"
            if self.iota_perm is not None:
                text += f"T({','.join(map(str, self.iota_perm))})"
            return text
        axes = ",".join(f"'{n}'={s}" for n, s in self.mesh_axes)
        selected = ",".join(f"'{n}'" for n in self.mesh_selected)
        devices = f", device_ids=({self.mesh_device_text})" if self.mesh_device_text else ""
        return f"mesh[{axes}]{devices} {{{selected}}}"

    def __str__(self) -> str:
        return self.to_text()




_IOTA_ORDER = re.compile(r"\[\s*(\d+(?:\s*,\s*\d+)*)\s*\](?:\s*T\(\s*(\d+(?:\s*,\s*\d+)*)\s*\))?")


def _device_order(text: str) -> tuple[int, ...]:
    """The ids of `device_ids=(text)`: `[dims]T(perm)` (iota, transposed) or `i,j,k,...`."""
    if (m := _IOTA_ORDER.fullmatch(text)) is not None:
        dims = [int(x) for x in m.group(1).split(",")]
        ids = np.arange(prod(dims)).reshape(dims)
        if m.group(2):
            perm = [int(x) for x in m.group(2).split(",")]
            if sorted(perm) != list(range(len(dims))):
                raise ValueError(f"T({m.group(2)}) is not a permutation of {len(dims)} dims")
            ids = ids.transpose(perm)
        return tuple(int(i) for i in ids.reshape(-1))
    try:
        return tuple(int(x) for x in text.split(","))
    except ValueError:
        raise ValueError(f"device_ids=({text}) is neither [dims]T(perm) nor a list of "
                         "device ids") from None


def participants_per_group(groups: ReplicaGroups | None, channel_id: int | None,
                           use_global_device_ids: bool, replica_count: int,
                           num_partitions: int) -> int:
    """How many devices one group of a collective spans, by XLA's group mode (XLA's
    GetSubgroupSize, hlo_verifier.cc), used for all-gather / reduce-scatter shapes:
    - cross-replica (no channel_id): the first group's size, or replica_count when empty;
    - cross-replica-and-partition (channel_id, no global ids): the same, times
      num_partitions -- the group's replicas take part from every partition;
    - flattened ids (channel_id and use_global_device_ids): the first group's size; XLA
      rejects empty groups there, tilecc reads them as every device
      (replica_count * num_partitions).
    Missing groups (`None`) mean the same as empty ones.
    """
    size = groups.first_group_size() if groups is not None else None
    if use_global_device_ids:
        return size if size is not None else replica_count * num_partitions
    if size is None:
        size = replica_count
    return size * num_partitions if channel_id is not None else size
