"""The XLA oracle itself: results, error messages, crash isolation, channel renumbering."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from tilecc.errors import OracleError
from tilecc.hlo import xla
from tilecc.hlo.xla import (XlaJob, compile_on_xla, parse_on_xla, renumber_channel_ids,
                            run_many_on_xla, run_on_xla)

pytestmark = pytest.mark.oracle

ADD_S32 = "add { a = s32[] parameter(0)  b = s32[] parameter(1)  ROOT c = s32[] add(a, b) }\n"

# Two same-channel collectives of different ranks: XLA CPU rejects this text unless the
# oracle renumbers the channel ids (hlo.md, pitfall 1).
SAME_CHANNEL = """HloModule same_channel, replica_count=4
""" + ADD_S32 + """
ENTRY e {
  p = s32[3] parameter(0)
  q = s64[] parameter(1)
  ar = s32[3] all-reduce(p), channel_id=1, replica_groups={{0,1},{2,3}}, to_apply=add
  m = s32[2,3] broadcast(ar), dimensions={1}
  ar2 = s32[2,3] all-reduce(m), channel_id=1, replica_groups={{0,1},{2,3}}, to_apply=add
  ROOT t = (s32[2,3], s64[]) tuple(ar2, q)
}
"""


def test_renumber_channel_ids_in_text_order() -> None:
    text = "a, channel_id=1, b\nc, channel_id=1\nd channel_id=7"
    assert renumber_channel_ids(text) == "a, channel_id=1, b\nc, channel_id=2\nd channel_id=3"


def test_run_all_reduce_with_wraparound_and_s64_passthrough() -> None:
    p = np.array([[1, 2, 2**31 - 1], [3, 4, 1], [5, 6, -7], [7, 8, -(2**31)]], np.int32)
    q = np.array([-(2**62), 2**62, -1, 0], np.int64)
    out, passthrough = run_on_xla(SAME_CHANNEL, [p, q], 4)
    pair_sums = np.array([[4, 6, -(2**31)], [12, 14, 2**31 - 7]], np.int32)
    want = np.repeat(pair_sums, 2, axis=0)[:, None, :] * np.int32(2)
    assert out.dtype == np.int32 and out.shape == (4, 2, 3)
    np.testing.assert_array_equal(out, np.broadcast_to(want, (4, 2, 3)))
    assert passthrough.dtype == np.int64
    np.testing.assert_array_equal(passthrough, q)


def test_non_tuple_root_and_no_parameters() -> None:
    (out,) = run_on_xla("HloModule m\nENTRY e { ROOT r = u32[] replica-id() }", [], 3)
    assert out.dtype == np.uint32
    np.testing.assert_array_equal(out, [0, 1, 2])


def test_parse_error_carries_xla_message() -> None:
    with pytest.raises(OracleError, match="expects '=' in instruction"):
        parse_on_xla("HloModule m\nENTRY e { ROOT x = s32[2] parameter(0) bogus }")


def test_compile_error_for_groups_not_covering_replicas() -> None:
    text = ("HloModule m, replica_count=4\n" + ADD_S32 +
            "ENTRY e { p = s32[] parameter(0)\n"
            "  ROOT r = s32[] all-reduce(p), replica_groups={{0,1}}, to_apply=add }")
    with pytest.raises(OracleError, match="replica") as err:
        compile_on_xla(text, 4)
    assert "\n" not in str(err.value)  # one line for the command line, no Python locations
    assert "Suspected Python Code Location" not in str(err.value)


def test_batch_survives_a_parser_abort() -> None:
    aborting = "HloModule m\nENTRY e { p = s32[2] parameter(0)  ROOT x = s32[3] reshape(p) }"
    good = "HloModule m\nENTRY e { ROOT x = f32[2] constant({1.5, -inf}) }"
    results = run_many_on_xla([XlaJob("run", good, [], 2), XlaJob("parse", aborting),
                               XlaJob("run", good, [], 1)])
    assert isinstance(results[1], OracleError)
    assert "Check failed" in str(results[1])
    for result, replicas in ((results[0], 2), (results[2], 1)):
        assert isinstance(result, list)
        np.testing.assert_array_equal(result[0], np.tile([1.5, -np.inf], (replicas, 1)))


def test_wrong_input_layout_is_an_oracle_error() -> None:
    with pytest.raises(OracleError, match="leading device axis"):
        run_on_xla("HloModule m\nENTRY e { ROOT p = s32[2] parameter(0) }",
                   [np.zeros((2,), np.int32)], 4)


def test_missing_jax_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(xla.importlib.util, "find_spec",
                        lambda name, *rest: None if name == "jax" else real_find_spec(name, *rest))
    with pytest.raises(OracleError, match="needs jax 0.10"):
        parse_on_xla("HloModule m\nENTRY e { ROOT c = s32[] constant(1) }")


def test_session_keeps_one_child_and_restarts_after_a_crash() -> None:
    aborting = "HloModule m\nENTRY e { p = s32[2] parameter(0)  ROOT x = s32[3] reshape(p) }"
    with xla.XlaSession(devices=2) as session:
        first = session.submit(XlaJob("run", "HloModule m\nENTRY e { ROOT r = u32[] replica-id() }",
                                      [], 2))
        child = session._proc
        assert isinstance(first, list)
        np.testing.assert_array_equal(first[0], [0, 1])
        second = session.submit(XlaJob("run", "HloModule m\nENTRY e { ROOT r = u32[] replica-id() }",
                                       [], 1))
        assert session._proc is child and isinstance(second, list)
        crash = session.submit(XlaJob("parse", aborting))
        assert isinstance(crash, OracleError) and "Check failed" in str(crash)
        grown = session.submit(XlaJob("run", "HloModule m\nENTRY e { ROOT r = u32[] replica-id() }",
                                      [], 4))
        assert isinstance(grown, list)
        np.testing.assert_array_equal(grown[0], [0, 1, 2, 3])


def test_strip_shardings_matches_braces() -> None:
    text = ("p = f32[4] parameter(0), sharding={devices=[4]<=[4]}, metadata={op_name=\"x\"}\n"
            "t = (f32[], f32[]) tuple(a, b), sharding={{replicated}, {maximal device=0}}\n")
    assert xla.strip_shardings(text) == ("p = f32[4] parameter(0), metadata={op_name=\"x\"}\n"
                                         "t = (f32[], f32[]) tuple(a, b)\n")


def test_time_jobs_report_wall_and_cpu_and_reuse_their_executable() -> None:
    text = "HloModule m\nENTRY e { p = s32[4] parameter(0)  ROOT n = s32[4] negate(p) }"
    x = np.array([[1, -2, 2**31 - 1, -(2**31)]] * 2, np.int32)
    with xla.XlaSession(devices=2) as session:
        for replicas in (2, 2, 1):  # the same text twice (kept executable), then recompiled
            timed = session.submit(XlaJob("time", text, [x[:replicas]], replicas, 1, 2))
            assert isinstance(timed, list) and timed[0].shape == (2,)
            wall, cpu = timed[0]
            assert 0 < wall < 10 and 0 <= cpu < 10
        ran = session.submit(XlaJob("run", text, [x], 2))
        assert isinstance(ran, list)
        np.testing.assert_array_equal(ran[0], [[-1, 2, -(2**31) + 1, -(2**31)]] * 2)
    assert 0 < xla.time_on_xla(text, [x], 2, repeats=1) < 10


MESH_SUM = """HloModule mesh_sum, replica_count=8
""" + ADD_S32 + """
ENTRY e {
  p = s32[] parameter(0)
  ROOT r = s32[] all-reduce(p), channel_id=1, replica_groups=GROUPS, use_global_device_ids=true, to_apply=add
}
"""


def test_mesh_groups_run_as_their_expansion() -> None:
    """jaxlib's StableHLO round trip drops a mesh's device order (the device_ids case sums
    over {0,1},{2,3},... without the rewrite); the oracle sends the groups as explicit lists,
    so XLA sums over the groups the text names (checked against numpy)."""
    values = np.array([1, 2, 4, 8, 16, 32, 64, 128], np.int32)
    forms = {"mesh['a'=2,'b'=4] {'b'}": [[0, 1, 2, 3], [4, 5, 6, 7]],
             "mesh['a'=2,'b'=4] {'a'}": [[0, 4], [1, 5], [2, 6], [3, 7]],
             "mesh['a'=4,'b'=2], device_ids=([2,4]T(1,0)) {'b'}": [[0, 4], [1, 5], [2, 6],
                                                                  [3, 7]]}
    jobs = [XlaJob("run", MESH_SUM.replace("GROUPS", form), [values], 8) for form in forms]
    for (form, groups), result in zip(forms.items(), run_many_on_xla(jobs)):
        assert not isinstance(result, Exception), f"{form}: {result}"
        want = np.zeros(8, np.int32)
        for g in groups:
            want[g] = values[g].sum()
        np.testing.assert_array_equal(result[0], want, err_msg=form)
    assert xla.explicit_mesh_groups(
        "x, replica_groups=mesh['a'=4,'b'=2], device_ids=([2,4]T(1,0)) {'b'}, to_apply=add") == \
        "x, replica_groups={{0,4},{1,5},{2,6},{3,7}}, to_apply=add"


def test_sub_byte_integers_pass_in_and_out_as_ml_dtypes() -> None:
    import ml_dtypes
    text = """HloModule sub_byte
ENTRY e {
  a = s4[3] parameter(0)
  b = u4[3] parameter(1)
  wide = s8[3] convert(a)
  sum = u4[3] add(b, b)
  ROOT t = (s4[3], u4[3], s8[3]) tuple(a, sum, wide)
}
"""
    a = np.array([[-8, 7, -1], [0, 1, -2]], ml_dtypes.int4)
    b = np.array([[15, 8, 3], [0, 1, 7]], ml_dtypes.uint4)
    same, doubled, wide = run_on_xla(text, [a, b], 2)
    assert same.dtype == np.dtype(ml_dtypes.int4) and same.tobytes() == a.tobytes()
    assert doubled.dtype == np.dtype(ml_dtypes.uint4)
    assert doubled.astype(np.int64).tolist() == [[14, 0, 6], [0, 2, 14]]  # wraps modulo 16
    assert wide.dtype == np.int8 and wide.tolist() == [[-8, 7, -1], [0, 1, -2]]
