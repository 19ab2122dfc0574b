"""The report's verdict: what changed between the modes, by how much, how sure, what to do.

Wording rules (tested in tests/report/test_verdict.py):

* a difference is stated as a finding only when it is beyond the seeds' spread
  (``spread``); every other compared number is named as "within the spread", with
  its mean difference, so nothing looks better than the seeds can tell;
* a finding gives the change with its unit and sign word (fewer/more,
  shorter/longer), the mean ± sd of the per-seed difference, both modes' means and
  what it means (the metric's ``why``);
* with fewer than ``MIN_SEEDS`` seeds there are no findings and the note says so;
* the decision follows from the findings alone: gains and no losses, losses and no
  gains, a trade-off, or no measurable difference.

Pure: builds text, prints nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dralab.sim.results import SimulationResult

from .metrics import METRICS, MetricSpec, format_mean
from .spread import MIN_SEEDS, Difference, SeedRuns

__all__ = ["COMPARE_MODES", "COMPARE_PLACEMENTS", "VERDICT_KEYS", "Verdict", "alone_decision",
           "render_verdict_text", "verdict"]

# Every number with a better direction (the rows the tables may highlight, so the verdict
# and the highlights never disagree), in this order: what the fleet holds and costs, the
# work done, how long it waited, then disruption.
VERDICT_KEYS: tuple[str, ...] = (
    "mean_gpus_busy", "autoscaled_cost", "autoscaled_node_hours", "autoscaled_peak_nodes",
    "pods_started", "pods_never_started", "pods_completed", "throughput_pods_per_hour",
    "wait_p50", "wait_p90", "wait_p99", "wait_mean", "job_wait_p50", "job_wait_p90",
    "admission_wait_p50",
    "admission_wait_p90", "node_wait_p50", "node_wait_p90", "gpu_allocation_efficiency",
    "preemptions", "kueue_preemptions",
)
_SPECS: dict[str, MetricSpec] = {m.key: m for m in METRICS}
_NAMES = ("Kueue",)


@dataclass(frozen=True, slots=True)
class Verdict:
    """``headline``: one sentence; ``findings``: differences beyond the spread, one
    sentence each; ``within``: the compared numbers that are not, then those equal in
    every seed ("" when none); ``decision``: what to decide; ``note``: how sure (the
    seeds), always set; ``gains``/``losses``: the keys of the findings by direction."""

    headline: str
    findings: tuple[str, ...]
    within: str
    decision: str
    note: str
    gains: tuple[str, ...]
    losses: tuple[str, ...]


def _amount(spec: MetricSpec, value: float) -> str:
    """A difference's size with its unit (shares in percentage points)."""
    a = abs(value)
    if spec.kind == "share":
        return f"{100 * a:.1f} pp"
    return format_mean(spec.kind, a)


def _unit(spec: MetricSpec, runs: SeedRuns) -> str:
    """After a cost and its spread: the unit of costs; "" for the rest."""
    return f" {runs.cost_unit}" if spec.kind == "money" else ""


def _word(spec: MetricSpec, sign: int) -> str:
    if spec.kind == "duration":
        return "longer" if sign > 0 else "shorter"
    if spec.kind in ("share", "money"):
        return "higher" if sign > 0 else "lower"
    return "more" if sign > 0 else "fewer"


def _mean(spec: MetricSpec, runs: SeedRuns, mode: int) -> str:
    return format_mean(spec.kind, runs.spread(mode, spec.key).mean)


def _finding(spec: MetricSpec, d: Difference, runs: SeedRuns, base: int, other: int,
             better: bool) -> str:
    """One difference beyond the spread; ``why`` says what the better side means, so a
    loss names who is worse instead."""
    sd = d.spread.sd
    spread = f" ± {_amount(spec, sd)}" if math.isfinite(sd) else ""
    meaning = spec.why if better else f"worse for {runs.modes[other][1]}"
    return (f"{spec.label}: {_amount(spec, d.spread.mean)}{spread}{_unit(spec, runs)} "
            f"{_word(spec, d.sign)} "
            f"({_mean(spec, runs, base)} → {_mean(spec, runs, other)}; every seed agrees): "
            f"{meaning}.")


def _signed(spec: MetricSpec, d: Difference, runs: SeedRuns) -> str:
    if d.sign == 0:
        return "no change"
    sign = "+" if d.sign > 0 else "−"
    sd = d.spread.sd
    spread = f" ± {_amount(spec, sd)}" if math.isfinite(sd) else ""
    return f"{sign}{_amount(spec, d.spread.mean)}{spread}{_unit(spec, runs)}"


def _lc(label: str) -> str:
    """``label`` to go inside a sentence: first letter lowered unless it starts an acronym
    or a name."""
    if (len(label) > 1 and label[1].isupper()) or label.startswith(_NAMES):
        return label
    return label[:1].lower() + label[1:]


def _names(keys: tuple[str, ...]) -> str:
    labels = [_lc(_SPECS[k].label) for k in keys]
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]


COMPARE_MODES = "Run with --compare device-plugin,dra to compare the two models."
# A ComputeDomain's channel is a DRA claim (the device plugin has none), so a scenario with
# computeDomain kinds runs DRA only; what it can compare is placement, scenario by scenario.
COMPARE_PLACEMENTS = ("ComputeDomain jobs run in DRA only: to compare placements, run the "
                      "same demand under another scheduler profile (as "
                      "examples/scenarios/nvl72-kube-affinity.yaml and nvl72-kube-gang.yaml "
                      "do) and compare their ComputeDomain sections.")


def alone_decision(result: SimulationResult) -> str:
    """What a one-mode verdict tells the reader to do next for ``result``'s scenario."""
    if any(m.compute_domains is not None for m in result.modes):
        return COMPARE_PLACEMENTS
    return COMPARE_MODES


def verdict(runs: SeedRuns, base: int = 0, other: int | None = None,
            alone: str = COMPARE_MODES) -> Verdict:
    """The verdict of mode ``other`` (default: the last) against mode ``base`` over
    ``runs``. With one mode there is nothing to compare; the verdict says so, and
    ``alone`` (``alone_decision``) says what to run instead."""
    n = len(runs.seeds)
    seeds = f"{n} seed{'s' if n != 1 else ''}"
    if n < MIN_SEEDS:
        note = (f"Only {seeds} ({', '.join(map(str, runs.seeds))}): a difference cannot be "
                f"told from seed-to-seed noise, so none is highlighted. Run with --seeds 5 "
                f"(or more) before deciding.")
    else:
        note = (f"{seeds} ({', '.join(map(str, runs.seeds))}); both modes see the same "
                f"arrivals in each seed. Numbers are means over the seeds; ± is the sample "
                f"standard deviation of the per-seed difference. A difference counts only "
                f"when every seed agrees on its sign and its mean exceeds twice that "
                f"deviation.")
    if len(runs.modes) < 2:
        label = runs.modes[0][1] if runs.modes else "no mode"
        return Verdict(f"{label} only: there is nothing to compare.", (), "",
                       alone,
                       note, (), ())
    other = len(runs.modes) - 1 if other is None else other
    base_label, other_label = runs.modes[base][1], runs.modes[other][1]
    findings: list[str] = []
    found: list[str] = []
    gains: list[str] = []
    losses: list[str] = []
    within: list[str] = []
    same: list[str] = []
    for key in VERDICT_KEYS:
        spec = _SPECS[key]
        if not runs.defined(key):
            continue
        d = runs.difference(base, other, key)
        if d.spread.n == 0:
            # defined in one of the two modes only (Kueue's admission waits against KAI):
            # nothing to compare, and not "the same"
            continue
        if d.beyond and spec.better is not None:
            better = (d.sign > 0) == (spec.better == "higher")
            findings.append(_finding(spec, d, runs, base, other, better))
            found.append(key)
            (gains if better else losses).append(key)
        elif d.sign == 0:
            same.append(_lc(spec.label))
        elif math.isfinite(d.spread.mean):
            within.append(f"{_lc(spec.label)} ({_signed(spec, d, runs)})")
    headline = f"{other_label} against {base_label}, over {seeds}: "
    if findings:
        first = _SPECS[found[0]]
        d = runs.difference(base, other, first.key)
        more = len(findings) - 1
        sd = (f" ± {_amount(first, d.spread.sd)}" if math.isfinite(d.spread.sd) else "")
        headline += (f"{_lc(first.label)} {_amount(first, d.spread.mean)}{sd}"
                     f"{_unit(first, runs)} "
                     f"{_word(first, d.sign)} ({_mean(first, runs, base)} → "
                     f"{_mean(first, runs, other)})"
                     + (f", and {more} more difference{'s' if more != 1 else ''} beyond the "
                        f"seeds' spread." if more else "; no other difference beyond the "
                        "seeds' spread."))
    elif n < MIN_SEEDS:
        headline += "too few seeds to tell a difference from noise."
    else:
        headline += "no difference beyond the seeds' spread."
    parts = []
    tested = n >= MIN_SEEDS
    if within:
        parts.append(("Within the seeds' spread (not a difference): " if tested else
                      "Differences not told from noise yet: ") + "; ".join(within) + ".")
    if same:
        parts.append(("The same in every seed: " if n > 1 else "The same: ")
                     + ", ".join(same) + ".")
    within_text = " ".join(parts)
    return Verdict(headline, tuple(findings), within_text,
                   _decision(other_label, base_label, tuple(gains), tuple(losses), n),
                   note, tuple(gains), tuple(losses))


def _decision(other: str, base: str, gains: tuple[str, ...], losses: tuple[str, ...],
              seeds: int) -> str:
    if seeds < MIN_SEEDS:
        return (f"Not yet: with {seeds} seed{'s' if seeds != 1 else ''} the report cannot "
                f"tell {other} from {base}; rerun with more seeds.")
    if gains and not losses:
        return (f"{other} is better on {_names(gains)} and worse on nothing measured: worth "
                f"a pilot on one pool (dralab migrate plan writes one).")
    if losses and not gains:
        return (f"{other} is worse on {_names(losses)} and better on nothing measured: keep "
                f"{base} for this workload, or change the scenario and compare again.")
    if gains and losses:
        return (f"A trade-off: {other} is better on {_names(gains)} but worse on "
                f"{_names(losses)}; weigh them for this workload before moving.")
    return (f"No measurable difference on this workload: the choice between {other} and "
            f"{base} rests on what each supports (MIG, sharing, claims), not on these numbers.")


def render_verdict_text(v: Verdict) -> str:
    """The verdict as plain text lines (the terminal's)."""
    lines = [f"Verdict: {v.headline}"]
    lines += [f"  - {f}" for f in v.findings[1:]] if v.findings else []
    if v.within:
        lines.append(f"  {v.within}")
    lines.append(f"Decide: {v.decision}")
    lines.append(f"  ({v.note})")
    return "\n".join(lines)
