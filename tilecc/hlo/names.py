"""Module-wide unique names, as XLA's NameUniquer (xla/service/name_uniquer.cc) hands them out.

Contract:
- `claim(wanted)` returns a name no earlier `claim` or `register` returned, and records it.
  Like NameUniquer::GetUniqueName it sanitizes `wanted` (invalid characters become `_`, a
  name starting with neither a letter nor `_` gets `_` first, a primitive type name gets a
  trailing `_`, a leading `__` not followed by `xla_` becomes `a_`), splits a numeric
  suffix (`add.3` -> root `add`, id 3) and keeps, per root, the set of ids used: the wanted
  id if free, else the smallest free id from the root's running counter. Id 0 prints as the
  bare root (`add`), or `add.0` when it was written with the suffix.
- `register(name)` records a name read from text verbatim (XLA's parser keeps names) so
  later claims never produce it: its (root, id) is marked used and the exact spelling too.
- Names are never released: XLA never reuses a name within a module, even after the
  instruction that had it is removed.
- `peek(wanted)` is what `claim` would return, without recording it.
"""

from __future__ import annotations

import re

from tilecc.hlo.types import TYPE_BY_NAME

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
_INVALID = re.compile(r"[^A-Za-z0-9_.\-]")
_MAX_SUFFIX_DIGITS = 18  # SimpleAtoi into int64 fails beyond this: no numeric suffix then


def sanitize(name: str) -> str:
    """NameUniquer::GetSanitizedName."""
    if not name:
        return ""
    if _PLAIN.fullmatch(name) is None:
        name = _INVALID.sub("_", name)
        if not (name[0].isascii() and (name[0].isalpha() or name[0] == "_")):
            name = "_" + name[1:]
    if name in TYPE_BY_NAME and name != "tuple":
        name += "_"
    if name.startswith("__") and not name.startswith("__xla_"):
        name = "a" + name[1:]
    return name


def split_suffix(name: str) -> tuple[str, int, bool]:
    """(root, numeric suffix, whether there was one): `add.3` -> ('add', 3, True)."""
    dot = name.rfind(".")
    if 0 < dot < len(name) - 1:
        tail = name[dot + 1:]
        if tail.isascii() and tail.isdigit() and len(tail) <= _MAX_SUFFIX_DIGITS:
            return name[:dot], int(tail), True
    return name, 0, False


class _Ids:
    """NameUniquer's SequentialIdGenerator: the ids used under one root and the next id to
    try (RegisterId is inlined in NameUniquer.claim)."""

    __slots__ = ("used", "next")

    def __init__(self) -> None:
        self.used: set[int] = set()
        self.next = 0


class NameUniquer:
    """One namespace of names (a module has one for instructions, one for computations)."""

    __slots__ = ("default", "names", "_ids", "_split", "_pending")

    def __init__(self, default: str) -> None:
        self.default = default
        self.names: set[str] = set()
        # registered names whose (root, id) is not yet recorded: the parser registers every
        # name it reads, and most parsed modules never claim one, so that work waits for the
        # first claim
        self._pending: list[str] = []
        self._ids: dict[str, _Ids] = {}
        # wanted text -> (root, id, has suffix) after sanitizing; builders ask for the same
        # few prefixes ("reshape", "slice", ...) over and over
        self._split: dict[str, tuple[str, int, bool]] = {}

    def _parts(self, wanted: str) -> tuple[str, int, bool]:
        parts = self._split.get(wanted)
        if parts is None:
            parts = split_suffix(sanitize(wanted or self.default))
            if len(self._split) < 4096:
                self._split[wanted] = parts
        return parts

    def claim(self, wanted: str) -> str:
        if self._pending:
            self._record_pending()
        parts = self._split.get(wanted)
        root, n, has_suffix = parts if parts is not None else self._parts(wanted)
        ids = self._ids.get(root)
        if ids is None:
            ids = self._ids[root] = _Ids()
        used, names = ids.used, self.names
        while True:
            if n in used:  # SequentialIdGenerator::RegisterId, inlined: builders call this a lot
                n = ids.next
                while n in used:
                    n += 1
                ids.next = n + 1
            used.add(n)
            name = f"{root}.{n}" if n or has_suffix else root
            if name not in names:  # only a verbatim name like `x.01` can be in the way
                names.add(name)
                return name

    def peek(self, wanted: str) -> str:
        """What `claim(wanted)` would return, state untouched (copies it: not for hot paths)."""
        self._record_pending()
        other = NameUniquer(self.default)
        other.names = set(self.names)
        for root, ids in self._ids.items():
            copy = other._ids[root] = _Ids()
            copy.used, copy.next = set(ids.used), ids.next
        return other.claim(wanted)

    def register(self, name: str) -> None:
        self.names.add(name)
        self._pending.append(name)

    def _record_pending(self) -> None:
        ids_by_root = self._ids
        for name in self._pending:
            root, n, _ = split_suffix(name)
            ids = ids_by_root.get(root)
            if ids is None:
                ids = ids_by_root[root] = _Ids()
            ids.used.add(n)
        self._pending.clear()

    def __contains__(self, name: object) -> bool:
        return name in self.names
