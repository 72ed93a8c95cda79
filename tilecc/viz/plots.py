"""Plots for the pages, drawn by matplotlib (the `viz` extra): the output of a kernel
against its reference.

Contract: `check_image(name, got, want)` is a PNG data: URI with three panels -- the output,
the reference and a heat map of |got - want| where they differ (cells that are equal, NaN
matching NaN, stay blank) -- or None when matplotlib is not installed (`plots_note()` is
the one line saying so). Arrays of more than two dimensions are shown as [first, rest];
a 1-d array as one row. Non-finite values are drawn at the finite range's edges.
"""

from __future__ import annotations

import base64
import io

import numpy as np

PLOTS_NOTE = "the --check picture needs matplotlib: pip install 'tilecc[viz]'"


def as_2d(array: np.ndarray) -> np.ndarray:
    wide = np.asarray(array).astype(np.float64)
    if wide.ndim == 0:
        return wide.reshape(1, 1)
    return wide.reshape(1, -1) if wide.ndim == 1 else wide.reshape(wide.shape[0], -1)


def error_map(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """|got - want| where they differ (inf where exactly one is non-finite), NaN where equal."""
    x, y = as_2d(got), as_2d(want)
    same = (x == y) | (np.isnan(x) & np.isnan(y))
    with np.errstate(invalid="ignore"):
        diff = np.abs(x - y)
    diff[~np.isfinite(diff)] = np.inf
    diff[same] = np.nan
    return diff


def check_image(name: str, got: np.ndarray, want: np.ndarray) -> str | None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        from matplotlib import pyplot as plt
    except ImportError:
        return None
    diff = error_map(got, want)
    figure, axes = plt.subplots(1, 3, figsize=(12, 3.4), dpi=90)
    for ax, title, data in ((axes[0], f"{name} (tilecc)", as_2d(got)),
                            (axes[1], "reference", as_2d(want))):
        finite = np.where(np.isfinite(data), data, np.nan)
        image = ax.imshow(finite, aspect="auto", interpolation="nearest", cmap="viridis")
        ax.set_title(title, fontsize=9)
        figure.colorbar(image, ax=ax)
    differing = int(np.count_nonzero(~np.isnan(diff)))
    shown = np.where(np.isinf(diff), np.nan, diff)
    image = axes[2].imshow(shown, aspect="auto", interpolation="nearest", cmap="magma_r")
    axes[2].set_title(f"|difference|: {differing} of {diff.size} differ", fontsize=9)
    figure.colorbar(image, ax=axes[2])
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    plt.close(figure)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
