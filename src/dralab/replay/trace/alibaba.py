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
import re
import stat
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import NamedTuple

from dralab.api.errors import LoadError
from dralab.policies.state import GPU_MILLI, MAX_GPUS

__all__ = [
    "CLUSTER_FILE",
    "DEFAULT_WORKLOAD",
    "MAX_CPU_MILLI",
    "MAX_MEMORY_MIB",
    "MAX_TRACE_BYTES",
    "MAX_TRACE_FIELD_CHARS",
    "MAX_TRACE_ROWS",
    "TRACE_DIR_ENV",
    "WORKLOADS",
    "TraceNode",
    "TraceNotFoundError",
    "TracePod",
    "decode_trace",
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


class TraceNode(NamedTuple):
    """One GPU node: CPU in milli-cores, memory in MiB, number of GPUs and their model."""

    name: str
    cpu_milli: int
    memory_mib: int
    gpus: int
    model: str


class TracePod(NamedTuple):
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
        if not os.fspath(trace_dir):
            # Path("") is ".": the working directory read as if it were the trace.
            raise TraceNotFoundError("trace directory '': empty path; pass --trace-dir DIR")
        path = Path(trace_dir)
    elif env.get(TRACE_DIR_ENV):
        path = Path(env[TRACE_DIR_ENV])
    else:
        path = default_trace_dir()
    try:
        found = path.is_dir()
    except OSError as exc:  # a name too long, a loop of links
        raise TraceNotFoundError(f"trace directory {str(path)!r}: {exc.strerror or exc}") from None
    if not found:
        raise TraceNotFoundError(
            f"trace directory {str(path)!r} not found; pass --trace-dir or set {TRACE_DIR_ENV}")
    return path


def workload_file(workload: str) -> str:
    """The file name of a workload's pod list; ValueError for unknown names."""
    if workload not in WORKLOADS:
        raise ValueError(f"unknown workload {workload!r}; known: {', '.join(WORKLOADS)}")
    return f"openb_pod_list_{workload}.csv"


# Input limits: a trace file is whatever is lying in a directory, so everything it can
# make us hold or compute is bounded before it is used. The shipped lists have at most
# 9,062 rows and 1.2 MB; the limits leave room for traces twenty times larger.
MAX_TRACE_BYTES = 64 * 1024 * 1024
MAX_TRACE_ROWS = 200_000
MAX_TRACE_FIELD_CHARS = 1024
# Per-column ranges. GPU counts follow the replay state (at most MAX_GPUS per node or
# pod); CPU (a million cores) and memory (a PiB) stay far below where int64 sums and
# the policies' float scores lose exactness.
MAX_CPU_MILLI = 1_000_000_000
MAX_MEMORY_MIB = 1 << 30
_INTEGER = re.compile(r"-?[0-9]+")
_SHOWN = 40  # characters of a bad value echoed in a message


def _show(text: str) -> str:
    return repr(text if len(text) <= _SHOWN else text[:_SHOWN] + "...")


class _Table:
    """The data rows of a trace CSV, checked for shape; positions for messages."""

    def __init__(self, text: str, source: str, required: Sequence[str],
                 limit: int | None) -> None:
        self.source = source
        reader = csv.reader(io.StringIO(text, newline=""))
        rows: list[tuple[int, list[str]]] = []
        header: list[str] | None = None
        try:
            for row in reader:
                if not row:
                    continue  # blank line, as csv.DictReader skips them
                if header is None:
                    header = row
                    continue
                if limit is not None and len(rows) >= limit:
                    break
                if len(rows) >= MAX_TRACE_ROWS:
                    raise LoadError(f"{source}:{reader.line_num}: more than {MAX_TRACE_ROWS:,} "
                                    "rows (MAX_TRACE_ROWS)")
                rows.append((reader.line_num, row))
        except csv.Error as exc:
            raise LoadError(f"{source}:{reader.line_num}: malformed CSV: {exc}") from None
        header = header or []
        missing = [c for c in required if c not in header]
        if missing:
            raise LoadError(f"{source}: missing column(s) {', '.join(missing)}")
        self.header = header
        self.index = {name: header.index(name) for name in dict.fromkeys(header)}
        for line, row in rows:
            if len(row) != len(header):
                raise LoadError(f"{source}:{line}: {len(row)} fields, but the header has "
                                f"{len(header)}")
            if max(map(len, row)) > MAX_TRACE_FIELD_CHARS:
                n = next(n for n, cell in enumerate(row) if len(cell) > MAX_TRACE_FIELD_CHARS)
                raise LoadError(f"{source}:{line}: column {header[n]} ({n + 1}): longer than "
                                f"{MAX_TRACE_FIELD_CHARS} characters (MAX_TRACE_FIELD_CHARS)")
        self.rows = rows

    def where(self, line: int, column: str) -> str:
        """``FILE:LINE: column NAME (N)`` for messages; N counts from 1."""
        return f"{self.source}:{line}: column {column} ({self.index[column] + 1})"

    def text(self, row: Sequence[str], column: str) -> str:
        """The cell, or "" for an optional column the file does not have."""
        i = self.index.get(column)
        return row[i] if i is not None else ""

    def integer(self, line: int, row: Sequence[str], column: str, maximum: int) -> int:
        """A decimal integer in 0..maximum (ASCII digits only: no sign, spaces or ``_``)."""
        text = row[self.index[column]]
        if not _INTEGER.fullmatch(text):
            raise LoadError(f"{self.where(line, column)}: not an integer: {_show(text)}")
        value = int(text)
        if value < 0:
            raise LoadError(f"{self.where(line, column)}: negative value {_show(text)}")
        if value > maximum:
            raise LoadError(f"{self.where(line, column)}: {_show(text)} is more than "
                            f"{maximum:,}")
        return value


def parse_nodes(text: str, source: str = "<nodes>",
                limit: int | None = None) -> tuple[TraceNode, ...]:
    """Node records from the text of a node list (columns ``sn,cpu_milli,memory_mib,gpu,model``).

    Pure. Raises LoadError (naming ``source``, the line and the column) for missing
    columns, rows with another number of fields than the header, overlong fields,
    more than MAX_TRACE_ROWS rows, empty names, and values that are not integers
    in their column's range (at most MAX_GPUS GPUs a node). ``limit`` keeps the
    first rows only.
    """
    table = _Table(text, source, ("sn", "cpu_milli", "memory_mib", "gpu", "model"), limit)
    out: list[TraceNode] = []
    for line, row in table.rows:
        name = table.text(row, "sn")
        if not name:
            raise LoadError(f"{table.where(line, 'sn')}: empty node name")
        gpus = table.integer(line, row, "gpu", MAX_GPUS)
        out.append(TraceNode(
            name=name,
            cpu_milli=table.integer(line, row, "cpu_milli", MAX_CPU_MILLI),
            memory_mib=table.integer(line, row, "memory_mib", MAX_MEMORY_MIB),
            gpus=gpus,
            model=table.text(row, "model"),
        ))
    return tuple(out)


def parse_pods(text: str, source: str = "<pods>",
               limit: int | None = None) -> tuple[TracePod, ...]:
    """Pod records from the text of a pod list.

    Pure. The ``multigpu*`` files have no ``gpu_spec`` column: every pod there
    accepts any model. Raises LoadError as ``parse_nodes`` does, and for a pod
    that shares GPUs across several devices (``num_gpu`` > 1 with ``gpu_milli`` <
    1000), which the trace never contains and no policy handles.
    """
    table = _Table(text, source, ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"),
                   limit)
    out: list[TracePod] = []
    for line, row in table.rows:
        name = table.text(row, "name")
        if not name:
            raise LoadError(f"{table.where(line, 'name')}: empty pod name")
        num_gpu = table.integer(line, row, "num_gpu", MAX_GPUS)
        gpu_milli = table.integer(line, row, "gpu_milli", GPU_MILLI) if num_gpu else 0
        if (num_gpu > 1 and gpu_milli != GPU_MILLI) or (num_gpu and not gpu_milli):
            raise LoadError(f"{table.where(line, 'gpu_milli')}: unsupported GPU request "
                            f"num_gpu={num_gpu} gpu_milli={gpu_milli}")
        spec_text = table.text(row, "gpu_spec")
        out.append(TracePod(
            name=name,
            cpu_milli=table.integer(line, row, "cpu_milli", MAX_CPU_MILLI),
            memory_mib=table.integer(line, row, "memory_mib", MAX_MEMORY_MIB),
            num_gpu=num_gpu,
            gpu_milli=gpu_milli,
            gpu_spec=frozenset(m for m in spec_text.split("|") if m),
            gpu_spec_text=spec_text,
        ))
    return tuple(out)


def decode_trace(data: bytes, source: str) -> str:
    """The text of a trace file's bytes: UTF-8 (a leading BOM is dropped).

    LoadError naming the line and byte column of the first byte that is not UTF-8.
    """
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise LoadError(f"{source}:{line}: byte {column}: not UTF-8 "
                        f"(0x{data[exc.start]:02x})") from None


def _read(path: Path) -> str:
    """A trace file's text; bounded by MAX_TRACE_BYTES, only regular files."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise TraceNotFoundError(f"trace file {str(path)!r} not found") from None
    except OSError as exc:
        raise LoadError(f"{path}: cannot read: {exc.strerror or exc}") from None
    # A FIFO or device would block or never end; a directory is not a trace file.
    if not stat.S_ISREG(info.st_mode):
        raise LoadError(f"{path}: not a regular file")
    if info.st_size > MAX_TRACE_BYTES:
        raise LoadError(f"{path}: {info.st_size:,} bytes, more than {MAX_TRACE_BYTES:,} "
                        "(MAX_TRACE_BYTES)")
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_TRACE_BYTES + 1)
    except OSError as exc:
        raise LoadError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(data) > MAX_TRACE_BYTES:  # the file grew after stat
        raise LoadError(f"{path}: more than {MAX_TRACE_BYTES:,} bytes (MAX_TRACE_BYTES)")
    return decode_trace(data, str(path))


def load_nodes(trace_dir: str | os.PathLike[str] | None = None,
               limit: int | None = None) -> tuple[TraceNode, ...]:
    """The cluster of the paper: the GPU node list of the trace (1,213 nodes)."""
    path = resolve_trace_dir(trace_dir) / CLUSTER_FILE
    return parse_nodes(_read(path), str(path), limit)


def load_pods(workload: str = DEFAULT_WORKLOAD,
              trace_dir: str | os.PathLike[str] | None = None,
              limit: int | None = None) -> tuple[TracePod, ...]:
    """The pods of one workload variant (``default``, ``gpuspec33``, ...), in file order."""
    path = resolve_trace_dir(trace_dir) / workload_file(workload)
    return parse_pods(_read(path), str(path), limit)
