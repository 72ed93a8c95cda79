"""A small FileCheck for golden pass tests: check lines matched in order against printed HLO.

Contract: `filecheck(text, checks)` raises AssertionError naming the first check line that
failed and the text region it searched. Directives, one per check line:
- `CHECK: pattern`      the next line at or after the cursor that matches,
- `CHECK-NEXT: pattern` exactly the line after the previous match,
- `CHECK-NOT: pattern`  no line between the previous match and the next positive match.
A pattern is literal text, except `[[NAME:regex]]` (capture the regex as NAME) and
`[[NAME]]` (the text captured earlier as NAME) -- so a check can follow operand wiring
without depending on the generated instruction names. (HLO's `{{0,1}}` replica groups are
literal text here: there is no `{{regex}}` form.)
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"\[\[([A-Za-z_][A-Za-z0-9_]*)(?::(.*?))?\]\]")
_DIRECTIVE = re.compile(r"^\s*(?://\s*)?(CHECK(?:-NEXT|-NOT)?):\s?(.*)$")


def parse_checks(text: str) -> list[tuple[str, str]]:
    """The (directive, pattern) pairs of every `// CHECK...:` line in `text`."""
    return [(m.group(1), m.group(2).rstrip()) for line in text.splitlines()
            if (m := _DIRECTIVE.match(line))]


def _compile(pattern: str, env: dict[str, str]) -> tuple[re.Pattern[str], list[str]]:
    out: list[str] = []
    captures: list[str] = []
    pos = 0
    for m in _TOKEN.finditer(pattern):
        out.append(re.escape(pattern[pos:m.start()]))
        name, regex = m.groups()
        if regex is not None:
            captures.append(name)
            out.append(f"(?P<{name}>{regex})")
        else:
            if name not in env:
                raise AssertionError(f"check uses [[{name}]] before it is captured")
            out.append(re.escape(env[name]))
        pos = m.end()
    out.append(re.escape(pattern[pos:]))
    return re.compile("".join(out)), captures


def filecheck(text: str, checks: list[tuple[str, str]]) -> None:
    lines = text.splitlines()
    env: dict[str, str] = {}
    cursor = 0          # first line the next CHECK may match
    last = -1           # line of the previous positive match
    pending_not: list[str] = []
    for directive, pattern in checks:
        if directive == "CHECK-NOT":
            pending_not.append(pattern)
            continue
        regex, captures = _compile(pattern, env)
        candidates = [last + 1] if directive == "CHECK-NEXT" else range(cursor, len(lines))
        found = next((i for i in candidates if i < len(lines) and regex.search(lines[i])), None)
        if found is None:
            region = "\n".join(lines[cursor:])
            raise AssertionError(f"{directive}: {pattern!r} not found in:\n{region}")
        for neg in pending_not:
            neg_regex, _ = _compile(neg, env)
            for i in range(cursor, found):
                if neg_regex.search(lines[i]):
                    raise AssertionError(f"CHECK-NOT: {neg!r} matched line {lines[i]!r}")
        pending_not = []
        match = regex.search(lines[found])
        assert match is not None
        env.update({name: match.group(name) for name in captures})
        last = found
        cursor = found + 1
    for neg in pending_not:
        neg_regex, _ = _compile(neg, env)
        for i in range(cursor, len(lines)):
            if neg_regex.search(lines[i]):
                raise AssertionError(f"CHECK-NOT: {neg!r} matched line {lines[i]!r}")
