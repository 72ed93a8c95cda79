"""XLA as an independent oracle: parse, compile and run HLO text on XLA's CPU backend.

Contract:
- Everything runs in a child Python process (`python -m tilecc.hlo.xla`), because XLA's
  parser aborts the whole process (a CHECK failure) on some invalid text. A job that kills
  the child becomes an OracleError carrying the child's last stderr lines; the jobs after
  it run in a fresh child.
- `run_on_xla(text, inputs, replicas, partitions=1)`: `inputs` holds one array per entry
  parameter, each with a leading device axis of length replicas * partitions (device
  d = replica * partitions + partition, the order of XLA's flattened ids); the result is
  the flattened root tuple (a non-tuple root is one output), each with that leading axis.
- `parse_on_xla(text)` / `compile_on_xla(text, replicas)` return None or raise OracleError
  with XLA's own message.
- `run_many_on_xla(jobs)` runs many jobs in ONE child (importing jax costs about a
  second; one small module costs 20-40 ms) and returns, per job, its outputs or the
  OracleError it raised (never raises for a single job's failure).
- Channel ids are renumbered 1, 2, ... in text order before XLA sees the text: the SPMD
  partitioner gives every collective of a shard_map body channel_id=1 and the CPU layout
  assignment then fails for same-channel collectives of different ranks (hlo.md,
  pitfall 1). The channel id's value does not change what one module computes.
- With partitions > 1 the module is compiled with XLA's SPMD partitioner enabled (XLA CPU
  refuses several partitions otherwise); it keeps unannotated instructions as written but
  rejects partition-id, so such modules cannot run on the oracle with partitions.
- jax's x64 mode is on in the child so that s64 / u64 / f64 values keep their type.
- Recipe (jaxlib 0.10.x private API, see the pin in pyproject.toml): hlo_module_from_text
  -> hlo_to_stablehlo -> compile_and_load with a (replicas, partitions) device assignment
  -> execute_sharded on per-device arrays.
"""

from __future__ import annotations

import importlib.util
import os
import pickle
import re
import struct
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import numpy as np

from tilecc.errors import OracleError

_CHANNEL_ID = re.compile(r"\bchannel_id=\d+")
_STDERR_TAIL_LINES = 12
# glog's fatal line: "F1130 04:01:37.123701    6563 hlo_instruction.cc:2397] Check failed: ..."
_FATAL_LOG_LINE = re.compile(r"^F\d{4} [\d:.]+\s+\d+ (.*)$", re.MULTILINE)


@dataclass(slots=True)
class XlaJob:
    """One request to the child: `kind` is "parse", "compile" or "run"."""

    kind: str
    text: str
    inputs: list[np.ndarray] = field(default_factory=list)
    replicas: int = 1
    partitions: int = 1


def renumber_channel_ids(text: str) -> str:
    """Give every `channel_id=` in `text` a distinct id 1, 2, ... in text order."""
    counter = iter(range(1, 1 << 62))
    return _CHANNEL_ID.sub(lambda _match: f"channel_id={next(counter)}", text)


def run_on_xla(text: str, inputs: list[np.ndarray], replicas: int,
               partitions: int = 1) -> list[np.ndarray]:
    """Execute the entry computation of `text` on XLA CPU; see the module contract."""
    return _unwrap(run_many_on_xla([XlaJob("run", text, list(inputs), replicas, partitions)])[0])


def parse_on_xla(text: str) -> None:
    """Raise OracleError with XLA's message if XLA's HLO parser rejects `text`."""
    _unwrap(run_many_on_xla([XlaJob("parse", text)])[0])


def compile_on_xla(text: str, replicas: int, partitions: int = 1) -> None:
    """Raise OracleError with XLA's message if XLA's CPU compiler rejects `text`."""
    _unwrap(run_many_on_xla([XlaJob("compile", text, [], replicas, partitions)])[0])


def _unwrap(result: list[np.ndarray] | OracleError | None) -> Any:
    if isinstance(result, OracleError):
        raise result
    return result


def require_jax() -> None:
    """Raise OracleError when jax / jaxlib are not importable here."""
    for name in ("jax", "jaxlib"):
        if importlib.util.find_spec(name) is None:
            raise OracleError(f"the XLA oracle needs {name} 0.10.x, which is not installed "
                              "(pip install 'tilecc[test]')")


def run_many_on_xla(jobs: list[XlaJob], timeout: float | None = None
                    ) -> list[list[np.ndarray] | OracleError | None]:
    """Run `jobs` in one child process (a new one after a crash); one result per job.

    A "run" job yields its outputs, "parse" / "compile" jobs yield None, a failed job
    yields the OracleError describing it. `timeout` bounds each child process (seconds;
    default 60 + 5 per job).
    """
    require_jax()
    for job in jobs:
        if job.kind not in ("parse", "compile", "run"):
            raise ValueError(f"unknown XLA job kind {job.kind!r}")
        if job.replicas < 1 or job.partitions < 1:
            raise OracleError(f"XLA needs at least one replica and partition, got "
                              f"replicas={job.replicas} partitions={job.partitions}")
    results: list[list[np.ndarray] | OracleError | None] = []
    while len(results) < len(jobs):
        pending = jobs[len(results):]
        done, crash = _run_child(pending, timeout if timeout is not None else 60 + 5 * len(pending))
        results.extend(done)
        if crash is not None:
            results.append(crash)
    return results


def _run_child(jobs: list[XlaJob], timeout: float
               ) -> tuple[list[list[np.ndarray] | OracleError | None], OracleError | None]:
    """Results of the jobs the child finished, and the error of the job it died on."""
    devices = max(job.replicas * job.partitions for job in jobs)
    env = dict(os.environ)
    env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") +
                        f" --xla_force_host_platform_device_count={devices}").strip()
    env["JAX_PLATFORMS"] = "cpu"
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    payload = pickle.dumps([(j.kind, renumber_channel_ids(j.text),
                             [np.asarray(x) for x in j.inputs], j.replicas, j.partitions)
                            for j in jobs], protocol=pickle.HIGHEST_PROTOCOL)
    try:
        proc = subprocess.run([sys.executable, "-m", "tilecc.hlo.xla"], input=payload,
                              capture_output=True, env=env, timeout=timeout, check=False)
        stdout, stderr, died = proc.stdout, proc.stderr, proc.returncode != 0
    except subprocess.TimeoutExpired as exc:
        stdout, stderr, died = exc.stdout or b"", (exc.stderr or b"") + \
            f"\nXLA child timed out after {timeout:.0f} s".encode(), True
    done = _read_records(stdout)
    if len(done) == len(jobs):
        return done, None
    reason = _crash_reason(stderr.decode(errors="replace"))
    if not died:
        reason = "child exited without answering: " + reason
    return done, OracleError(f"XLA {jobs[len(done)].kind} failed (process died): {reason}")


def _crash_reason(stderr: str) -> str:
    """XLA's fatal log line (`Check failed: ...`) if any, else the last lines of stderr."""
    fatal = _FATAL_LOG_LINE.findall(stderr)
    if fatal:
        return fatal[-1].strip()
    tail = stderr.split("*** Check failure stack trace", 1)[0].strip().splitlines()
    return "\n".join(tail[-_STDERR_TAIL_LINES:]) if tail else "no message"


def _read_records(stream: bytes) -> list[list[np.ndarray] | OracleError | None]:
    records: list[list[np.ndarray] | OracleError | None] = []
    offset = 0
    while offset + 8 <= len(stream):
        (size,) = struct.unpack_from("<Q", stream, offset)
        if offset + 8 + size > len(stream):
            break
        ok, value = pickle.loads(stream[offset + 8:offset + 8 + size])
        records.append(value if ok else OracleError(value))
        offset += 8 + size
    return records


# ---- child side: everything below runs only in `python -m tilecc.hlo.xla` ----

def _child_main() -> None:
    """Read the pickled jobs from stdin, answer one length-prefixed record per job."""
    protocol: BinaryIO = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # stray prints from jax / XLA must not corrupt the record stream
    jobs = pickle.loads(sys.stdin.buffer.read())
    try:
        import jax
        from jax._src.lib import xla_client
    except ImportError as exc:
        for _ in jobs:
            _answer(protocol, False, f"the XLA oracle needs jax 0.10.x: {exc}")
        return
    jax.config.update("jax_enable_x64", True)
    for kind, text, inputs, replicas, partitions in jobs:
        try:
            value = _child_job(jax, xla_client, kind, text, inputs, replicas, partitions)
        except Exception as exc:  # XLA's message is the payload; the parent re-raises it
            _answer(protocol, False, f"XLA {kind} failed: {type(exc).__name__}: {exc}")
        else:
            _answer(protocol, True, value)


def _answer(protocol: BinaryIO, ok: bool, value: object) -> None:
    data = pickle.dumps((ok, value), protocol=pickle.HIGHEST_PROTOCOL)
    protocol.write(struct.pack("<Q", len(data)) + data)
    protocol.flush()


def _child_job(jax: Any, xc: Any, kind: str, text: str, inputs: list[np.ndarray],
               replicas: int, partitions: int) -> list[np.ndarray] | None:
    module = xc.hlo.hlo_module_from_text(text)
    if kind == "parse":
        return None
    stablehlo = xc._xla.mlir.hlo_to_stablehlo(module.as_serialized_hlo_module_proto())
    count = replicas * partitions
    devices = jax.devices("cpu")[:count]
    options = xc.CompileOptions()
    options.num_replicas = replicas
    options.num_partitions = partitions
    options.device_assignment = xc.DeviceAssignment.create(
        np.arange(count).reshape(replicas, partitions))
    # XLA CPU runs several partitions only through the SPMD partitioner; on a module without
    # sharding annotations it keeps every instruction as written (it rejects partition-id).
    options.executable_build_options.use_spmd_partitioning = partitions > 1
    executable = devices[0].client.compile_and_load(
        stablehlo, xc.DeviceList(tuple(devices)), options)
    if kind == "compile":
        return None
    from jax.sharding import Mesh, NamedSharding, PartitionSpec
    sharding = NamedSharding(Mesh(np.array(devices), ("d",)), PartitionSpec())
    args = []
    for index, array in enumerate(inputs):
        if array.ndim == 0 or array.shape[0] != count:
            raise ValueError(f"input {index} has shape {array.shape}; expected a leading "
                             f"device axis of length {count}")
        pieces = [jax.device_put(np.array(array[d]), devices[d]) for d in range(count)]
        args.append(jax.make_array_from_single_device_arrays(array.shape[1:], sharding, pieces))
    outputs = executable.execute_sharded(args).disassemble_into_single_device_arrays()
    return [np.stack([np.asarray(piece) for piece in per_device]) for per_device in outputs]


if __name__ == "__main__":
    _child_main()
