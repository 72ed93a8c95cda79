"""What each command is fuzzed with: its real fixtures, how they are mutated, its command line.

Contract: `TARGETS` maps a fuzz target name to a `Target`; `Target.cases(seed, n, family)`
yields n seeded Cases, each one fixture set with one of its files (or, one time in ten, its
command line's sizes) mutated
(tilecc/fuzz/mutators.py) and the command line that reads it. The fixtures are the
project's own inputs: examples/ (HLO, KLR, kernels, host programs), tests/fixtures (HLO
modules, KLR HEAD and klr 0.0.12 files, BIR programs), tests/host/corpus (pypto
programs), and .npy inputs made from each kernel's `make_inputs` or a BIR program's
input tensors. Only files of a source checkout are read; `available()` says whether
they are there.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
import io
import random
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from tilecc.fuzz.mutators import mutate
from tilecc.fuzz.runner import Case

REPO = Path(__file__).resolve().parents[2]
HLO_PASSES = "--passes=decompose-int-all-reduce,decompose-scalar-reduce"


@dataclasses.dataclass
class Seed:
    """A fixture set: `files` by name, `kinds` the format of each file that may be mutated,
    `argv` and `outputs` for tilecc.fuzz.runner.Case."""
    files: dict[str, bytes]
    kinds: dict[str, str]
    argv: list[str]
    outputs: list[str]
    exit_codes: tuple[int, ...] = (0, 1)


@dataclasses.dataclass
class Target:
    name: str
    command: str
    seeds: Callable[[], list[Seed]]
    _cache: list[Seed] | None = None

    def all_seeds(self) -> list[Seed]:
        if self._cache is None:
            self._cache = self.seeds()
        return self._cache

    def case(self, rng: random.Random, family: str = "main") -> tuple[Case, list[str]]:
        """One mutant and the names of the files that were mutated."""
        seed = rng.choice(self.all_seeds())
        files = dict(seed.files)
        name = rng.choice(sorted(seed.kinds))
        argv = list(seed.argv)
        if rng.random() < 0.1:
            argv, mutated = mutate_argv(argv, rng), []
        else:
            files[name], mutated = mutate(files[name], seed.kinds[name], rng, family=family), [name]
        return Case(self.command, argv, files, list(seed.outputs), seed.exit_codes), mutated

    def cases(self, seed: str, count: int, family: str = "main") -> Iterator[tuple[Case, list[str]]]:
        """`count` mutants, the i-th drawn from its own generator seeded by (seed, i), so
        any one of them can be made again alone."""
        for i in range(count):
            yield self.case_at(seed, i, family)

    def case_at(self, seed: str, index: int, family: str = "main") -> tuple[Case, list[str]]:
        return self.case(random.Random(f"{seed}:{self.name}:{index}"), family)


_SIZES = ("0", "-1", "3", "100000", "2147483648", "99999999999999999999", "x", "1e3")


def mutate_argv(argv: list[str], rng: random.Random) -> list[str]:
    """The command line's own sizes: a launch grid, --replicas, --verify's replica count."""
    out = []
    for arg in argv:
        if ".py:" in arg and rng.random() < 0.8:
            dims = ",".join(rng.choice(_SIZES[1:4] + ("100000",)) for _ in range(rng.randint(1, 3)))
            arg = f"{arg}[{dims}]"
        elif arg.startswith("--verify=") and rng.random() < 0.8:
            arg = f"--verify={rng.choice(_SIZES)}"
        out.append(arg)
    if argv[0] == "run" and argv[1].endswith(".hlo"):
        out += ["--replicas", rng.choice(_SIZES)]
    return out


def available() -> bool:
    return (REPO / "examples" / "kernels").is_dir() and (REPO / "tests" / "fixtures").is_dir()


def _npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def _hlo_files() -> list[Path]:
    fixtures = REPO / "tests" / "fixtures" / "hlo"
    return sorted([REPO / "examples" / "hlo" / "psum_max.hlo", *fixtures.glob("*.short.hlo"),
                   *fixtures.glob("*.optimized.hlo"), *(fixtures / "programs").glob("*.short.hlo")])


def hlo_opt_seeds() -> list[Seed]:
    seeds = []
    for path in _hlo_files():
        seeds.append(Seed({"in.hlo": path.read_bytes()}, {"in.hlo": "hlo"},
                          ["hlo-opt", "in.hlo", HLO_PASSES, "-o", "out.hlo"], ["out.hlo"]))
        seeds.append(Seed({"in.hlo": path.read_bytes()}, {"in.hlo": "hlo"},
                          ["hlo-opt", "in.hlo", HLO_PASSES, "--verify=2", "-o", "out.hlo"],
                          ["out.hlo"], (0, 1, 2)))
    return seeds


def run_hlo_seeds() -> list[Seed]:
    return [Seed({"in.hlo": p.read_bytes()}, {"in.hlo": "hlo"}, ["run", "in.hlo", "--out", "out"],
                 ["out"]) for p in _hlo_files()]


def _klr_files() -> list[Path]:
    fixtures = REPO / "tests" / "fixtures"
    return sorted([*(REPO / "examples" / "klr").glob("*.klr.json"),
                   *(fixtures / "klr").glob("*.klr.json"), *(fixtures / "klr0012").glob("*.klr.json")])


def codegen_seeds() -> list[Seed]:
    return [Seed({"k.klr.json": p.read_bytes()}, {"k.klr.json": "json"},
                 ["codegen", "k.klr.json", "-o", "out.bir.json"], ["out.bir.json"])
            for p in _klr_files()]


def sim_seeds() -> list[Seed]:
    from tilecc.bir.json import read_program_json
    from tilecc.sim.dtypes import numpy_dtype
    rng = np.random.default_rng(0)
    seeds = []
    for path in sorted((REPO / "tests" / "fixtures" / "klr").glob("*.bir.json")):
        text = path.read_text()
        program = read_program_json(text, str(path))
        files = {"p.bir.json": text.encode()}
        kinds = {"p.bir.json": "json"}
        argv = ["sim", "p.bir.json", "--out", "out"]
        for i, tensor in enumerate(program.inputs):
            values = rng.normal(0, 4, size=tuple(tensor.shape)).astype(numpy_dtype(tensor.dtype))
            files[f"in{i}.npy"] = _npy(values)
            kinds[f"in{i}.npy"] = "npy"
            argv += ["--input", f"{tensor.name}=in{i}.npy"]
        seeds.append(Seed(files, kinds, argv, ["out"]))
    return seeds


def _kernel_seeds(command: list[str], output: str) -> list[Seed]:
    seeds = []
    for path in sorted((REPO / "examples" / "kernels").glob("*.py")):
        spec = importlib.util.spec_from_file_location(f"tilecc_fuzz_{path.stem}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        kernel = module.KERNEL
        fn = getattr(kernel, "fn", kernel)
        inputs = module.make_inputs(np.random.default_rng(0))
        names = list(inspect.signature(fn).parameters)
        files = {"k.py": path.read_bytes()}
        kinds = {"k.py": "python"}
        argv = [*command, f"k.py:{fn.__name__}"]
        for name, array in zip(names, inputs):
            files[f"{name}.npy"] = _npy(np.asarray(array))
            kinds[f"{name}.npy"] = "npy"
            argv += ["--input", f"{name}={name}.npy"]
        seeds.append(Seed(files, kinds, [*argv, *output.split()], [output.split()[-1]]))
    return seeds


def trace_seeds() -> list[Seed]:
    return _kernel_seeds(["trace"], "-o out.klr.json")


def run_kernel_seeds() -> list[Seed]:
    return _kernel_seeds(["run"], "--out out")


def host_opt_seeds() -> list[Seed]:
    paths = sorted([*(REPO / "examples" / "host").glob("*.py"),
                    *(REPO / "tests" / "host" / "corpus").glob("*.py")])
    return [Seed({"p.py": p.read_bytes()}, {"p.py": "python"},
                 ["host-opt", "p.py", "-o", "out.py"], ["out.py"]) for p in paths]


TARGETS: dict[str, Target] = {
    "hlo-opt": Target("hlo-opt", "hlo-opt", hlo_opt_seeds),
    "run-hlo": Target("run-hlo", "run", run_hlo_seeds),
    "codegen": Target("codegen", "codegen", codegen_seeds),
    "sim": Target("sim", "sim", sim_seeds),
    "trace": Target("trace", "trace", trace_seeds),
    "run-kernel": Target("run-kernel", "run", run_kernel_seeds),
    "host-opt": Target("host-opt", "host-opt", host_opt_seeds),
}
