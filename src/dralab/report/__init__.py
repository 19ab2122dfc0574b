"""The simulation report: an offline HTML page with plots, plus JSON and CSV data.

``write_report(result, out_dir)`` writes ``index.html``, ``metrics.json``,
``summary.csv``, ``samples.csv`` and ``pods.csv``; ``render_summary_table``
gives the same comparison for the terminal. Everything except ``write_report``
is pure. matplotlib is imported only when plots are drawn.
"""

from __future__ import annotations

from .page import render_html
from .plots import PLOT_IDS, Plot, render_plots
from .terminal import render_summary_table
from .writer import write_report

__all__ = ["PLOT_IDS", "Plot", "render_html", "render_plots", "render_summary_table",
           "write_report"]
