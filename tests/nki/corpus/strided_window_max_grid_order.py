"""Max pooling with a 4 x 4 window and stride 2 of int8 feature maps [96, 20, 20], and the
same window's mean in float32, written with a 5-d index grid whose window axes come last
(c, out_h, out_w, win_h, win_w) while the tile's dims use them interleaved.

Covers: five nl.arange axes combined as `t[c, 2 * oh + wh, 2 * ow + ww]` (the access is the
grid's [c, oh, ow, wh, ww], so axis=[3, 4] is the window), nl.max / nl.mean over two trailing
axes, an always-true mask of lower and upper bounds, int8 data, nl.copy to float32."""
import numpy as np

import tilecc.nki as nki
import tilecc.nki.language as nl


@nki.jit
def window_max_mean(fmap):
    c, h, w = fmap.shape
    k, s = 4, 2
    oh, ow = (h - k) // s + 1, (w - k) // s + 1
    peak = nl.ndarray((c, oh, ow), dtype=fmap.dtype, buffer=nl.shared_hbm)
    mean = nl.ndarray((c, oh, ow), dtype=nl.float32, buffer=nl.shared_hbm)
    ic = nl.arange(c)[:, None, None, None, None]
    ih = nl.arange(oh)[None, :, None, None, None]
    iw = nl.arange(ow)[None, None, :, None, None]
    kh = nl.arange(k)[None, None, None, :, None]
    kw = nl.arange(k)[None, None, None, None, :]
    t = nl.load(fmap)
    rows, cols = s * ih + kh, s * iw + kw
    inside = (rows >= 0) & (cols >= 0) & (rows < h) & (cols < w)
    nl.store(peak, nl.max(t[ic, rows, cols], axis=[3, 4], mask=inside))
    wide = nl.copy(t, dtype=nl.float32)
    nl.store(mean, nl.mean(wide[ic, rows, cols], axis=[3, 4]))
    return peak, mean


KERNEL = window_max_mean
TOLERANCE = {"rtol": 1e-6, "atol": 1e-6}


def make_inputs(rng):
    return (rng.integers(-128, 128, size=(96, 20, 20)).astype(np.int8),)


def reference(fmap):
    windows = np.stack([fmap[:, a:a + 17:2, b:b + 17:2] for a in range(4) for b in range(4)])
    return windows.max(axis=0), windows.astype(np.float64).mean(axis=0).astype(np.float32)
