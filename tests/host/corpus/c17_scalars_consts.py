import pypto.language as pl


@pl.program
class Scalars:
    @pl.function
    def arith(self, a: pl.Scalar[pl.INT32], b: pl.Scalar[pl.INT32], t: pl.Tensor[[16, 8], pl.FP32]) -> pl.Scalar[pl.INT32]:
        c = pl.const(7, pl.INT32)
        q = (a + b) // c % 3 - -a
        p = a ** 2 << 1 | b & 0xFF ^ ~c
        rows = t.shape[0]
        kind = t.dtype
        big = q if q > p and not a == b else p
        ok = a <= b < c or a != 0
        width = pl.INT32.get_byte() * 8
        neg = -1.5e-3
        return q + p + rows + big + width
