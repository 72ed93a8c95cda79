"""XLA as an independent oracle: parse, compile and run HLO text on XLA's CPU backend.

Contract:
- Everything runs in a child Python process (`python -m tilecc.hlo.xla`), because XLA's
  parser aborts the whole process (a CHECK failure) on some invalid text. A job that kills
  the child becomes an OracleError carrying the child's last stderr lines; the jobs after
  it run in a fresh child.
- `run_on_xla(text, inputs, replicas, partitions=1)`: `inputs` holds one array per entry
  parameter (a tuple parameter: a tuple of them, nested as its shape, passed to XLA as its
  leaves), each with a leading device axis of length replicas * partitions (device
  d = replica * partitions + partition, the order of XLA's flattened ids); the result is
  the flattened root tuple (a non-tuple root is one output), each with that leading axis.
- `parse_on_xla(text)` / `compile_on_xla(text, replicas)` return None or raise OracleError
  with XLA's own message.
- `run_many_on_xla(jobs)` runs many jobs in ONE child (importing jax costs about a
  second; one small module costs 20-40 ms) and returns, per job, its outputs or the
  OracleError it raised (never raises for a single job's failure). `XlaSession` keeps
  that child alive across calls (for property-based tests that submit one job at a time).
- Channel ids are renumbered 1, 2, ... in text order before XLA sees the text: the SPMD
  partitioner gives every collective of a shard_map body channel_id=1 and the CPU layout
  assignment then fails for same-channel collectives of different ranks (hlo.md,
  pitfall 1). The channel id's value does not change what one module computes.
- Mesh-form replica groups are spelled as explicit groups before XLA sees the text
  (`explicit_mesh_groups`: jaxlib's StableHLO round trip reorders the mesh axes).
- With partitions > 1 the module is compiled with XLA's SPMD partitioner enabled (XLA CPU
  refuses several partitions otherwise). The text is taken as already per-device: its
  `sharding=` attributes are dropped first, so the partitioner keeps every instruction as
  written instead of splitting parameters again. The partitioner rejects partition-id and
  cross-replica groups with several partitions, so such modules cannot run on the oracle
  with partitions.
- jax's x64 mode is on in the child so that s64 / u64 / f64 values keep their type.
- Sub-byte integers (s4 / u4 / s2 / u2) go in and come out as ml_dtypes' int4 / uint4 /
  int2 / uint2 arrays (one byte per element), as jax holds them; nothing converts them.
- Recipe (jaxlib 0.10.x private API, see the pin in pyproject.toml): hlo_module_from_text
  -> hlo_to_stablehlo -> compile_and_load with a (replicas, partitions) device assignment
  -> execute_sharded on per-device arrays.
"""

from __future__ import annotations

import importlib.util
import os
import pickle
import re
import select
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import IO, Any, BinaryIO, Union

import numpy as np

from tilecc.errors import OracleError

_CHANNEL_ID = re.compile(r"\bchannel_id=\d+")
_STDERR_TAIL_LINES = 12
# glog's fatal line: "F1130 04:01:37.123701    6563 hlo_instruction.cc:2397] Check failed: ..."
_FATAL_LOG_LINE = re.compile(r"^F\d{4} [\d:.]+\s+\d+ (.*)$", re.MULTILINE)


@dataclass(slots=True)
class XlaJob:
    """One request to the child: `kind` is "parse", "compile", "run" or "time" (the best
    of `repeats` executions, compile excluded: [best wall s, best process CPU s]; the child
    keeps each module it compiled for "time", so interleaved timing jobs compile once).
    A "run" executes its one compiled executable `repeats` times and returns the outputs
    of every execution one after another (state an executable keeps, such as
    rng-get-and-update-state's counter, carries over from one execution to the next)."""

    kind: str
    text: str
    inputs: list[np.ndarray] = field(default_factory=list)
    replicas: int = 1
    partitions: int = 1
    repeats: int = 1


def renumber_channel_ids(text: str) -> str:
    """Give every `channel_id=` in `text` a distinct id 1, 2, ... in text order."""
    counter = iter(range(1, 1 << 62))
    return _CHANNEL_ID.sub(lambda _match: f"channel_id={next(counter)}", text)


_MESH_REPLICA_GROUPS = re.compile(
    r"replica_groups=(mesh\[[^\]]*\](?:\s*,\s*device_ids=\([^()]*(?:\([^()]*\))?\))?"
    r"\s*\{[^{}]*\})")


def explicit_mesh_groups(text: str) -> str:
    """`text` with every mesh-form `replica_groups=mesh[...] {...}` spelled as explicit groups.

    jaxlib 0.10's HLO -> StableHLO -> HLO path does not keep mesh groups (measured: a
    mesh's `device_ids=` order is dropped, so `mesh['a'=4,'b'=2], device_ids=([2,4]T(1,0))
    {'b'}` sums over {0,1},{2,3},... instead of {0,4},{1,5},...; an all-gather over
    `mesh['axis_0'=2,'axis_1'=4] {'axis_1'}` comes back as `mesh['axis_0'=4,'axis_1'=2]
    {'axis_1'}`; in both cases unlike jax running the same program). The explicit lists are
    the same groups, so the module computes what its text says.
    """
    from tilecc.hlo.lexer import replica_groups_from_text

    def explicit(match: re.Match[str]) -> str:
        groups = replica_groups_from_text(match.group(1)).groups() or []
        return "replica_groups={" + ",".join(
            "{" + ",".join(map(str, g)) + "}" for g in groups) + "}"
    return _MESH_REPLICA_GROUPS.sub(explicit, text)


def strip_shardings(text: str) -> str:
    """`text` without its `, sharding={...}` attributes (braces matched)."""
    pieces: list[str] = []
    pos = 0
    while (start := text.find(", sharding={", pos)) >= 0:
        depth, end = 0, start + len(", sharding=")
        while end < len(text):
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            end += 1
            if depth == 0:
                break
        pieces.append(text[pos:start])
        pos = end
    pieces.append(text[pos:])
    return "".join(pieces)


def run_on_xla(text: str, inputs: list[np.ndarray], replicas: int,
               partitions: int = 1) -> list[np.ndarray]:
    """Execute the entry computation of `text` on XLA CPU; see the module contract."""
    return _unwrap(run_many_on_xla([XlaJob("run", text, list(inputs), replicas, partitions)])[0])


def time_on_xla(text: str, inputs: list[np.ndarray], replicas: int, partitions: int = 1,
                repeats: int = 5) -> float:
    """Best wall time (seconds) of `repeats` executions on XLA CPU, compile and input
    transfer excluded (for benchmarks)."""
    job = XlaJob("time", text, list(inputs), replicas, partitions, repeats)
    return float(_unwrap(run_many_on_xla([job])[0])[0][0])


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
                              "(pip install 'tilecc[xla]')")


Result = Union[list[np.ndarray], OracleError, None]


def run_many_on_xla(jobs: list[XlaJob], timeout: float = 120.0) -> list[Result]:
    """Run `jobs` in one child process (a new one after a crash); one result per job.

    A "run" job yields its outputs, "parse" / "compile" jobs yield None, a failed job
    yields the OracleError describing it. `timeout` bounds each job (seconds).
    """
    if not jobs:
        return []
    devices = max(job.replicas * job.partitions for job in jobs)
    with XlaSession(devices, timeout) as session:
        return [session.submit(job) for job in jobs]


class XlaSession:
    """A long-lived XLA child process: `submit(job)` costs one compile + run (20-40 ms)
    instead of a jax import. The child has `devices` CPU devices (grown on demand, which
    restarts it); a job that kills it yields an OracleError and the next job restarts it.
    Use as a context manager, or call close()."""

    def __init__(self, devices: int = 8, timeout: float = 120.0) -> None:
        require_jax()
        self.devices = max(1, devices)
        self.timeout = timeout
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None

    def __enter__(self) -> XlaSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def submit(self, job: XlaJob) -> Result:
        if job.kind not in ("parse", "compile", "run", "time"):
            raise ValueError(f"unknown XLA job kind {job.kind!r}")
        if job.replicas < 1 or job.partitions < 1:
            return OracleError(f"XLA needs at least one replica and partition, got "
                               f"replicas={job.replicas} partitions={job.partitions}")
        needed = job.replicas * job.partitions
        if needed > self.devices:
            self.close()
            self.devices = needed
        proc = self._proc if self._proc is not None else self._start()
        text = explicit_mesh_groups(renumber_channel_ids(job.text))
        if job.partitions > 1:
            text = strip_shardings(text)
        frame = pickle.dumps((job.kind, text,
                              [np.asarray(x) for x in flat_inputs(list(job.inputs))],
                              job.replicas,
                              job.partitions, job.repeats), protocol=pickle.HIGHEST_PROTOCOL)
        try:
            assert proc.stdin is not None
            proc.stdin.write(struct.pack("<Q", len(frame)) + frame)
            proc.stdin.flush()
            record = _read_frame(proc, self.timeout)
        except (BrokenPipeError, EOFError, TimeoutError) as exc:
            return self._crashed(job, exc)
        ok, value = pickle.loads(record)
        return value if ok else OracleError(value)

    def close(self) -> None:
        if self._proc is not None:
            if self._proc.stdin is not None:
                try:
                    self._proc.stdin.close()
                except BrokenPipeError:  # the child is already gone
                    pass
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            if self._proc.stdout is not None:
                self._proc.stdout.close()
            self._proc = None
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def _start(self) -> subprocess.Popen[bytes]:
        env = dict(os.environ)
        env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") +
                            f" --xla_force_host_platform_device_count={self.devices}").strip()
        env["JAX_PLATFORMS"] = "cpu"
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
        self._stderr = tempfile.TemporaryFile()
        self._proc = subprocess.Popen([sys.executable, "-m", "tilecc.hlo.xla"],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=self._stderr, env=env)
        return self._proc

    def _crashed(self, job: XlaJob, exc: BaseException) -> OracleError:
        assert self._proc is not None and self._stderr is not None
        if isinstance(exc, TimeoutError):
            self._proc.kill()
        self._proc.wait()
        self._stderr.seek(0)
        reason = _crash_reason(self._stderr.read().decode(errors="replace"))
        if isinstance(exc, TimeoutError):
            reason = f"no answer within {self.timeout:.0f} s; {reason}"
        self.close()
        return OracleError(f"XLA {job.kind} failed (process died): {reason}")


def _read_frame(proc: subprocess.Popen[bytes], timeout: float) -> bytes:
    """One length-prefixed frame from the child's stdout; EOFError if it died."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    header = _read_exact(fd, 8, timeout)
    (size,) = struct.unpack("<Q", header)
    return _read_exact(fd, size, timeout)


def _read_exact(fd: int, size: int, timeout: float) -> bytes:
    chunks: list[bytes] = []
    remaining = size
    while remaining:
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            raise TimeoutError
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _crash_reason(stderr: str) -> str:
    """XLA's fatal log line (`Check failed: ...`) if any, else the last lines of stderr."""
    fatal = _FATAL_LOG_LINE.findall(stderr)
    if fatal:
        return fatal[-1].strip()
    tail = stderr.split("*** Check failure stack trace", 1)[0].strip().splitlines()
    return "\n".join(tail[-_STDERR_TAIL_LINES:]) if tail else "no message"


# ---- child side: everything below runs only in `python -m tilecc.hlo.xla` ----

def _child_main() -> None:
    """Answer one length-prefixed record per length-prefixed job on stdin, until EOF."""
    protocol: BinaryIO = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # stray prints from jax / XLA must not corrupt the record stream
    requests = sys.stdin.buffer
    missing: str | None = None  # why jax cannot be used; jax is only touched when None
    try:
        import jax
        from jax._src.lib import xla_client
        jax.config.update("jax_enable_x64", True)
    except ImportError as exc:
        missing = f"the XLA oracle needs jax 0.10.x: {exc}"
    while len(header := requests.read(8)) == 8:
        (size,) = struct.unpack("<Q", header)
        kind, text, inputs, replicas, partitions, repeats = pickle.loads(requests.read(size))
        if missing is not None:
            _answer(protocol, False, missing)
            continue
        try:
            value = _child_job(jax, xla_client, kind, text, inputs, replicas, partitions,
                               repeats)
        except Exception as exc:  # XLA's message is the payload; the parent re-raises it
            # one line: XLA's message without the Python locations jax appends to it
            message = " ".join(str(exc).split("Suspected Python Code Location")[0].split())
            _answer(protocol, False, f"XLA {kind} failed: {type(exc).__name__}: {message}")
        else:
            _answer(protocol, True, value)


def _answer(protocol: BinaryIO, ok: bool, value: object) -> None:
    data = pickle.dumps((ok, value), protocol=pickle.HIGHEST_PROTOCOL)
    protocol.write(struct.pack("<Q", len(data)) + data)
    protocol.flush()


_TIMED_EXECUTABLES: dict[tuple[str, int, int], Any] = {}
"""(text, replicas, partitions) -> executable, for "time" jobs (compile once, time often)."""


def _child_job(jax: Any, xc: Any, kind: str, text: str, inputs: list[np.ndarray],
               replicas: int, partitions: int, repeats: int) -> list[np.ndarray] | None:
    module = xc.hlo.hlo_module_from_text(text)
    if kind == "parse":
        return None
    count = replicas * partitions
    devices = jax.devices("cpu")[:count]
    key = (text, replicas, partitions)
    executable = _TIMED_EXECUTABLES.get(key) if kind == "time" else None
    if executable is None:
        stablehlo = xc._xla.mlir.hlo_to_stablehlo(module.as_serialized_hlo_module_proto())
        options = xc.CompileOptions()
        options.num_replicas = replicas
        options.num_partitions = partitions
        options.device_assignment = xc.DeviceAssignment.create(
            np.arange(count).reshape(replicas, partitions))
        # XLA CPU runs several partitions only through the SPMD partitioner; on a module
        # without sharding annotations it keeps every instruction as written (it rejects
        # partition-id).
        options.executable_build_options.use_spmd_partitioning = partitions > 1
        executable = devices[0].client.compile_and_load(
            stablehlo, xc.DeviceList(tuple(devices)), options)
        if kind == "time":
            _TIMED_EXECUTABLES[key] = executable
    if kind == "compile":
        return None
    from jax.sharding import Mesh, NamedSharding, PartitionSpec
    sharding = NamedSharding(Mesh(np.array(devices), ("d",)), PartitionSpec())
    args = []
    for index, array in enumerate(flat_inputs(inputs)):
        if array.ndim == 0 or array.shape[0] != count:
            raise ValueError(f"input {index} has shape {array.shape}; expected a leading "
                             f"device axis of length {count}")
        pieces = [jax.device_put(np.array(array[d]), devices[d]) for d in range(count)]
        args.append(jax.make_array_from_single_device_arrays(array.shape[1:], sharding, pieces))
    if kind == "time":
        best_wall = best_cpu = float("inf")
        for _ in range(max(1, repeats) + 1):  # one extra: the minimum drops warm-up costs
            start, start_cpu = time.perf_counter(), time.process_time()
            result = executable.execute_sharded(args).disassemble_into_single_device_arrays()
            for per_device in result:
                for piece in per_device:
                    piece.block_until_ready()
            best_wall = min(best_wall, time.perf_counter() - start)
            best_cpu = min(best_cpu, time.process_time() - start_cpu)
        return [np.array([best_wall, best_cpu])]
    results: list[np.ndarray] = []
    for _ in range(max(1, repeats)):
        outputs = executable.execute_sharded(args).disassemble_into_single_device_arrays()
        results += [np.stack([np.asarray(piece) for piece in per_device])
                    for per_device in outputs]
    return results


def flat_inputs(inputs: list[Any]) -> list[np.ndarray]:
    """The arrays of `inputs`, tuples flattened depth-first: XLA's compiled entry takes a
    tuple parameter as its leaves."""
    out: list[np.ndarray] = []
    for x in inputs:
        out.extend(flat_inputs(list(x)) if isinstance(x, tuple) else [x])
    return out


if __name__ == "__main__":
    _child_main()
