"""Running one fuzz case and classifying what the command did.

Contract: a `Case` is a command line plus the files it reads, written into a fresh folder
that the command runs in. `run_subprocess(case)` starts a new interpreter per case;
`ForkServer.run(case)` forks the current process (tilecc already imported) per case.
Both give the child the same address-space and CPU-time limits (resource.setrlimit), stdin
from /dev/null, stdout and stderr to files, and kill it after `time_limit` seconds; both
return an `Outcome` classified by the same function, `classify`, from the same evidence:
exit status, stderr, the input files' bytes after the run and the files left in the folder.

Classes (VIOLATIONS are the ones the bad-input promise forbids):
  ok              exit 0, every declared output written (a folder of outputs may be empty:
                  a program may declare none), nothing else left behind
  clean error     exit 1, a short message on stderr (<= MAX_MESSAGE_LINES lines of at most
                  MAX_LINE characters from the first "error:" line, after at most
                  MAX_STATUS_LINES status lines), no traceback, no output written
  traceback       "Traceback (most recent call last)" on stderr
  hang            over cpu_limit seconds of CPU time (SIGXCPU from RLIMIT_CPU) or still
                  running after time_limit seconds of wall-clock time (killed by the harness)
  killed          ended by a signal (a segfault, the kernel's OOM killer ...)
  bad exit code   any other exit code, or exit 1 with no message / an uncut one
  input modified  an input file's bytes changed
  partial output  exit 1 with an output (or a temporary file) left, or exit 0 without one
"""

from __future__ import annotations

import dataclasses
import os
import resource
import select
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

CLASSES = ("ok", "clean error", "traceback", "hang", "killed", "bad exit code",
           "input modified", "partial output")
VIOLATIONS = frozenset(CLASSES[2:])
MAX_MESSAGE_LINES = 3          # the message, then maybe the source line and a caret
MAX_LINE = 500                 # ParseError cuts its source line to 160 characters
MAX_STATUS_LINES = 8           # lines a command may print before its error line
DEFAULT_CPU_LIMIT = 10         # seconds of CPU time: the machine may be shared
DEFAULT_TIME_LIMIT = 120.0     # seconds of wall-clock time
DEFAULT_MEMORY_LIMIT = 2 << 30  # bytes of address space


@dataclasses.dataclass
class Case:
    """`argv` (after `tilecc`) runs in a folder holding `files`; `outputs` are the paths the
    command writes on success (a file, or a folder that must exist)."""
    command: str
    argv: list[str]
    files: dict[str, bytes]
    outputs: list[str]
    exit_codes: tuple[int, ...] = (0, 1)
    """exit codes other than 0 that are a clean answer (hlo-opt --verify: 2 = mismatch)"""


@dataclasses.dataclass
class Outcome:
    klass: str
    returncode: int | None
    stderr: str
    seconds: float

    @property
    def violation(self) -> bool:
        return self.klass in VIOLATIONS


def classify(case: Case, folder: Path, returncode: int | None, timed_out: bool,
             stderr: str) -> str:
    """The class of a finished (or stopped) run; see the module docstring."""
    if timed_out or returncode == -signal.SIGXCPU:
        return "hang"
    if returncode is not None and returncode < 0:
        return "killed"
    if "Traceback (most recent call last)" in stderr:
        return "traceback"
    for name, data in case.files.items():
        path = folder / name
        if not path.is_file() or path.read_bytes() != data:
            return "input modified"
    left = sorted(str(p.relative_to(folder)) for p in folder.rglob("*")
                  if p.is_file() and str(p.relative_to(folder)) not in case.files)
    if returncode == 0:
        # an output folder may stay empty: a program may declare no outputs
        expected = [o for o in case.outputs if (folder / o).is_file() or (folder / o).is_dir()]
        written = [p for p in left if any(p == o or p.startswith(o.rstrip("/") + "/")
                                          for o in case.outputs)]
        if len(expected) != len(case.outputs) or len(written) != len(left):
            return "partial output"
        return "ok"
    if returncode not in case.exit_codes:
        return "bad exit code"
    if left:
        return "partial output"
    # a terminal breaks lines at "\n" only (str.splitlines would also split at \x0b ...)
    lines = [line for line in stderr.split("\n") if line.strip()]
    # status lines a command printed before it failed (hlo-opt's one per pass and its
    # --verify line) are not the message: it starts at the first "error:" line
    first = next((i for i, line in enumerate(lines) if "error:" in line), 0)
    message = lines[first:]
    if returncode == 1 and not (1 <= len(message) <= MAX_MESSAGE_LINES and
                                first <= MAX_STATUS_LINES and
                                all(len(line) <= MAX_LINE for line in lines)):
        return "bad exit code"
    return "clean error"


def _write_files(case: Case, folder: Path) -> None:
    for name, data in case.files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def _limit(memory_limit: int, cpu_limit: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_limit, cpu_limit + 5))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run_subprocess(case: Case, time_limit: float = DEFAULT_TIME_LIMIT,
                   memory_limit: int = DEFAULT_MEMORY_LIMIT,
                   cpu_limit: int = DEFAULT_CPU_LIMIT) -> Outcome:
    """Run the case in a new interpreter (`python -m tilecc.cli`)."""
    with tempfile.TemporaryDirectory(prefix="tilecc-fuzz-") as tmp:
        folder = Path(tmp)
        _write_files(case, folder)
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "tilecc.cli", *case.argv], cwd=folder,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE,
                                preexec_fn=lambda: _limit(memory_limit, cpu_limit))
        timed_out = False
        try:
            _, err = proc.communicate(timeout=time_limit)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
            timed_out = True
        seconds = time.perf_counter() - start
        stderr = err.decode("utf-8", "replace")
        klass = classify(case, folder, proc.returncode, timed_out, stderr)
        return Outcome(klass, proc.returncode, stderr, seconds)


class ForkServer:
    """Fork per case from a process that has imported tilecc and every command once.

    The child does what `python -m tilecc.cli ARGV` does after its imports -- run
    tilecc.cli.main, print an escaping exception's traceback and exit 1 -- so a case is
    classified as it would be in a fresh interpreter, only without the start-up cost."""

    def __init__(self, time_limit: float = DEFAULT_TIME_LIMIT,
                 memory_limit: int = DEFAULT_MEMORY_LIMIT,
                 cpu_limit: int = DEFAULT_CPU_LIMIT) -> None:
        import importlib

        import tilecc.cli
        for module in tilecc.cli.COMMANDS.values():
            importlib.import_module(f"tilecc.commands.{module}")
        for module in ("run_hlo", "run_kernel"):
            importlib.import_module(f"tilecc.commands.{module}")
        self.main = tilecc.cli.main
        self.time_limit = time_limit
        self.memory_limit = memory_limit
        self.cpu_limit = cpu_limit

    def run(self, case: Case) -> Outcome:
        with tempfile.TemporaryDirectory(prefix="tilecc-fuzz-") as tmp:
            folder = Path(tmp)
            _write_files(case, folder)
            err_path = folder.parent / (folder.name + ".stderr")
            start = time.perf_counter()
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                self._child(case, folder, err_path)
            status, timed_out = self._wait(pid)
            seconds = time.perf_counter() - start
            stderr = err_path.read_bytes().decode("utf-8", "replace")
            err_path.unlink()
            returncode = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else \
                os.WEXITSTATUS(status)
            klass = classify(case, folder, returncode, timed_out, stderr)
            return Outcome(klass, returncode, stderr, seconds)

    def _child(self, case: Case, folder: Path, err_path: Path) -> None:
        code = 1
        try:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            _limit(self.memory_limit, self.cpu_limit)
            os.chdir(folder)
            null = os.open(os.devnull, os.O_RDWR)
            err = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(null, 0)
            os.dup2(null, 1)
            os.dup2(err, 2)
            # the streams a fresh interpreter would have (the parent's may be replaced, as
            # pytest's capture replaces them)
            sys.stdin = open(0, closefd=False)
            sys.stdout = open(1, "w", closefd=False)
            sys.stderr = open(2, "w", buffering=1, closefd=False, errors="backslashreplace")
            sys.argv = ["tilecc", *case.argv]
            try:
                code = self.main(case.argv)
            except SystemExit as exit_:
                code = exit_.code if isinstance(exit_.code, int) else \
                    (0 if exit_.code is None else 1)
                if exit_.code is not None and not isinstance(exit_.code, int):
                    print(exit_.code, file=sys.stderr)
            except BaseException:
                traceback.print_exc()
                code = 1
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:   # the harness's own failure: shown, never hidden as a class
            os.write(2, traceback.format_exc().encode())
        finally:
            os._exit(code)

    def _wait(self, pid: int) -> tuple[int, bool]:
        fd = os.pidfd_open(pid)
        try:
            ready, _, _ = select.select([fd], [], [], self.time_limit)
            timed_out = not ready
            if timed_out:
                os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
            return status, timed_out
        finally:
            os.close(fd)
