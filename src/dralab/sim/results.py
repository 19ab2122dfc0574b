"""What a simulation run returns: timelines, per-pod records and derived summaries.

Plain frozen dataclasses with no dependency beyond the standard library, so a
notebook can use them directly or turn them into data frames::

    import pandas as pd                      # not a dralab dependency
    result = dralab.simulate(scenario)
    for mode in result.modes:
        samples = pd.DataFrame(mode.samples_records())
        pods = pd.DataFrame(mode.pods_records())
    summary = pd.DataFrame(result.summary_records())

Definitions used by ``ModeResult.summary``:

* Percentiles interpolate linearly between closest ranks, like numpy's default
  (``method="linear"``, Hyndman & Fan type 7): for sorted values ``v[0..n-1]``
  and ``q`` in [0, 100], the position is ``h = (n - 1) * q / 100`` and the
  result ``v[floor(h)] + (h - floor(h)) * (v[floor(h) + 1] - v[floor(h)])``.
* Timeline means are time-weighted: the timeline is a step function whose
  value at sample ``i`` holds until sample ``i + 1``; the last sample carries
  no weight. If the samples span no time, the plain mean is used.
* A value that is undefined (no started pod, no sample, no elapsed time) is
  ``math.nan`` in ``summary()`` and ``null`` in ``to_json()``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from .computedomain_metrics import ComputeDomainMetrics
from .stats import percentile

__all__ = [
    "SCHEMA",
    "SUMMARY_KEYS",
    "TIMINGS_SCHEMA",
    "AutoscalingMetrics",
    "KaiQueueMetrics",
    "ModeResult",
    "NodeOccupancy",
    "PodRecord",
    "PoolMetrics",
    "QueueMetrics",
    "Sample",
    "SimulationResult",
    "percentile",
    "time_weighted_mean",
]

# Bump when a field of metrics.json changes meaning or disappears. v2: wall_seconds moved
# out, to timings.json, so that metrics.json is the same bytes for the same inputs.
SCHEMA = "dralab.dev/simulation-result/v2"
# Schemas from_json still reads (v1 carried wall_seconds per mode).
_READABLE = (SCHEMA, "dralab.dev/simulation-result/v1")
TIMINGS_SCHEMA = "dralab.dev/simulation-timings/v1"

SUMMARY_KEYS: tuple[str, ...] = (
    "pods_arrived",
    "pods_started",
    "pods_completed",
    "pods_never_started",
    "wait_p50",
    "wait_p90",
    "wait_p99",
    "wait_mean",
    "mean_gpu_capacity_allocated",
    "mean_gpu_capacity_requested",
    "gpu_allocation_efficiency",
    "mean_gpus_busy",
    "peak_gpu_capacity_allocated",
    "mean_fragmentation",
    "throughput_pods_per_hour",
    "scheduling_attempts",
    "preemptions",
)


def time_weighted_mean(times: Sequence[float], values: Sequence[float]) -> float:
    """Mean of a step function sampled at ``times`` (ascending); see the module docstring.

    NaN for no samples. ``times`` and ``values`` must have the same length.
    """
    if len(times) != len(values):
        raise ValueError("times and values differ in length")
    if not values:
        return math.nan
    span = times[-1] - times[0]
    if span <= 0:
        return math.fsum(values) / len(values)
    area = math.fsum(values[i] * (times[i + 1] - times[i]) for i in range(len(values) - 1))
    return area / span


def _finite_or_none(x: float | int) -> float | int | None:
    # JSON has no NaN; a browser's JSON.parse rejects it.
    return None if isinstance(x, float) and not math.isfinite(x) else x


@dataclass(frozen=True, slots=True, kw_only=True)
class Sample:
    """One point of the timeline, taken at every scheduler cycle and at the end of the run."""

    t: float                         # simulated seconds since start
    gpus_total: int                  # physical GPUs in the fleet
    gpus_busy: int                   # physical GPUs with at least one allocation of any kind
    gpu_capacity_allocated: float    # 0..1; MIG slices and shares count by their fraction
    # 0..1: what the running pods asked for (whole GPUs 1, MIG <g>g g/7, shares by memory).
    # Equal to the allocation under DRA; the device plugin hands out whole GPUs, so there the
    # gap to gpu_capacity_allocated is capacity allocated but never asked for.
    gpu_capacity_requested: float = 0.0
    fragmentation: float             # 0..1 of GPU capacity idle yet unusable by common shapes
    pending_pods: int
    running_pods: int
    completed_pods: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PodRecord:
    """One pod's life. ``start``/``end`` are None when it never started / is still running."""

    key: str
    job: str
    kind: str                        # job kind name from the scenario, e.g. "training-8gpu"
    arrival: float
    start: float | None
    end: float | None
    node: str | None
    devices: int                     # devices held
    gpu_fraction: float              # total GPU share held (a whole GPU = 1.0)
    preempted: bool
    unschedulable_reason: str | None  # last reason kind if it ever waited or failed

    @property
    def wait(self) -> float | None:
        """Seconds from arrival to start; None if it never started."""
        return None if self.start is None else self.start - self.arrival


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeOccupancy:
    """Per-node GPU occupancy binned over time.

    ``matrix[i][j]`` is the mean share of node ``nodes[i]``'s GPU capacity
    allocated during the bin starting at ``times[j]`` (0..1). Bins are of equal
    width; the last one ends at the end of the run. Raises ValueError if the
    matrix does not have one row per node and one column per bin, or if the
    bin starts are not strictly increasing.
    """

    nodes: tuple[str, ...]
    times: tuple[float, ...]
    matrix: tuple[tuple[float, ...], ...]

    def __post_init__(self) -> None:
        if len(self.matrix) != len(self.nodes):
            raise ValueError(f"occupancy has {len(self.matrix)} rows for {len(self.nodes)} nodes")
        for name, row in zip(self.nodes, self.matrix, strict=True):
            if len(row) != len(self.times):
                raise ValueError(f"occupancy row {name!r} has {len(row)} bins, "
                                 f"expected {len(self.times)}")
        if any(b <= a for a, b in zip(self.times, self.times[1:], strict=False)):
            raise ValueError("occupancy bin starts must be strictly increasing")


@dataclass(frozen=True, slots=True, kw_only=True)
class ModeResult:
    """One compared mode's run (e.g. the device-plugin model, or DRA with MIG and sharing).

    ``unschedulable_reasons`` is copied into a new dict sorted by reason, so
    results serialise identically whatever order the counts were gathered in;
    treat it as read-only (a plain dict keeps results picklable across processes).
    """

    mode: str                        # "device-plugin" | "dra" | a custom label
    label: str                       # human label, e.g. "DRA (MIG + sharing)"
    samples: tuple[Sample, ...]
    pods: tuple[PodRecord, ...]
    occupancy: NodeOccupancy
    scheduling_attempts: int
    preemptions: int
    unschedulable_reasons: Mapping[str, int]   # reason kind -> count
    wall_seconds: float              # real time the run took; 0.0 in pure runs
    queues: Mapping[str, QueueMetrics] = field(default_factory=dict)  # queueing on: per CQ
    kai_queues: Mapping[str, KaiQueueMetrics] = field(default_factory=dict)  # kai mode
    # With queueing or KAI: per job whose pods started, seconds from its arrival to its
    # first pod's start (the time in queue included), in arrival order.
    job_waits: tuple[float, ...] = ()
    autoscaling: AutoscalingMetrics | None = None  # autoscaled pools: nodes and cost
    # ComputeDomain job kinds (computeDomain: true): per job its wait and NVLink domains,
    # and the NVLink fragmentation samples.
    compute_domains: ComputeDomainMetrics | None = None
    # Wall seconds of each scheduling cycle when a timer was given (like wall_seconds, kept
    # out of metrics.json: it differs run to run; timings.json has its percentiles).
    cycle_seconds: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        ordered = dict(sorted(self.unschedulable_reasons.items()))
        object.__setattr__(self, "unschedulable_reasons", ordered)

    @property
    def span(self) -> float:
        """Simulated seconds the timeline covers: the last sample's time (0.0 without samples)."""
        return self.samples[-1].t if self.samples else 0.0

    def waits(self) -> list[float]:
        """Scheduling waits (seconds, pod created -> started) of the pods that started, in
        pod order, each pod once: a preemption victim's record is left out, its
        re-created pod counts (the one definition the summary and the report's plots
        share; a victim counted too would add a wait for a pod that ran again)."""
        return [w for w in (p.wait for p in self.pods if not p.preempted) if w is not None]

    def summary(self) -> dict[str, float | int]:
        """The headline numbers, keyed by ``SUMMARY_KEYS`` in that order.

        Waits are over started pods only (pods still pending at the end count
        in ``pods_never_started`` instead); a preempted pod counts once, by the pod
        re-created for it. ``gpu_allocation_efficiency`` is requested over allocated
        GPU capacity (time-weighted means). Timeline means are time-weighted.
        Throughput is completed pods per simulated hour over ``span``.
        """
        # A preempted pod is re-created as a new record; count each pod once, by its
        # last incarnation, and report evictions as ``preemptions``.
        final = [p for p in self.pods if not p.preempted]
        waits = self.waits()
        ts = [s.t for s in self.samples]
        span = self.span
        completed = sum(1 for p in final if p.end is not None)
        allocated = time_weighted_mean(ts, [s.gpu_capacity_allocated for s in self.samples])
        requested = time_weighted_mean(ts, [s.gpu_capacity_requested for s in self.samples])
        return {
            "pods_arrived": len(final),
            "pods_started": len(waits),
            "pods_completed": completed,
            "pods_never_started": len(final) - len(waits),
            "wait_p50": percentile(waits, 50),
            "wait_p90": percentile(waits, 90),
            "wait_p99": percentile(waits, 99),
            "wait_mean": math.fsum(waits) / len(waits) if waits else math.nan,
            "mean_gpu_capacity_allocated": allocated,
            "mean_gpu_capacity_requested": requested,
            "gpu_allocation_efficiency": requested / allocated if allocated > 0 else math.nan,
            "mean_gpus_busy": time_weighted_mean(ts, [float(s.gpus_busy) for s in self.samples]),
            "peak_gpu_capacity_allocated":
                max((s.gpu_capacity_allocated for s in self.samples), default=math.nan),
            "mean_fragmentation": time_weighted_mean(ts, [s.fragmentation for s in self.samples]),
            "throughput_pods_per_hour": completed * 3600.0 / span if span > 0 else math.nan,
            "scheduling_attempts": self.scheduling_attempts,
            "preemptions": self.preemptions,
        }

    def samples_records(self) -> list[dict[str, Any]]:
        """One dict per sample with the ``Sample`` fields (``pandas.DataFrame(...)``-ready)."""
        return [asdict(s) for s in self.samples]

    def pods_records(self) -> list[dict[str, Any]]:
        """One dict per pod with the ``PodRecord`` fields plus ``wait`` (None if never started)."""
        return [{**asdict(p), "wait": p.wait} for p in self.pods]

    def to_json(self) -> dict[str, Any]:
        """This mode as plain JSON data, plus its (derived, NaN-free) ``summary``.

        Deterministic: ``wall_seconds`` is left out (see ``SimulationResult.timings``)."""
        return {
            "mode": self.mode,
            "label": self.label,
            "samples": self.samples_records(),
            "pods": [asdict(p) for p in self.pods],
            "occupancy": {
                "nodes": list(self.occupancy.nodes),
                "times": list(self.occupancy.times),
                "matrix": [list(row) for row in self.occupancy.matrix],
            },
            "scheduling_attempts": self.scheduling_attempts,
            "preemptions": self.preemptions,
            "unschedulable_reasons": dict(self.unschedulable_reasons),
            "summary": {k: _finite_or_none(v) for k, v in self.summary().items()},
            # Only with queueing on, so runs without it keep their metrics.json.
            **({"queues": {q: m.to_json() for q, m in self.queues.items()}}
               if self.queues else {}),
            **({"kai_queues": {q: m.to_json() for q, m in self.kai_queues.items()}}
               if self.kai_queues else {}),
            **({"job_waits": list(self.job_waits)} if self.job_waits else {}),
            # Only with autoscaled pools, so other runs keep their metrics.json.
            **({"autoscaling": self.autoscaling.to_json()}
               if self.autoscaling is not None else {}),
            # Only with ComputeDomain job kinds, so other runs keep their metrics.json.
            **({"compute_domains": self.compute_domains.to_json()}
               if self.compute_domains is not None else {}),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ModeResult:
        """Inverse of ``to_json`` (the derived ``summary`` is ignored)."""
        occ = data["occupancy"]
        return cls(
            mode=data["mode"],
            label=data["label"],
            samples=tuple(Sample(**s) for s in data["samples"]),
            pods=tuple(PodRecord(**{f.name: p[f.name] for f in fields(PodRecord)})
                       for p in data["pods"]),
            occupancy=NodeOccupancy(
                nodes=tuple(occ["nodes"]),
                times=tuple(float(t) for t in occ["times"]),
                matrix=tuple(tuple(float(v) for v in row) for row in occ["matrix"]),
            ),
            scheduling_attempts=data["scheduling_attempts"],
            preemptions=data["preemptions"],
            unschedulable_reasons=dict(data["unschedulable_reasons"]),
            wall_seconds=float(data.get("wall_seconds", 0.0)),
            queues={q: QueueMetrics.from_json(m) for q, m in data.get("queues", {}).items()},
            kai_queues={q: KaiQueueMetrics.from_json(m)
                        for q, m in data.get("kai_queues", {}).items()},
            job_waits=tuple(float(w) for w in data.get("job_waits", ())),
            autoscaling=AutoscalingMetrics.from_json(data["autoscaling"])
            if data.get("autoscaling") is not None else None,
            compute_domains=ComputeDomainMetrics.from_json(data["compute_domains"])
            if data.get("compute_domains") is not None else None,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class QueueMetrics:
    """One ClusterQueue over a run with queueing on: workloads admitted and preempted,
    each admission's wait (seconds from submission), and samples of pending and
    admitted workloads and of the quota in use (resource -> milli-units)."""

    admitted: int
    preempted: int
    waits: tuple[float, ...]
    samples: tuple[tuple[float, int, int], ...]        # (t, pending, admitted)
    usage: tuple[tuple[float, Mapping[str, int]], ...]  # (t, resource -> milli)

    def to_json(self) -> dict[str, Any]:
        return {"admitted": self.admitted, "preempted": self.preempted,
                "waits": list(self.waits), "samples": [list(x) for x in self.samples],
                "usage": [[t, dict(u)] for t, u in self.usage]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> QueueMetrics:
        return cls(admitted=int(data["admitted"]), preempted=int(data["preempted"]),
                   waits=tuple(float(w) for w in data["waits"]),
                   samples=tuple((float(t), int(p), int(a)) for t, p, a in data["samples"]),
                   usage=tuple((float(t), {str(k): int(v) for k, v in u.items()})
                               for t, u in data["usage"]))


@dataclass(frozen=True, slots=True, kw_only=True)
class KaiQueueMetrics:
    """One KAI Queue over a run of the kai mode: jobs started (a job evicted whole and
    started again counts again) and jobs with pods evicted, each start's wait (seconds
    from submission, or from losing its last pod), and samples of the queue's GPU
    deserved quota, fair share and allocation as KAI's proportion plugin had them after
    the last session, with its pending and running jobs (a parent: its leaves')."""

    parent: str | None
    started: int
    evicted: int
    waits: tuple[float, ...]
    # (t, deserved GPUs, fair share GPUs, allocated GPUs, pending jobs, running jobs)
    samples: tuple[tuple[float, float, float, float, int, int], ...]

    def to_json(self) -> dict[str, Any]:
        return {"parent": self.parent, "started": self.started, "evicted": self.evicted,
                "waits": list(self.waits), "samples": [list(x) for x in self.samples]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> KaiQueueMetrics:
        return cls(parent=data.get("parent"), started=int(data["started"]),
                   evicted=int(data["evicted"]),
                   waits=tuple(float(w) for w in data["waits"]),
                   samples=tuple((float(t), float(d), float(f), float(a), int(p), int(r))
                                 for t, d, f, a, p, r in data["samples"]))

    def mean(self, column: int) -> float:
        """The time-weighted mean of a sample column (1 deserved, 2 fair share,
        3 allocated GPUs)."""
        return time_weighted_mean([s[0] for s in self.samples],
                                  [float(s[column]) for s in self.samples])


@dataclass(frozen=True, slots=True, kw_only=True)
class PoolMetrics:
    """One autoscaled pool over a run. ``nodes``: (t, Ready nodes) at every change (the
    first at 0); a node costs ``price_per_hour`` from the moment it joins until it
    leaves, so ``cost`` is ``price_per_hour * node_hours``. ``scale_ups`` /
    ``scale_downs`` count nodes added / removed by the autoscaler."""

    min: int
    max: int
    price_per_hour: float
    nodes: tuple[tuple[float, int], ...]
    node_hours: float
    cost: float
    scale_ups: int
    scale_downs: int

    @property
    def peak(self) -> int:
        return max((n for _, n in self.nodes), default=0)

    @property
    def low(self) -> int:
        return min((n for _, n in self.nodes), default=0)

    def to_json(self) -> dict[str, Any]:
        return {"min": self.min, "max": self.max, "price_per_hour": self.price_per_hour,
                "nodes": [list(x) for x in self.nodes], "node_hours": self.node_hours,
                "cost": self.cost, "scale_ups": self.scale_ups,
                "scale_downs": self.scale_downs, "peak": self.peak}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PoolMetrics:
        return cls(min=int(data["min"]), max=int(data["max"]),
                   price_per_hour=float(data["price_per_hour"]),
                   nodes=tuple((float(t), int(n)) for t, n in data["nodes"]),
                   node_hours=float(data["node_hours"]), cost=float(data["cost"]),
                   scale_ups=int(data["scale_ups"]), scale_downs=int(data["scale_downs"]))


@dataclass(frozen=True, slots=True, kw_only=True)
class AutoscalingMetrics:
    """Node autoscaling over a run: per autoscaled pool its nodes and cost; ``samples``
    (t, cumulative cost, cost rate per hour) at every sample time; ``node_waits``: for
    each pod a scale-up was made for, seconds from the pod's creation until its node
    joined; ``loops``: autoscaler loops run (scans with nothing new are skipped)."""

    model: str
    pools: Mapping[str, PoolMetrics]
    samples: tuple[tuple[float, float, float], ...]
    node_waits: tuple[float, ...]
    loops: int
    currency: str = ""   # the unit of pricePerHour (spec.autoscaling.currency), may be ""

    @property
    def cost_unit(self) -> str:
        """What costs are in: the scenario's currency, or "pricePerHour units"."""
        return self.currency or "pricePerHour units"

    @property
    def cost(self) -> float:
        return math.fsum(p.cost for p in self.pools.values())

    def peak_nodes(self) -> int:
        """The most Ready nodes of all autoscaled pools at one time."""
        changes = sorted((t, pool, n) for pool, p in self.pools.items() for t, n in p.nodes)
        now: dict[str, int] = {}
        peak = 0
        for i, (t, pool, n) in enumerate(changes):
            now[pool] = n
            if i + 1 == len(changes) or changes[i + 1][0] != t:
                peak = max(peak, sum(now.values()))
        return peak

    def summary(self) -> dict[str, float | int]:
        waits = list(self.node_waits)
        return {"cost": self.cost,
                "node_hours": math.fsum(p.node_hours for p in self.pools.values()),
                "scale_ups": sum(p.scale_ups for p in self.pools.values()),
                "scale_downs": sum(p.scale_downs for p in self.pools.values()),
                "peak_nodes": self.peak_nodes(),
                "node_wait_p50": percentile(waits, 50),
                "node_wait_p90": percentile(waits, 90),
                "loops": self.loops}

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model,
                "pools": {name: p.to_json() for name, p in sorted(self.pools.items())},
                "samples": [list(x) for x in self.samples],
                "node_waits": list(self.node_waits), "loops": self.loops,
                "summary": {k: _finite_or_none(v) for k, v in self.summary().items()},
                # Only when given, so runs without it keep their metrics.json.
                **({"currency": self.currency} if self.currency else {})}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AutoscalingMetrics:
        return cls(model=str(data["model"]),
                   pools={k: PoolMetrics.from_json(v) for k, v in data["pools"].items()},
                   samples=tuple((float(t), float(c), float(r)) for t, c, r in data["samples"]),
                   node_waits=tuple(float(w) for w in data["node_waits"]),
                   loops=int(data["loops"]), currency=str(data.get("currency", "")))


@dataclass(frozen=True, slots=True, kw_only=True)
class SimulationResult:
    """A whole simulation: one ``ModeResult`` per compared mode, in comparison order."""

    scenario: str
    seed: int
    duration: float                  # simulated seconds
    modes: tuple[ModeResult, ...]

    def summary_records(self) -> list[dict[str, Any]]:
        """One dict per mode: ``mode``, ``label`` and the ``ModeResult.summary`` numbers."""
        return [{"mode": m.mode, "label": m.label, **m.summary()} for m in self.modes]

    def to_json(self) -> dict[str, Any]:
        """Everything as plain JSON data (``metrics.json``); no NaN, only null."""
        return {
            "schema": SCHEMA,
            "scenario": self.scenario,
            "seed": self.seed,
            "duration": self.duration,
            "modes": [m.to_json() for m in self.modes],
        }

    def timings(self) -> dict[str, Any]:
        """The wall clock time each mode took (``timings.json``): the one output that
        differs between two runs of the same scenario and seed, so it is kept apart."""
        return {"schema": TIMINGS_SCHEMA, "scenario": self.scenario, "seed": self.seed,
                "modes": [{"mode": m.mode, "wall_seconds": m.wall_seconds,
                           **({"cycle_seconds": {
                               "count": len(m.cycle_seconds),
                               **{f"p{q}": percentile(m.cycle_seconds, q)
                                  for q in (50, 90, 99)}}} if m.cycle_seconds else {})}
                          for m in self.modes]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SimulationResult:
        """Inverse of ``to_json``. Raises ValueError for another schema."""
        if data.get("schema") not in _READABLE:
            raise ValueError(f"not a {SCHEMA} document: schema={data.get('schema')!r}")
        return cls(
            scenario=data["scenario"],
            seed=data["seed"],
            duration=data["duration"],
            modes=tuple(ModeResult.from_json(m) for m in data["modes"]),
        )
