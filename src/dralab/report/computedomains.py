"""The report's ComputeDomain section for a Scenario with ``computeDomain`` job kinds
(issue 36): per mode, its multi-node ComputeDomain jobs, how many started (every pod
placed) and how many of those spanned more than one NVLink domain, their waits (arrival
-> last pod placed), and the NVLink fragmentation sampled over the run.

Upstream (kube-scheduler and NVIDIA's driver as they are) places a ComputeDomain's pods
one by one with no NVLink constraint, so spanning jobs are expected under the default
profile; the section says so, and names the opt-in NVLinkDomainGang when the scenario's
profile enables it (dralab's extension, not upstream).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from dralab.sim.results import ModeResult, SimulationResult

from .metrics import format_duration

__all__ = ["render_compute_domains", "render_compute_domains_seeds",
           "render_compute_domains_text"]


def _wrap(line: str) -> str:
    """``line`` in 80 columns, continuation lines indented under its text."""
    indent = " " * (len(line) - len(line.lstrip()))
    return textwrap.fill(line, 80, subsequent_indent=indent + "    ",
                         break_on_hyphens=False)


def _minutes(seconds: float | int | None) -> str:
    return "—" if seconds is None else format_duration(float(seconds))


def _line(mode: ModeResult) -> str | None:
    cd = mode.compute_domains
    if cd is None:
        return None
    s = cd.summary()
    stranded = "—" if s["stranded_mean"] is None else f"{s['stranded_mean']:.1f}"
    share = "—" if s["stranded_share"] is None else f"{s['stranded_share']:.0%}"
    held = "—" if s["held_mean"] is None else f"{s['held_mean']:.1f}"
    return (f"  {mode.label} [{cd.profile}]: {s['jobs']} multi-node jobs, {s['started']} "
            f"started, {s['spanning']} spanning >1 NVLink domain, {s['never_started']} "
            f"never started; wait p50 {_minutes(s['wait_p50'])}, p90 "
            f"{_minutes(s['wait_p90'])}; stranded GPUs {stranded} ({share} of free); "
            f"GPUs held waiting {held}")


def render_compute_domains(result: SimulationResult) -> str | None:
    """The section as text (``result``'s seed), None when no mode ran ComputeDomain
    jobs. Pure."""
    lines = [line for m in result.modes if (line := _line(m)) is not None]
    if not lines:
        return None
    cds = [m.compute_domains for m in result.modes if m.compute_domains is not None]
    smallest = max(cd.smallest for cd in cds)
    out = [f"ComputeDomain jobs — seed {result.seed}"]
    out += lines
    for m in result.modes:
        cd = m.compute_domains
        if cd is None:
            continue
        spanning = [j for j in cd.multi_node if j.placed is not None and j.domains > 1]
        for job in spanning[:3]:
            out.append(f"  {job.name} spans {job.domains} NVLink domains "
                       f"({job.pods} pods)")
        if len(spanning) > 3:
            out.append(f"  ... and {len(spanning) - 3} more jobs spanning domains")
    if any(cd.profile.startswith("default, clique") for cd in cds):
        out.append("clique pod affinity (NVIDIA's advice, upstream): each job's first pod "
                   "picks an NVLink domain and the others must follow it there; pods "
                   "placed first hold their nodes while the rest wait.")
    if any(cd.profile == "default" for cd in cds):
        out.append("default profile (upstream): a ComputeDomain's channel claim has no node "
                   "constraint and pods are placed one by one, so a job may span NVLink "
                   "domains unless its pods carry required pod affinity on "
                   "nvidia.com/gpu.clique.")
    if any(cd.profile == "NVLinkDomainGang" for cd in cds):
        out.append("NVLinkDomainGang: dralab's opt-in plugin beyond upstream (each job's pods "
                   "bind together in one NVLink domain, or wait).")
    out.append("wait: arrival to the last pod placed (the job's work starts then); "
               "stranded: free GPUs in NVLink domains that cannot hold a whole job of the "
               f"smallest multi-node kind ({smallest} pods); held waiting: GPUs of pods "
               "placed while their job's other pods are not; means over samples.")
    return "\n".join(_wrap(line) for line in out)


def render_compute_domains_seeds(results: Sequence[SimulationResult]) -> str | None:
    """One line per mode over the seeds (the spanning jobs' share and mean waits), None
    with one seed or no ComputeDomain jobs. Pure."""
    if len(results) < 2 or results[0].modes[0].compute_domains is None:
        return None
    out = [f"ComputeDomain jobs over {len(results)} seeds "
           f"({', '.join(str(r.seed) for r in results)})"]
    for i, mode in enumerate(results[0].modes):
        summaries = [cd.summary() for r in results
                     if (cd := r.modes[i].compute_domains) is not None]
        started = sum(int(s["started"] or 0) for s in summaries)
        spanning = sum(int(s["spanning"] or 0) for s in summaries)
        never = sum(int(s["never_started"] or 0) for s in summaries)
        p90 = [float(s["wait_p90"]) for s in summaries if s["wait_p90"] is not None]
        stranded = [float(s["stranded_mean"]) for s in summaries
                    if s["stranded_mean"] is not None]
        held = [float(s["held_mean"]) for s in summaries if s["held_mean"] is not None]
        out.append(f"  {mode.label}: {spanning} of {started} started jobs span NVLink "
                   f"domains, {never} never started; wait p90 mean "
                   f"{_minutes(sum(p90) / len(p90) if p90 else None)}; stranded GPUs mean "
                   f"{sum(stranded) / len(stranded) if stranded else 0:.1f}; held "
                   f"waiting {sum(held) / len(held) if held else 0:.1f}")
    return "\n".join(_wrap(line) for line in out)


def render_compute_domains_text(result: SimulationResult,
                                seeds: Sequence[SimulationResult] | None = None) -> str | None:
    """The section and, over several seeds (``result`` first), the seeds' lines: what
    ``dralab simulate`` prints and writes to DIR/computedomains.txt. None without
    ComputeDomain jobs. Pure."""
    first = render_compute_domains(result)
    if first is None:
        return None
    over = render_compute_domains_seeds(list(seeds)) if seeds else None
    return "\n".join(t for t in (first, over) if t) + "\n"
