"""The DSL's element types (`pl.FP32`, ...) as numpy dtypes: one table for the runtime."""

from __future__ import annotations

import ml_dtypes
import numpy as np

DTYPES: dict[str, type] = {
    "FP32": np.float32, "FP16": np.float16, "BF16": ml_dtypes.bfloat16, "INT8": np.int8,
    "INT16": np.int16, "INT32": np.int32, "INT64": np.int64, "UINT8": np.uint8, "BOOL": np.bool_}
