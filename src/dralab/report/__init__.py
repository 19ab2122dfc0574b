"""The simulation report: an offline HTML page with plots, plus JSON and CSV data.

``write_report(result, out_dir, seeds)`` writes ``index.html`` (the verdict over the
seeds first), ``metrics.json``, ``summary.csv``, ``samples.csv``, ``pods.csv`` and
``seeds.csv``; ``render_summary_table`` gives the same comparison for the terminal and
``verdict.render_verdict_text`` the same verdict. Everything except ``write_report``
(and ``outdir.keep_previous``) is pure. matplotlib is imported only when plots are drawn.
"""

from __future__ import annotations

from .page import render_html
from .plots import PLOT_IDS, Plot, render_plots
from .terminal import render_summary_table
from .writer import write_report

__all__ = ["PLOT_IDS", "Plot", "render_html", "render_plots", "render_summary_table",
           "write_report"]
