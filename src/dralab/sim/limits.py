"""How much work a scenario may ask for: named limits, checked when it loads.

A scenario is data, often copied from somewhere, and three numbers in it decide
how long a run takes and how much memory it holds: how many pods arrive (rate x
duration x pods per job), how many nodes the fleet has, and how many samples
are taken (duration / sample interval; every sample stores one value per GPU
node for the occupancy heatmap). Each is checked before anything runs, and an
error names the field, the estimate and the limit, e.g.::

    s.yaml: spec.workload[0].arrivalRate: about 3,600,000,000 pods expected
    (arrivalRate x duration x podsPerJob), more than 100,000 (MAX_SCENARIO_PODS)

The fleet's node count is bounded by the Fleet spec itself
(``dralab.fleet.spec.MAX_FLEET_NODES``: Kubernetes' 5,000-node limit).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from dralab.fleet.spec import MAX_FLEET_NODES

from .spec import JobKind, ScenarioError, parse_duration, parse_rate

__all__ = [
    "MAX_EVENTS",
    "MAX_FLEET_NODES",
    "MAX_JOB_KINDS",
    "MAX_KIND_NAME",
    "MAX_NODE_SAMPLES",
    "MAX_SAMPLES",
    "MAX_SCENARIO_PODS",
    "MAX_SIGMA",
    "check_work",
    "expected_pods",
    "sample_count",
]

# Pods created over one run of one mode (re-created preemption victims aside). A pod
# costs about a millisecond of scheduling, so the limit keeps a mode within minutes.
MAX_SCENARIO_PODS = 100_000
# Samples per mode, and samples x GPU nodes (the occupancy heatmap's cells, each a
# float in memory and a number in metrics.json). The default takes 200 samples.
MAX_SAMPLES = 10_000
MAX_NODE_SAMPLES = 2_000_000
# Job kinds and node events of one scenario: every sample weighs each kind on each
# node for the fragmentation measure.
MAX_JOB_KINDS = 100
MAX_EVENTS = 10_000
# A job kind's name prefixes its jobs' names, and "<name>-<index>" is the value of
# the dralab.dev/job label (at most 63 characters): 56 leaves room for "-" and six
# digits of job index, which MAX_SCENARIO_PODS never exceeds.
MAX_KIND_NAME = 56
# A lognormal sigma beyond this is no longer a run-time distribution (and sigma^2
# overflows towards infinity long before floats do).
MAX_SIGMA = 10.0


def sample_count(duration: float, interval: float) -> int:
    """Samples a run of ``duration`` seconds takes every ``interval``: at 0, interval,
    2 x interval, ... while below ``duration``, plus the last one at the end."""
    return math.ceil(duration / interval) + 1


def expected_pods(kind: JobKind, duration: float) -> float:
    """Pods ``kind`` is expected to create over ``duration`` seconds (inputs checked)."""
    if kind.arrival_rate is not None:
        jobs = parse_rate(kind.arrival_rate) * duration
    else:
        jobs = sum(1 for t in kind.arrivals if parse_duration(t) < duration)
    return jobs * kind.pods_per_job


def check_work(workload: Sequence[JobKind], duration: float, interval: float,
               gpu_nodes: int, source: str) -> None:
    """ScenarioError (naming the field, the estimate and the limit) if the scenario asks
    for more pods, samples or heatmap cells than the limits allow. Pure."""
    samples = sample_count(duration, interval)
    if samples > MAX_SAMPLES:
        raise ScenarioError(source, "spec.sampleInterval", (
            f"{samples:,} samples (duration / sampleInterval), more than {MAX_SAMPLES:,} "
            "(MAX_SAMPLES)"))
    if samples * gpu_nodes > MAX_NODE_SAMPLES:
        raise ScenarioError(source, "spec.sampleInterval", (
            f"{samples:,} samples of {gpu_nodes:,} GPU nodes, more than {MAX_NODE_SAMPLES:,} "
            "node samples (MAX_NODE_SAMPLES): sample less often"))
    per_kind = [expected_pods(k, duration) for k in workload]
    for i, (kind, pods) in enumerate(zip(workload, per_kind, strict=True)):
        if pods > MAX_SCENARIO_PODS:
            field = "arrivalRate" if kind.arrival_rate is not None else "arrivals"
            raise ScenarioError(source, f"spec.workload[{i}].{field}", (
                f"about {pods:,.0f} pods expected ({field} x duration x podsPerJob), more "
                f"than {MAX_SCENARIO_PODS:,} (MAX_SCENARIO_PODS)"))
    total = math.fsum(per_kind)
    if total > MAX_SCENARIO_PODS:
        raise ScenarioError(source, "spec.workload", (
            f"about {total:,.0f} pods expected over all job kinds, more than "
            f"{MAX_SCENARIO_PODS:,} (MAX_SCENARIO_PODS)"))
