"""nki.isa random numbers: rng, rand2, dropout, set_rng_seed, rand_set_state, rand_get_state
(re-exported by tilecc.nki.isa), and the nki.language calls built on them: nl.rand,
nl.random_seed, nl.dropout, and nl.device_print.

Contract as tilecc/nki/isa.py. Pages:
https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/api/generated/nki.isa.rng.html
(and .rand2, .dropout, .set_rng_seed, .rand_set_state, .rand_get_state; nki.language.rand,
.random_seed, .dropout, .device_print). The generator is tilecc's Philox4x32-10
(tilecc/counter_rng.py): every run is reproducible from its seed, bits differ from the
hardware's XORWOW. Restrictions checked: rng writes int8 / int16 / int32 / uint8 / uint16 /
uint32 on the Vector or GpSimd Engine (GpSimd: SBUF only); rand2's min / max floats or
[P, 1] tiles; dropout's dst has data's dtype and shape, prob a float in [0, 1] or a [P, 1]
tile (integer data needs a float32 prob tile); the seed a [1, 1] 32-bit tile (or, for
nl.random_seed, a compile-time integer, written to one); the state tiles uint32 with
tilecc's 6 words per partition (rand_set_state's in SBUF). nl.rand(shape, dtype) is
rand2 over [0, 1); nl.dropout(x, rate) is dropout; nl.device_print(prefix, x) records
the kernel's file:line as the statement's position and prints when the executor reaches it.
"""

from __future__ import annotations

from tilecc.klr import ast
from tilecc.klr import ast_random as kr
from tilecc.nki import isa_legacy as legacy
from tilecc.nki import operands as chk
from tilecc.nki.dtypes import is_float, plain_number
from tilecc.nki.errors import kernel_error, kernel_frame_location
from tilecc.nki.isa_enums import engine, klr_engine
from tilecc.nki.isa_legacy import two_forms
from tilecc.nki.isa_vector import ap, emit, f32_operand, new_tile, no_mask
from tilecc.nki.shapes import new_tensor
from tilecc.nki.tensor import NkiTensor
from tilecc.nki.tracer import active_trace, assigned_name, klr_dtype

_RNG_DTYPES = ("int8", "int16", "int32", "uint8", "uint16", "uint32")
_GENERATORS = (engine.vector, engine.gpsimd)


def _generator_tile(fn: str, arg: str, value: object, eng: ast.Engine) -> NkiTensor:
    return chk.tile(fn, arg, value, ("sbuf",) if eng is ast.Engine.pool else ("sbuf", "psum"))


def rng(dst: object, engine: engine = engine.vector, name: str | None = None) -> None:
    """dst = 32 random bits per element, truncated to dst's integer width."""
    eng = klr_engine("rng", engine, _GENERATORS)
    d = _generator_tile("rng", "dst", dst, eng)
    if d.dtype not in _RNG_DTYPES:
        raise kernel_error(f"nisa.rng: dst must be an integer type ({', '.join(_RNG_DTYPES)}), got "
                           f"{d.dtype}")
    emit(kr.Rng(ap(d), eng))


def rand2(dst: object, min: object, max: object, name: str | None = None) -> None:  # noqa: A002
    """dst = uniform values in [min, max) (Vector Engine)."""
    d = chk.tile("rand2", "dst", dst)
    low, high = (f32_operand(chk.scalar_operand("rand2", arg, _float(v), d))
                 for arg, v in (("min", min), ("max", max)))
    if isinstance(low, ast.Immediate) and isinstance(high, ast.Immediate) and not low.value < high.value:
        raise kernel_error(f"nisa.rand2: min must be less than max, got {min!r} and {max!r}")
    emit(kr.Rand2(ap(d), low, high))


def _float(value: object) -> object:
    value = plain_number(value)
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _dropout_legacy(fn: object, data: object, prob: object, *, mask: object = None,
                    dtype: object = None) -> NkiTensor:
    x = chk.tile("dropout", "data", data)
    no_mask("dropout", mask, x)
    out = new_tile(x.shape, x.dtype if dtype is None else legacy._dtype(dropout, dtype, x.dtype))
    dropout(dst=out, data=x, prob=prob)
    return out


@two_forms(_dropout_legacy)
def dropout(dst: object, data: object, prob: object, name: str | None = None) -> None:
    """dst = 0 where an element is dropped (probability prob), data elsewhere."""
    d, x = chk.tile("dropout", "dst", dst), chk.tile("dropout", "data", data)
    chk.same_elements("dropout", ("data", x), ("dst", d))
    if d.dtype != x.dtype:
        raise kernel_error(f"nisa.dropout: dst must have data's dtype {x.dtype}, got {d.dtype}")
    value = _float(prob)
    if isinstance(value, float) and not 0.0 <= value <= 1.0:
        raise kernel_error(f"nisa.dropout: prob is a probability in [0, 1], got {prob!r}")
    if not is_float(x.dtype) and not isinstance(value, NkiTensor):
        raise kernel_error("nisa.dropout: integer data needs prob as a float32 [P, 1] tile")
    threshold = f32_operand(chk.scalar_operand("dropout", "prob", value, x,
                                               float32_tile=not is_float(x.dtype)))
    emit(kr.Dropout(ap(d), ap(x), kr.DropoutThresholdType.DropRate, threshold, klr_dtype(d.dtype)))


def set_rng_seed(src_seeds: object, name: str | None = None) -> None:
    """Seed the Vector Engine's generator with the 32-bit value of a [1, 1] tile."""
    s = chk.tile("set_rng_seed", "src_seeds", src_seeds)
    if s.partitions * s.free_elements != 1 or s.dtype not in ("int32", "uint32", "float32"):
        raise kernel_error(f"nisa.set_rng_seed: src_seeds must be a [1, 1] tile of a 32-bit value, got "
                           f"{chk.describe(s)}")
    emit(kr.SetRngSeed(ap(s)))


def _state_tile(fn: str, arg: str, value: object, buffers: tuple[str, ...]) -> NkiTensor:
    t = chk.tile(fn, arg, value, buffers)
    if t.dtype != "uint32" or t.free_elements != 6:
        raise kernel_error(f"nisa.{fn}: {arg} must be a uint32 tile of 6 words per partition (the "
                           f"Philox4x32 key and counter of each lane), got {chk.describe(t)}")
    return t


def rand_set_state(src_seeds: object, engine: engine = engine.gpsimd, name: str | None = None) -> None:
    """Load each lane's generator state from src_seeds [P, 6] uint32 (SBUF)."""
    eng = klr_engine("rand_set_state", engine, _GENERATORS)
    emit(kr.RandSetState(ap(_state_tile("rand_set_state", "src_seeds", src_seeds, ("sbuf",))), eng))


def rand_get_state(dst: object, engine: engine = engine.gpsimd, name: str | None = None) -> None:
    """Store each lane's generator state into dst [P, 6] uint32."""
    eng = klr_engine("rand_get_state", engine, _GENERATORS)
    buffers = ("sbuf",) if eng is ast.Engine.pool else ("sbuf", "psum")
    emit(kr.RandGetState(ap(_state_tile("rand_get_state", "dst", dst, buffers)), eng))


# ---------------------------------------------------------------- nki.language

def rand(shape: object, dtype: object = "float32", buffer: object = None, name: str = "",
         **kwargs: object) -> NkiTensor:
    """nl.rand: a new tile of uniform values in [0, 1) (rand2 on the Vector Engine)."""
    out = new_tensor(shape, dtype, "sbuf" if buffer is None else buffer, name or assigned_name())
    rand2(dst=out, min=0.0, max=1.0)
    return out


def random_seed(seed: object, mask: object = None) -> None:
    """nl.random_seed: a [1, 1] seed tile, or a 32-bit integer written to one first."""
    value = plain_number(seed)
    if isinstance(value, NkiTensor):
        set_rng_seed(value)
        return
    if isinstance(value, bool) or not isinstance(value, int) or not -2 ** 31 <= value < 2 ** 32:
        raise kernel_error(f"nl.random_seed: seed must be a [1, 1] tile or a 32-bit integer, got {seed!r}")
    tile = active_trace().allocate((1, 1), "uint32", "sbuf", "seed")
    emit(ast.MemSet(ap(tile), ast.Immediate(value & 0xFFFFFFFF if value < 2 ** 31 else value - 2 ** 32),
                    ast.Dtype.uint32))
    set_rng_seed(tile)


def language_dropout(x: object, rate: object, dtype: object = None, mask: object = None) -> NkiTensor:
    """nl.dropout(x, rate): a new tile with elements of x zeroed with probability rate."""
    result: NkiTensor = dropout(x, rate, dtype=dtype, mask=mask)
    return result


def device_print(print_prefix: object, tensor: object, mask: object = None) -> None:
    """nl.device_print: print the tensor with the prefix and this kernel line when it runs."""
    if not isinstance(print_prefix, str):
        raise kernel_error(f"nl.device_print: print_prefix must be a constant string, got {print_prefix!r}")
    if not isinstance(tensor, NkiTensor):
        raise kernel_error(f"nl.device_print: expected a tensor to print, got {chk.describe(tensor)}")
    path, line, col, _ = kernel_frame_location()
    op = kr.DevicePrint(active_trace().access(tensor, dma=True), print_prefix)
    op.pos = ast.Pos(line, col, filename=path)
    emit(op)
