"""2x2 max pooling and 2x2 average pooling with stride 2 of [C=128, H=16, W=24] maps.

Covers: four strided 3-d views `t[:, 0:h:2, 1:w:2]` of one tile, nl.maximum of views,
nisa.tensor_tensor of views, tensor_scalar on a 3-d tile."""
import numpy as np
import tilecc.nki as nki
import tilecc.nki.isa as nisa
import tilecc.nki.language as nl


@nki.jit
def pool2(x):
    c, h, w = x.shape
    mx = nl.ndarray((c, h // 2, w // 2), dtype=x.dtype, buffer=nl.shared_hbm)
    av = nl.ndarray((c, h // 2, w // 2), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    a = t[:, 0:h:2, 0:w:2]
    b = t[:, 0:h:2, 1:w:2]
    cc = t[:, 1:h:2, 0:w:2]
    d = t[:, 1:h:2, 1:w:2]
    nl.store(mx, nl.maximum(nl.maximum(a, b), nl.maximum(cc, d)))
    s = nisa.tensor_tensor(nisa.tensor_tensor(a, b, op=np.add), nisa.tensor_tensor(cc, d, op=np.add), op=np.add)
    nl.store(av, nisa.tensor_scalar(s, np.multiply, 0.25))
    return mx, av


KERNEL = pool2
TOLERANCE = {"rtol": 1e-6, "atol": 1e-6}


def make_inputs(rng):
    return (rng.normal(size=(128, 16, 24)).astype(np.float32),)


def reference(x):
    a, b, c, d = x[:, 0::2, 0::2], x[:, 0::2, 1::2], x[:, 1::2, 0::2], x[:, 1::2, 1::2]
    return np.maximum(np.maximum(a, b), np.maximum(c, d)), ((a + b) + (c + d)) * np.float32(0.25)
