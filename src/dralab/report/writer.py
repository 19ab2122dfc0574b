"""Writing a report directory: the only I/O of ``dralab.report``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from dralab.api.io import write_atomic
from dralab.sim.results import SimulationResult

from .computedomains import render_compute_domains_text
from .page import render_html
from .plots import render_plots
from .spread import seed_runs
from .tables import pods_csv, pools_csv, samples_csv, seeds_csv, summary_csv

__all__ = ["render_report", "write_files", "write_report"]


def write_report(result: SimulationResult, out_dir: Path,
                 seeds: Sequence[SimulationResult] | None = None) -> Path:
    """Write the report for ``result`` into ``out_dir`` (created if missing); return index.html.

    ``seeds``: every seed's run, ``result`` first (default: ``result`` alone); the
    verdict, the comparison and ``seeds.csv`` are over them, the rest is ``result``.
    Files: ``metrics.json`` (``result.to_json()``, indent 2, sorted keys),
    ``summary.csv``, ``samples.csv``, ``pods.csv``, ``seeds.csv`` (``pools.csv`` with
    autoscaled pools; ``computedomains.txt`` with ComputeDomain job kinds),
    ``timings.json`` (wall clock per mode) and ``index.html``. Each
    is replaced atomically, and ``index.html`` goes last, so a complete page always
    sits beside complete data. The same scenario and seeds give byte-identical files,
    except ``timings.json``, the only one that holds measured time. Raises OSError
    when the directory cannot be written.
    """
    return write_files(render_report(result, seeds), out_dir)


def render_report(result: SimulationResult,
                  seeds: Sequence[SimulationResult] | None = None,
                  timings_on_page: bool = False) -> dict[str, str]:
    """Every file of the report by name, ``index.html`` last; pure. Rendered before
    anything touches the disk: a plotting error leaves no half report (and the
    caller can move an old report away only once the new one exists).
    ``timings_on_page``: the page also shows the measured times (then it, like
    ``timings.json``, differs run to run)."""
    runs = seed_runs(list(seeds) if seeds else [result])
    if runs.seeds[0] != result.seed:
        raise ValueError("seeds must start with the detailed result")
    plots = render_plots(result)
    files = {
        "metrics.json": json.dumps(result.to_json(), indent=2, sort_keys=True,
                                   ensure_ascii=False, allow_nan=False) + "\n",
        "summary.csv": summary_csv(result),
        "samples.csv": samples_csv(result),
        "pods.csv": pods_csv(result),
        "seeds.csv": seeds_csv(runs),
        "timings.json": json.dumps(result.timings(), indent=2, sort_keys=True,
                                   allow_nan=False) + "\n",
    }
    pools = pools_csv(result)
    if pools is not None:
        files["pools.csv"] = pools
    compute_domains = render_compute_domains_text(result, seeds)
    if compute_domains is not None:
        files["computedomains.txt"] = compute_domains
    files["index.html"] = render_html(result, plots, runs, timings=timings_on_page,
                                      compute_domains=compute_domains)
    return files


def write_files(files: dict[str, str], out_dir: Path) -> Path:
    """Write ``render_report``'s files into ``out_dir`` in order; return index.html."""
    out = Path(out_dir)
    for name, text in files.items():
        _write(out / name, text)
    return out / "index.html"


def _write(path: Path, text: str) -> None:
    write_atomic(path, text)
    # write_atomic's temporary file is owner-only; a report is meant to be shared and served.
    path.chmod(0o644)
