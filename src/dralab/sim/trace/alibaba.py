"""Reading the Alibaba GPU trace 2023 ("openb") into compact records.

The trace is a set of CSV files (see ``dralab/data/alibaba-gpu-2023/README.md``): one
node list (the 1,213 GPU nodes the FGD paper simulates) and one pod list per
workload variant. Parsing is pure (text in, records out); only ``load_*`` touch
the file system, and they read nothing but ``trace_dir``.

Where the files are: the trace ships inside the package, as package data
(``dralab/data/alibaba-gpu-2023``, with its attribution), so a plain
``pip install`` can replay it; ``default_trace_dir`` finds it through
``importlib.resources``, never through the source tree. Callers may pass
``trace_dir`` explicitly, the CLI offers ``--trace-dir``, and the environment
variable ``DRALAB_TRACE_DIR`` overrides the default for both.

Records keep only what the replay protocol uses: qos, pod phase and the three
timestamps are dropped (the published experiments ignore them).
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import NamedTuple

from dralab.api.errors import LoadError

__all__ = [
    "CLUSTER_FILE",
    "DEFAULT_WORKLOAD",
    "TRACE_DIR_ENV",
    "WORKLOADS",
    "NodeRecord",
    "PodRecord",
    "TraceNotFoundError",
    "default_trace_dir",
    "load_nodes",
    "load_pods",
    "parse_nodes",
    "parse_pods",
    "resolve_trace_dir",
    "workload_file",
]

TRACE_DIR_ENV = "DRALAB_TRACE_DIR"
CLUSTER_FILE = "openb_node_list_gpu_node.csv"
DEFAULT_WORKLOAD = "default"

# Every pod list of the trace, by the suffix of openb_pod_list_<name>.csv.
WORKLOADS: tuple[str, ...] = (
    "default",
    "cpu0", "cpu037", "cpu050", "cpu072", "cpu100", "cpu200", "cpu235", "cpu250", "cpu300",
    "gpushare20", "gpushare40", "gpushare60", "gpushare80", "gpushare100",
    "gpuspec05", "gpuspec10", "gpuspec20", "gpuspec25", "gpuspec33",
    "multigpu20", "multigpu30", "multigpu40", "multigpu50",
)


class TraceNotFoundError(LoadError):
    """The trace directory or one of its files does not exist."""


class NodeRecord(NamedTuple):
    """One GPU node: CPU in milli-cores, memory in MiB, number of GPUs and their model."""

    name: str
    cpu_milli: int
    memory_mib: int
    gpus: int
    model: str


class PodRecord(NamedTuple):
    """One pod of a workload.

    ``gpu_milli`` is the share of *each* of the ``num_gpu`` GPUs (1000 = whole GPU;
    below 1000 only when ``num_gpu`` is 1; 0 for CPU-only pods). ``gpu_spec`` is
    the set of allowed GPU models; empty means any model. ``gpu_spec_text`` keeps
    the trace's spelling, which the workload distribution groups by.
    """

    name: str
    cpu_milli: int
    memory_mib: int
    num_gpu: int
    gpu_milli: int
    gpu_spec: frozenset[str]
    gpu_spec_text: str = ""

    @property
    def gpu_request(self) -> int:
        """Total GPU demand in milli-GPU (``num_gpu x gpu_milli``)."""
        return self.num_gpu * self.gpu_milli


PACKAGE_TRACE = "data/alibaba-gpu-2023"


def default_trace_dir() -> Path:
    """The copy of the trace shipped as package data (``dralab/data/alibaba-gpu-2023``).

    Resolved through ``importlib.resources``, so it is the installed package's copy
    wherever dralab was installed from. Packages are installed as directories; a
    zipped install (no file-system path) gets a path that does not exist, which
    ``resolve_trace_dir`` reports with the ways to point elsewhere.
    """
    found = resources.files("dralab").joinpath(PACKAGE_TRACE)
    return found if isinstance(found, Path) else Path(str(found))


def resolve_trace_dir(trace_dir: str | os.PathLike[str] | None = None,
                      environ: Mapping[str, str] | None = None) -> Path:
    """The directory to read: ``trace_dir`` if given, else $DRALAB_TRACE_DIR, else the default.

    Raises TraceNotFoundError if the chosen directory does not exist, naming
    both ways to point elsewhere.
    """
    env = os.environ if environ is None else environ
    if trace_dir is not None:
        path = Path(trace_dir)
    elif env.get(TRACE_DIR_ENV):
        path = Path(env[TRACE_DIR_ENV])
    else:
        path = default_trace_dir()
    if not path.is_dir():
        raise TraceNotFoundError(
            f"trace directory {str(path)!r} not found; pass --trace-dir or set {TRACE_DIR_ENV}")
    return path


def workload_file(workload: str) -> str:
    """The file name of a workload's pod list; ValueError for unknown names."""
    if workload not in WORKLOADS:
        raise ValueError(f"unknown workload {workload!r}; known: {', '.join(WORKLOADS)}")
    return f"openb_pod_list_{workload}.csv"


def _rows(text: str, source: str, required: Iterable[str],
          limit: int | None) -> list[dict[str, str]]:
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in required if c not in (reader.fieldnames or ())]
    if missing:
        raise LoadError(f"{source}: missing column(s) {', '.join(missing)}")
    rows: list[dict[str, str]] = []
    for row in reader:
        if limit is not None and len(rows) >= limit:
            break
        rows.append(row)
    return rows


def _int(row: Mapping[str, str], column: str, source: str, line: int) -> int:
    text = row.get(column) or ""
    try:
        value = int(text)
    except ValueError:
        raise LoadError(f"{source}:{line}: {column}: not an integer: {text!r}") from None
    if value < 0:
        raise LoadError(f"{source}:{line}: {column}: negative value {value}")
    return value


def parse_nodes(text: str, source: str = "<nodes>",
                limit: int | None = None) -> tuple[NodeRecord, ...]:
    """Node records from the text of a node list (columns ``sn,cpu_milli,memory_mib,gpu,model``).

    Pure. Raises LoadError (naming ``source`` and the line) for missing columns or
    values that are not non-negative integers. ``limit`` keeps the first rows only.
    """
    out: list[NodeRecord] = []
    rows = _rows(text, source, ("sn", "cpu_milli", "memory_mib", "gpu", "model"), limit)
    for line, row in enumerate(rows, start=2):
        out.append(NodeRecord(
            name=row["sn"],
            cpu_milli=_int(row, "cpu_milli", source, line),
            memory_mib=_int(row, "memory_mib", source, line),
            gpus=_int(row, "gpu", source, line),
            model=row["model"] or "",
        ))
    return tuple(out)


def parse_pods(text: str, source: str = "<pods>",
               limit: int | None = None) -> tuple[PodRecord, ...]:
    """Pod records from the text of a pod list.

    Pure. The ``multigpu*`` files have no ``gpu_spec`` column: every pod there
    accepts any model. Raises LoadError for missing columns, bad integers, or a
    pod that shares GPUs across several devices (``num_gpu`` > 1 with
    ``gpu_milli`` < 1000), which the trace never contains and no policy handles.
    """
    out: list[PodRecord] = []
    rows = _rows(text, source, ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"), limit)
    for line, row in enumerate(rows, start=2):
        num_gpu = _int(row, "num_gpu", source, line)
        gpu_milli = _int(row, "gpu_milli", source, line) if num_gpu else 0
        if gpu_milli > 1000 or (num_gpu > 1 and gpu_milli != 1000) or (num_gpu and not gpu_milli):
            raise LoadError(f"{source}:{line}: unsupported GPU request "
                            f"num_gpu={num_gpu} gpu_milli={gpu_milli}")
        spec_text = row.get("gpu_spec") or ""
        out.append(PodRecord(
            name=row["name"],
            cpu_milli=_int(row, "cpu_milli", source, line),
            memory_mib=_int(row, "memory_mib", source, line),
            num_gpu=num_gpu,
            gpu_milli=gpu_milli,
            gpu_spec=frozenset(m for m in spec_text.split("|") if m),
            gpu_spec_text=spec_text,
        ))
    return tuple(out)


def _read(path: Path) -> str:
    if not path.is_file():
        raise TraceNotFoundError(f"trace file {str(path)!r} not found")
    return path.read_text(encoding="utf-8")


def load_nodes(trace_dir: str | os.PathLike[str] | None = None,
               limit: int | None = None) -> tuple[NodeRecord, ...]:
    """The cluster of the paper: the GPU node list of the trace (1,213 nodes)."""
    path = resolve_trace_dir(trace_dir) / CLUSTER_FILE
    return parse_nodes(_read(path), str(path), limit)


def load_pods(workload: str = DEFAULT_WORKLOAD,
              trace_dir: str | os.PathLike[str] | None = None,
              limit: int | None = None) -> tuple[PodRecord, ...]:
    """The pods of one workload variant (``default``, ``gpuspec33``, ...), in file order."""
    path = resolve_trace_dir(trace_dir) / workload_file(workload)
    return parse_pods(_read(path), str(path), limit)
