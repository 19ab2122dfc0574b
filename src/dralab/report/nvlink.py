"""The report's NVLink section (issue 36): per placement policy, how multi-node
ComputeDomain jobs waited, how many spanned more than one NVLink domain, and the NVLink
fragmentation sampled over time.

Fragmentation ("stranded GPUs") is the free GPUs sitting in NVLink domains whose free nodes
cannot hold a whole job of the smallest multi-node kind: capacity a one-domain job cannot
use. It is given as a share of all free GPUs (mean over the samples that had any free GPU)
and as a mean count.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dralab.sim.nvlink_run import NvlRun

__all__ = ["UPSTREAM", "NvlFigures", "nvlink_figures", "nvlink_verdict", "render_nvlink",
           "render_nvlink_seeds", "samples_csv", "spanning_lines"]


@dataclass(frozen=True)
class NvlFigures:
    policy: str
    jobs: int                 # arrived
    started: int
    never_started: int        # still waiting at the end (incl. deadlocked partial jobs)
    spanned: int              # started jobs whose pods span more than one domain
    max_domains: int          # most domains one started job spans
    wait_p50_min: float       # started multi-node jobs, minutes
    wait_p90_min: float
    wait_max_min: float
    stranded_mean: float      # GPUs
    stranded_share: float     # of free GPUs, 0..1
    held_idle_mean: float     # GPUs held by pods of jobs not yet started


def _quantile(values: list[float], q: float) -> float:
    # nearest rank, as the rest of the report's percentiles
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(1, math.ceil(q * len(ordered))) - 1]


def nvlink_figures(run: NvlRun) -> NvlFigures:
    multi = [j for j in run.jobs if j.pods > 1]
    started = [j for j in multi if j.start is not None]
    waits = [((j.start or 0.0) - j.arrival) / 60.0 for j in started]
    free_samples = [s for s in run.samples if s[1] > 0]
    share = (sum(s[2] / s[1] for s in free_samples) / len(free_samples)) if free_samples \
        else 0.0
    n = len(run.samples) or 1
    return NvlFigures(
        policy=run.policy, jobs=len(multi), started=len(started),
        never_started=len(multi) - len(started),
        spanned=sum(1 for j in started if run.domains(j) > 1),
        max_domains=max((run.domains(j) for j in started), default=0),
        wait_p50_min=round(_quantile(waits, 0.5), 2),
        wait_p90_min=round(_quantile(waits, 0.9), 2),
        wait_max_min=round(max(waits, default=0.0), 2),
        stranded_mean=round(sum(s[2] for s in run.samples) / n, 1),
        stranded_share=round(share, 3),
        held_idle_mean=round(sum(s[3] for s in run.samples) / n, 1))


UPSTREAM = {"first-fit": "kube-scheduler", "pod-affinity": "kube-scheduler + clique affinity",
             "domain-packing": "dralab extension NVLinkDomainGang"}


def render_nvlink(runs: list[NvlRun], explain: int = 3) -> str:
    """The section as text (fits 80 columns), then up to ``explain`` spanning jobs per
    policy, each said as such."""
    head = (f"{'policy':<15}{'jobs':>5}{'start':>6}{'never':>6}{'span':>5}"
            f"{'wait p50':>9}{'p90':>7}{'stranded':>9}{'share':>6}{'held':>6}")
    lines = ["NVLink domains (multi-node ComputeDomain jobs)", head]
    for run in runs:
        f = nvlink_figures(run)
        lines.append(f"{f.policy:<15}{f.jobs:>5}{f.started:>6}{f.never_started:>6}"
                     f"{f.spanned:>5}{f.wait_p50_min:>9.1f}{f.wait_p90_min:>7.1f}"
                     f"{f.stranded_mean:>9.1f}{f.stranded_share:>6.0%}"
                     f"{f.held_idle_mean:>6.1f}")
    lines.append("wait: minutes from arrival to the last pod placed; stranded: free")
    lines.append("  GPUs in domains too full for the smallest multi-node job (mean,")
    lines.append("  share of free GPUs); held: GPUs held by pods whose job has not")
    lines.append("  started (mean)")
    for run in runs:
        lines.append(f"{run.policy} ({UPSTREAM[run.policy]}):")
        lines.extend("  " + line for line in spanning_lines(run, explain))
    return "\n".join(lines)


def spanning_lines(run: NvlRun, explain: int) -> list[str]:
    """Up to ``explain`` of the run's started jobs that span NVLink domains, each said as
    such, then how many more; or that none does (the text's and the page's list)."""
    spanning = [j for j in run.jobs if j.start is not None and run.domains(j) > 1]
    lines = [run.explain(job) for job in spanning[:explain]]
    if len(spanning) > explain:
        lines.append(f"... and {len(spanning) - explain} more spanning jobs")
    if not spanning:
        lines.append("no job spans more than one NVLink domain")
    return lines


def nvlink_verdict(runs: list[NvlRun]) -> str:
    """One sentence comparing the policies on spanning jobs and job wait p90."""
    figs = [nvlink_figures(r) for r in runs]
    parts = [f"{f.policy}: {f.spanned} of {f.started} started jobs span domains, "
             f"wait p90 {f.wait_p90_min:.1f} min, {f.never_started} never started"
             for f in figs]
    return "; ".join(parts)


def render_nvlink_seeds(runs_by_seed: list[list[NvlRun]]) -> str:
    """Per policy over the seeds: share of started jobs spanning domains, job wait p90
    (mean and range), jobs never started (total). One line each; empty for one seed."""
    if len(runs_by_seed) < 2:
        return ""
    lines = [f"over {len(runs_by_seed)} seeds:"]
    for i, run in enumerate(runs_by_seed[0]):
        figs = [nvlink_figures(runs[i]) for runs in runs_by_seed]
        span = [f.spanned / f.started if f.started else 0.0 for f in figs]
        p90 = [f.wait_p90_min for f in figs]
        lines.append(f"  {run.policy:<15}span {min(span):.0%}-{max(span):.0%}, wait p90 "
                     f"{sum(p90) / len(p90):.1f} min ({min(p90):.1f}-{max(p90):.1f}), "
                     f"never started {sum(f.never_started for f in figs)}")
    return "\n".join(lines)


def samples_csv(runs: list[NvlRun]) -> str:
    """The fragmentation samples over time, one row per policy and sample (GPUs)."""
    rows = ["policy,minute,free_gpus,stranded_gpus,held_gpus"]
    for run in runs:
        rows.extend(f"{run.policy},{t / 60:g},{free},{stranded},{held}"
                    for t, free, stranded, held in run.samples)
    return "\n".join(rows) + "\n"
