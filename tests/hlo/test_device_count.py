"""Device counts read off a module's collectives (tilecc.hlo.device_count), a cross-partition
collective-permute over one partition (XLA CPU's results, measured on jaxlib 0.10.2), and
loop-safe inputs (random_inputs.loop_safe)."""

from __future__ import annotations

import numpy as np
import pytest

from tilecc.errors import InterpError
from tilecc.hlo.device_count import devices_needed
from tilecc.hlo.interpreter import evaluate_module
from tilecc.hlo.parser import parse_module
from tilecc.hlo.random_inputs import loop_safe


def _one(instruction: str, header: str = "", param: str = "f32[8]") -> str:
    return f"""HloModule m{header}
add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}}
ENTRY e {{
  p = {param} parameter(0)
  ROOT r = {instruction}
}}
"""


@pytest.mark.parametrize("instruction, header, want", [
    ("f32[8] all-reduce(p), replica_groups={{0,1,2,3}}, to_apply=add", "", (4, 1)),
    ("f32[8] all-reduce(p), replica_groups={{0,1}}, to_apply=add", ", replica_count=8", (8, 1)),
    ("f32[8] all-reduce(p), replica_groups=[2,4]<=[8], to_apply=add", "", (8, 1)),
    ("f32[8] all-reduce(p), channel_id=1, replica_groups={{0,1,2,3,4,5}}, "
     "use_global_device_ids=true, to_apply=add", ", num_partitions=2", (3, 2)),
    ("f32[8] all-to-all(p), channel_id=1, replica_groups={{0,1}}, dimensions={0}", "", (1, 2)),
    ("f32[8] collective-permute(p), source_target_pairs={{0,1},{1,2}}", "", (3, 1)),
    ("f32[8] collective-permute(p), channel_id=1, source_target_pairs={{0,1},{1,0}}", "",
     (1, 2)),
    ("f32[32] all-gather(p), replica_groups={}, dimensions={0}", "", (4, 1)),
    ("(f32[8], f32[32]) all-gather-start(p), replica_groups={}, dimensions={0}", "", (4, 1)),
    ("f32[2] reduce-scatter(p), replica_groups={}, dimensions={0}, to_apply=add", "", (4, 1)),
    # cross-replica-and-partition: each group of replicas spans every partition
    ("f32[32] all-gather(p), channel_id=1, replica_groups={{0}}, dimensions={0}", "", (1, 4)),
    ("f32[2] reduce-scatter(p), channel_id=1, replica_groups={{0,1}}, dimensions={0}, "
     "to_apply=add", "", (2, 2)),
    ("f32[4] reduce-scatter(p), channel_id=1, replica_groups={{0,1}}, dimensions={0}, "
     "to_apply=add", "", (2, 1)),
    ("f32[8] all-reduce(p), replica_groups={}, to_apply=add", ", replica_count=2", (2, 1)),
    ("f32[8] add(p, p)", "", (1, 1)),
])
def test_devices_needed(instruction: str, header: str, want: tuple[int, int]) -> None:
    assert devices_needed(parse_module(_one(instruction, header))) == want


def _permute(pairs: str, replicas: int) -> np.ndarray:
    text = _one(f"f32[2] collective-permute(p), channel_id=1, source_target_pairs={pairs}",
                f", replica_count={replicas}", "f32[2]")
    x = np.arange(2 * replicas, dtype=np.float32).reshape(replicas, 2) + 1
    return evaluate_module(parse_module(text), [x], replicas)[0]


def test_a_cross_partition_permute_over_one_partition_delivers_only_to_partition_0() -> None:
    # XLA CPU: targets 1..3 are no partition, so nothing arrives anywhere
    np.testing.assert_array_equal(_permute("{{0,1},{1,2},{2,3}}", 4), np.zeros((4, 2)))
    # {0,0}: partition 0 sends to itself on every replica
    np.testing.assert_array_equal(_permute("{{0,0},{1,1}}", 4),
                                  np.arange(8, dtype=np.float32).reshape(4, 2) + 1)


def test_a_permute_from_a_missing_partition_is_refused() -> None:
    with pytest.raises(InterpError, match="sends from partition 1 of 1"):
        _permute("{{1,0},{0,1}}", 2)  # XLA CPU aborts (std::out_of_range)


LOOP = """HloModule m
cond {
  s = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], s32[]) tuple(j, n)
}
ENTRY e {
  n = s32[] parameter(0)
  data = s32[4] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], s32[]) tuple(zero, n)
  w = (s32[], s32[]) while(init), condition=cond, body=body
  ROOT i = s32[] get-tuple-element(w), index=0
}
"""


def test_loop_safe_folds_only_the_loop_bound_parameters() -> None:
    module = parse_module(LOOP)
    bound = np.array([-(2 ** 31), 2 ** 31 - 1, 7, -5], np.int32)
    data = np.array([[-9, 2 ** 31 - 1, 5, 6]], np.int32)
    safe = loop_safe(module, [bound, data])
    # |x| mod 4 of device 0's value (INT_MIN: 2^31 mod 4 = 0) on every device
    np.testing.assert_array_equal(safe[0], [0, 0, 0, 0])
    np.testing.assert_array_equal(loop_safe(module, [bound[::-1].copy(), data])[0], [1] * 4)
    assert safe[1] is data
    trips = evaluate_module(module, [safe[0][:1], data], 1)[0]
    assert trips.tolist() == [0]
