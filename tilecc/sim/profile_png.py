"""A simulated profile as a picture: a Chrome trace (`tilecc run --profile`) drawn as a PNG.

Contract: `render_png(trace, path)` draws one row per track (engine or DMA queue), one bar
per instruction slice from its start to its end in microseconds, labelled with the slice's
name (NKI call and kernel line) where it fits, and titles the picture as an ESTIMATE from
the documented cost model. Needs matplotlib (the `viz` extra: pip install tilecc[viz]);
without it, a TileccError says so. `python -m tilecc.sim.profile_png TRACE.json OUT.png`
does the same from the command line.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from tilecc.errors import TileccError
from tilecc.fileio import read_text

_COLOURS = ("#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3")


def render_png(trace: dict[str, Any], path: str) -> None:
    """Draw the trace's complete events, one row per thread, into `path`."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise TileccError("drawing a profile needs matplotlib: pip install 'tilecc[viz]'") from None
    events = trace.get("traceEvents", [])
    names = {e["tid"]: e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    slices = [e for e in events if e.get("ph") == "X"]
    tids = sorted(names)
    end = max((e["ts"] + e["dur"] for e in slices), default=1.0)
    fig, ax = plt.subplots(figsize=(12, 0.8 + 0.7 * len(tids)))
    for row, tid in enumerate(tids):
        for e in (s for s in slices if s["tid"] == tid):
            ax.barh(row, e["dur"], left=e["ts"], height=0.6, color=_COLOURS[row % len(_COLOURS)],
                    edgecolor="white")
            if e["dur"] > end * 0.06:
                ax.text(e["ts"] + e["dur"] / 2, row, e["name"], ha="center", va="center",
                        fontsize=7, color="white", clip_on=True)
    ax.set_yticks(range(len(tids)), [names[t] for t in tids])
    ax.invert_yaxis()
    ax.set_xlim(0, end * 1.02)
    ax.set_xlabel("estimated time (us)")
    note = trace.get("otherData", {}).get("note", "estimates")
    ax.set_title(f"tilecc simulated profile: {note}", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m tilecc.sim.profile_png TRACE.json OUT.png", file=sys.stderr)
        return 1
    try:
        trace = json.loads(read_text(argv[0]))
        render_png(trace, argv[1])
    except (TileccError, json.JSONDecodeError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
