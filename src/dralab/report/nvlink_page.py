"""The HTML page of an NVLinkScenario run (issue 36): ``dralab simulate`` writes it as
DIR/index.html beside nvlink.txt and nvlink-samples.csv.

It holds what the terminal prints, laid out: per placement policy the jobs, how many
started and spanned NVLink domains, the job waits and the NVLink fragmentation; the same
over every seed; the stranded and held GPUs over time (first seed) as plots; a few
spanning jobs, said as such; and what each term means. Pure: returns a string; the same
runs give the same bytes (the plots' ids are salted per plot, no dates).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape
from typing import TYPE_CHECKING

from dralab.sim.nvlink_run import NvlRun

from .metrics import format_duration
from .nvlink import UPSTREAM, nvlink_figures, render_nvlink_seeds, spanning_lines
from .page import figure_html, page_head, page_tail
from .plots import Plot, colour
from .svg import figure_to_svg, plot_style

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["NVLINK_FILES", "render_nvlink_page"]

NVLINK_FILES = (
    ("nvlink.txt", "what the terminal printed: the policies' figures, spanning jobs, seeds"),
    ("nvlink-samples.csv", "free, stranded and held GPUs at every sample, per policy (first "
                           "seed)"),
)

_TERMS = (
    ("first-fit", "kube-scheduler as it is: a ComputeDomain's channel claim has no node "
                  "constraint, so its pods are placed one by one and a job may span NVLink "
                  "domains (upstream)."),
    ("pod-affinity", "the same, with NVIDIA's required pod affinity on nvidia.com/gpu.clique: "
                     "the first pod picks the domain; pods placed first hold their nodes "
                     "while the rest wait, and jobs can deadlock (upstream)."),
    ("domain-packing", "dralab's opt-in extension (the NVLinkDomainGang plugin), not "
                       "upstream: a whole job goes at once into the fullest domain that holds "
                       "it, or waits."),
    ("span", "started multi-node jobs whose pods are in more than one NVLink domain: their "
             "GPUs cannot share memory over NVLink across the split."),
    ("wait", "from a job's arrival until its last pod is placed (its work starts then); "
             "started jobs only, nearest-rank percentiles, in minutes."),
    ("never", "jobs not started by the end, deadlocked partial jobs included."),
    ("stranded", "free GPUs in NVLink domains too full for a whole job of the smallest "
                 "multi-node kind: mean over the samples, and its share of the free GPUs."),
    ("held", "GPUs held by placed pods whose job has not started (mean over the samples)."),
)


def _table(runs: Sequence[NvlRun]) -> str:
    head = "".join(f'<th scope="col">{h}</th>' for h in (
        "Policy", "Jobs", "Started", "Never started", "Spanning domains", "Wait p50 (min)",
        "Wait p90 (min)", "Wait max (min)", "Stranded GPUs", "Stranded share", "Held GPUs"))
    rows = []
    for run in runs:
        f = nvlink_figures(run)
        cells = (f.jobs, f.started, f.never_started, f.spanned, f"{f.wait_p50_min:.1f}",
                 f"{f.wait_p90_min:.1f}", f"{f.wait_max_min:.1f}", f"{f.stranded_mean:.1f}",
                 f"{f.stranded_share:.0%}", f"{f.held_idle_mean:.1f}")
        rows.append(f'<tr data-policy="{escape(f.policy)}"><th scope="row" '
                    f'title="{escape(UPSTREAM[f.policy])}">{escape(f.policy)}</th>'
                    + "".join(f"<td>{escape(str(c))}</td>" for c in cells) + "</tr>")
    return (f'<table class="comparison" id="nvlink-table">\n<thead><tr>{head}</tr></thead>\n'
            f'<tbody>\n{"".join(rows)}\n</tbody></table>')


def _series(runs: Sequence[NvlRun], plot_id: str, title: str, caption: str, ylabel: str,
            value: Callable[[tuple[float, int, int, int]], int]) -> Plot:
    """One sample column of every policy over time, as a wide plot."""
    from matplotlib.figure import Figure

    with plot_style(plot_id):
        fig: Figure = Figure(figsize=(9.0, 3.2), layout="constrained")
        ax = fig.subplots()
        end = max((s[0] for run in runs for s in run.samples), default=0.0) / 3600.0
        for i, run in enumerate(runs):
            ax.plot([s[0] / 3600.0 for s in run.samples], [value(s) for s in run.samples],
                    drawstyle="steps-post", color=colour(i), lw=1.4,
                    label=run.policy)
        ax.set_xlim(0, end or 1.0)
        ax.set_ylim(bottom=0)
        ax.set_xlabel("simulated time (h)")
        ax.set_ylabel(ylabel)
        handles, labels = ax.get_legend_handles_labels()
        if handles:   # beside the axes, never over a curve
            ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                      borderaxespad=0.0)
        return Plot(plot_id, title, caption, figure_to_svg(fig, plot_id, title), True)


def _plots(runs: Sequence[NvlRun]) -> list[Plot]:
    return [
        _series(runs, "plot-stranded", "Stranded GPUs over time",
                "Free GPUs in NVLink domains too full for the smallest multi-node job.",
                "stranded GPUs", lambda s: s[2]),
        _series(runs, "plot-held", "GPUs held by waiting jobs over time",
                "GPUs of placed pods whose job has not started (its other pods wait).",
                "held GPUs", lambda s: s[3]),
        _series(runs, "plot-free", "Free GPUs over time", "All free GPUs of the fleet.",
                "free GPUs", lambda s: s[1]),
    ]


def _spanning(runs: Sequence[NvlRun], explain: int) -> str:
    items = []
    for run in runs:
        lines = [f"<li>{escape(line)}</li>" for line in spanning_lines(run, explain)]
        items.append(f"<h3>{escape(run.policy)} ({escape(UPSTREAM[run.policy])})</h3>\n"
                     f"<ul>{''.join(lines)}</ul>")
    return "\n".join(items)


def render_nvlink_page(name: str, duration: float, runs_by_seed: Sequence[Sequence[NvlRun]],
                       seeds: Sequence[int], explain: int = 3) -> str:
    """The whole page. ``runs_by_seed[i]`` holds seed ``seeds[i]``'s run of every policy,
    in the scenario's order; the details are the first seed's."""
    first = runs_by_seed[0]
    policies = ", ".join(run.policy for run in first)
    over = render_nvlink_seeds([list(r) for r in runs_by_seed])
    over_html = (f'<pre class="seeds">{escape(over)}</pre>' if over else
                 '<p class="note">One seed: the figures of that run. Run with --seeds 5 '
                 "(or more) to see the spread.</p>")
    figures = "\n".join(figure_html(p) for p in _plots(first))
    terms = "\n".join(f"<dt>{escape(t)}</dt><dd>{escape(d)}</dd>" for t, d in _TERMS)
    files = "\n".join(f'<li><a href="{n}">{n}</a> — {escape(w)}</li>' for n, w in NVLINK_FILES)
    title = f"dralab NVLink simulation — {name}"
    seed_text = (f"seeds {', '.join(map(str, seeds))}" if len(seeds) > 1
                 else f"seed {seeds[0]}")
    return f"""{page_head(title)}<body>
<header>
<h1>{escape(title)}</h1>
<p class="meta">Scenario <strong>{escape(name)}</strong> · {escape(seed_text)} ·
{escape(format_duration(duration))} simulated · placement policies: {escape(policies)}</p>
</header>
<main>
<section id="policies">
<h2>Placement policies (seed {seeds[0]})</h2>
{_table(first)}
<p class="note">first-fit and pod-affinity are kube-scheduler as it is (upstream);
domain-packing is dralab's opt-in NVLinkDomainGang, beyond upstream. Every term is in the
<a href="#glossary">glossary</a>.</p>
</section>
<section id="seeds">
<h2>Over the seeds</h2>
{over_html}
</section>
<section id="spanning">
<h2>Jobs spanning NVLink domains (seed {seeds[0]})</h2>
{_spanning(first, explain)}
</section>
<section id="plots-section">
<h2>Plots (seed {seeds[0]})</h2>
<div class="plots">
{figures}
</div>
</section>
<section id="glossary">
<h2>Glossary</h2>
<dl>
{terms}
</dl>
</section>
{page_tail(files)}"""
