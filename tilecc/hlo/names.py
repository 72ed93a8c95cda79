"""Module-wide unique names, as XLA's NameUniquer (xla/service/name_uniquer.cc) hands them out.

Contract:
- `claim(wanted)` returns a name no earlier `claim` or `register` returned, and records it.
  Like NameUniquer::GetUniqueName it sanitizes `wanted` (invalid characters become `_`, a
  name starting with neither a letter nor `_` gets `_` first, a primitive type name gets a
  trailing `_`, a leading `__` not followed by `xla_` becomes `a_`), splits a numeric
  suffix (`add.3` -> root `add`, id 3) and takes the wanted id if free, else the smallest
  free id from the root's running counter. Id 0 prints as the bare root (`add`), or
  `add.0` when it was written with the suffix; both spellings hold id 0.
- `register(name)` records a name read from text verbatim (XLA's parser keeps names) so
  later claims never produce it or another spelling of its (root, id).
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


class NameUniquer:
    """One namespace of names (a module has one for instructions, one for computations).

    The ids used under a root are read off the set of names itself: id k > 0 is used iff
    `root.k` is taken, id 0 iff `root` or `root.0` is; a registered name whose suffix has
    leading zeros (`x.01`, id 1) also takes its canonical spelling in `_aliases`. So
    registering a parsed name is one set insertion, and nothing is recomputed per claim.
    """

    __slots__ = ("default", "names", "_aliases", "_next", "_split")

    def __init__(self, default: str) -> None:
        self.default = default
        self.names: set[str] = set()
        self._aliases: set[str] = set()
        self._next: dict[str, int] = {}  # per root: SequentialIdGenerator's next id to try
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

    def _used(self, root: str, n: int) -> bool:
        if n:
            name = f"{root}.{n}"
            return name in self.names or name in self._aliases
        zero = root + ".0"
        return root in self.names or zero in self.names or zero in self._aliases

    def claim(self, wanted: str) -> str:
        """NameUniquer::GetUniqueName: the wanted id if free, else the smallest free id from
        the root's counter (SequentialIdGenerator::RegisterId)."""
        parts = self._split.get(wanted)
        root, n, has_suffix = parts if parts is not None else self._parts(wanted)
        used = self._used
        next_ids = self._next
        # a root with a counter has id 0 taken (the counter starts there), so a builder's
        # `reshape` goes straight to the counter
        if (not n and root in next_ids) or used(root, n):
            n = next_ids.get(root, 0)
            names, aliases = self.names, self._aliases
            while True:  # _used inlined for n > 0: the counter's id is nearly always free
                if n:
                    name = f"{root}.{n}"
                    if name not in names and name not in aliases:
                        break
                elif not used(root, 0):
                    name = f"{root}.0" if has_suffix else root
                    break
                n += 1
            next_ids[root] = n + 1
        else:
            name = f"{root}.{n}" if n or has_suffix else root
        self.names.add(name)
        return name

    def claim_many(self, wanted: str, count: int) -> list[str]:
        """`count` claims of `wanted` in a row: the names `claim` would hand out one by one
        (an expansion asks for its `slice`s together; each root has its own counter, so
        claims under other roots in between would not change them)."""
        root, n, _ = self._parts(wanted)
        out: list[str] = []
        if n or root not in self._next:
            # the first claims take the wanted id or put the root's counter in place; after
            # two, the counter serves the rest (the second cannot take id 0 or the wanted id)
            out.extend(self.claim(wanted) for _ in range(min(count, 2)))
        if len(out) == count:
            return out
        # claim's counter loop for n > 0 (a root with a counter has id 0 taken)
        n = self._next[root]
        names, aliases, take = self.names, self._aliases, out.append
        while len(out) < count:
            name = f"{root}.{n}"
            n += 1
            if name not in names and name not in aliases:
                names.add(name)
                take(name)
        self._next[root] = n
        return out

    def peek(self, wanted: str) -> str:
        """What `claim(wanted)` would return, state untouched."""
        root, n, has_suffix = self._parts(wanted)
        if self._used(root, n):
            n = self._next.get(root, 0)
            while self._used(root, n):
                n += 1
        return f"{root}.{n}" if n or has_suffix else root

    def take(self, name: str) -> str:
        """`name` verbatim when free (a name read from text), else `claim(name)`."""
        if name in self.names:
            return self.claim(name)
        self.register(name)
        return name

    def register(self, name: str) -> None:
        """Take `name` verbatim (a name read from text)."""
        self.names.add(name)
        if ".0" in name:  # only then can the suffix have a leading zero
            root, n, has_suffix = split_suffix(name)
            canonical = f"{root}.{n}"
            if has_suffix and canonical != name:
                self._aliases.add(canonical)

    def __contains__(self, name: object) -> bool:
        return name in self.names
