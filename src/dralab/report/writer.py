"""Writing a report directory: the only I/O of ``dralab.report``."""

from __future__ import annotations

import json
from pathlib import Path

from dralab.api.io import write_atomic
from dralab.sim.results import SimulationResult

from .page import render_html
from .plots import render_plots
from .tables import pods_csv, pools_csv, samples_csv, summary_csv

__all__ = ["write_report"]


def write_report(result: SimulationResult, out_dir: Path) -> Path:
    """Write the report for ``result`` into ``out_dir`` (created if missing); return index.html.

    Files: ``metrics.json`` (``result.to_json()``, indent 2, sorted keys),
    ``summary.csv``, ``samples.csv``, ``pods.csv`` (``pools.csv`` with autoscaled
    pools), ``timings.json`` (wall clock
    per mode) and ``index.html``. Each is replaced atomically, and ``index.html``
    goes last, so a complete page always sits beside complete data. The same
    scenario and seed give byte-identical files, except ``timings.json``, the only
    one that holds measured time. Raises OSError when the directory cannot be written.
    """
    out = Path(out_dir)
    # Render everything before touching the disk: a plotting error leaves no half report.
    plots = render_plots(result)
    page = render_html(result, plots)
    files = {
        "metrics.json": json.dumps(result.to_json(), indent=2, sort_keys=True,
                                   ensure_ascii=False, allow_nan=False) + "\n",
        "summary.csv": summary_csv(result),
        "samples.csv": samples_csv(result),
        "pods.csv": pods_csv(result),
        "timings.json": json.dumps(result.timings(), indent=2, sort_keys=True,
                                   allow_nan=False) + "\n",
    }
    pools = pools_csv(result)
    if pools is not None:
        files["pools.csv"] = pools
    for name, text in files.items():
        _write(out / name, text)
    index = out / "index.html"
    _write(index, page)
    return index


def _write(path: Path, text: str) -> None:
    write_atomic(path, text)
    # write_atomic's temporary file is owner-only; a report is meant to be shared and served.
    path.chmod(0o644)
