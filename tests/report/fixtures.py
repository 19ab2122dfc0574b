"""Hand-built simulation results: a tiny one with numbers checked by hand, and a
real-shaped two-mode comparison on a fleet like the default one (seeded, so stable).
"""

from __future__ import annotations

import random

from dralab.sim.results import ModeResult, NodeOccupancy, PodRecord, Sample, SimulationResult

NODES = (*(f"h100-node-{i:02d}" for i in range(1, 5)),
         *(f"a100-mig-node-{i:02d}" for i in range(1, 3)),
         *(f"l4-node-{i:02d}" for i in range(1, 5)))
GPUS_PER_NODE = {n: (4 if n.startswith("l4") else 8) for n in NODES}
GPUS_TOTAL = sum(GPUS_PER_NODE.values())


def pod(key: str, arrival: float, start: float | None, end: float | None = None, *,
        kind: str = "inference-1gpu", node: str | None = "h100-node-01", devices: int = 1,
        fraction: float = 1.0, preempted: bool = False, reason: str | None = None) -> PodRecord:
    return PodRecord(key=key, job=key.rsplit("-", 1)[0], kind=kind, arrival=arrival, start=start,
                     end=end, node=node if start is not None else None, devices=devices,
                     gpu_fraction=fraction, preempted=preempted, unschedulable_reason=reason)


def sample(t: float, cap: float, *, busy: int = 0, frag: float = 0.0, pending: int = 0,
           running: int = 0, completed: int = 0) -> Sample:
    return Sample(t=t, gpus_total=GPUS_TOTAL, gpus_busy=busy, gpu_capacity_allocated=cap,
                  fragmentation=frag, pending_pods=pending, running_pods=running,
                  completed_pods=completed)


def tiny_mode(mode: str = "dra", label: str = "DRA (MIG + sharing)") -> ModeResult:
    """Numbers small enough to check by hand (see test_results)."""
    return ModeResult(
        mode=mode,
        label=label,
        samples=(sample(0.0, 0.0, busy=0, frag=0.2, pending=1),
                 sample(10.0, 0.5, busy=4, frag=0.1, pending=2, running=2),
                 sample(30.0, 1.0, busy=8, frag=0.0, running=3, completed=2)),
        pods=(pod("a-0", 0.0, 0.0, 20.0),
              pod("b-0", 0.0, 10.0, 30.0, reason="Insufficient nvidia.com/gpu"),
              pod("c-0", 5.0, 25.0),
              pod("d-0", 10.0, 50.0, preempted=True, reason="cannot allocate all claims"),
              pod("e-0", 12.0, None, reason="cannot allocate all claims")),
        occupancy=NodeOccupancy(nodes=("h100-node-01", "h100-node-02"), times=(0.0, 15.0),
                                matrix=((0.25, 1.0), (0.0, 0.5))),
        scheduling_attempts=9,
        preemptions=1,
        unschedulable_reasons={"cannot allocate all claims": 3, "Insufficient nvidia.com/gpu": 1},
        wall_seconds=0.0,
    )


_KINDS = (("training-8gpu", 8, 8.0, 0.10), ("training-2gpu", 2, 2.0, 0.15),
          ("inference-1gpu", 1, 1.0, 0.35), ("inference-mig-1g", 1, 1 / 7, 0.25),
          ("notebook-share", 1, 0.25, 0.15))


def _mode(mode: str, label: str, *, seed: int, duration: float, sharing: bool) -> ModeResult:
    """A plausible run: pods arrive, wait longer when sharing is off, run, leave."""
    rng = random.Random(seed)
    arrivals = sorted(rng.uniform(0, duration * 0.8) for _ in range(120))
    pods: list[PodRecord] = []
    for i, arrival in enumerate(arrivals):
        kind, devices, fraction, _ = rng.choices(_KINDS, weights=[k[3] for k in _KINDS])[0]
        if not sharing and fraction < 1:
            devices, fraction = 1, 1.0        # the device plugin hands out whole GPUs
        wait = rng.expovariate(1 / (240.0 if sharing else 900.0)) * (devices / 2 + 0.5)
        start: float | None = arrival + wait
        end: float | None = None
        reason = None
        if wait > 60:
            reason = ("cannot allocate all claims" if sharing and rng.random() < 0.7
                      else "Insufficient nvidia.com/gpu" if not sharing
                      else "node(s) had untolerated taint")
        assert start is not None
        if start > duration:
            start = None
        else:
            run = rng.uniform(300, 3600)
            end = start + run if start + run <= duration else None
        node = NODES[rng.randrange(len(NODES))]
        pods.append(pod(f"{kind}-{i}", round(arrival, 3),
                        None if start is None else round(start, 3),
                        None if end is None else round(end, 3), kind=kind, node=node,
                        devices=devices, fraction=fraction,
                        preempted=rng.random() < (0.02 if sharing else 0.05), reason=reason))
    samples: list[Sample] = []
    t = 0.0
    while True:
        running = [p for p in pods if p.start is not None and p.start <= t
                   and (p.end is None or p.end > t)]
        share = min(sum(p.gpu_fraction for p in running) / GPUS_TOTAL, 1.0)
        busy = min(GPUS_TOTAL, sum(max(1, round(p.gpu_fraction)) for p in running)
                   if not sharing else round(share * GPUS_TOTAL + 0.4 * len(running) ** 0.5))
        samples.append(sample(
            t, share, busy=busy, frag=min(1.0, (0.05 if sharing else 0.18) * (1 - share) + 0.02),
            pending=sum(1 for p in pods if p.arrival <= t and (p.start is None or p.start > t)),
            running=len(running),
            completed=sum(1 for p in pods if p.end is not None and p.end <= t)))
        if t >= duration:
            break
        t = min(duration, t + 30.0)
    bins = tuple(float(b) for b in range(0, int(duration), 600))
    matrix = tuple(tuple(round(min(1.0, rng.betavariate(2, 2) * (1.2 if sharing else 0.9)
                                   * (0.3 + 0.7 * min(1.0, b / (duration / 3)))), 4)
                         for b in bins) for _ in NODES)
    reasons: dict[str, int] = {}
    for p in pods:
        if p.unschedulable_reason:
            reasons[p.unschedulable_reason] = reasons.get(p.unschedulable_reason, 0) + 3
    return ModeResult(mode=mode, label=label, samples=tuple(samples), pods=tuple(pods),
                      occupancy=NodeOccupancy(nodes=NODES, times=bins, matrix=matrix),
                      scheduling_attempts=len(pods) + sum(reasons.values()),
                      preemptions=sum(1 for p in pods if p.preempted),
                      unschedulable_reasons=reasons, wall_seconds=0.0)


def comparison_result(duration: float = 4 * 3600.0, seed: int = 7) -> SimulationResult:
    """Device plugin vs DRA on a default-like fleet: the shape `dralab simulate` produces.
    Another ``seed`` draws other pods (seed 7 gives the first fixture's)."""
    return SimulationResult(
        scenario="default",
        seed=seed,
        duration=duration,
        modes=(_mode("device-plugin", "Device plugin (whole GPUs)", seed=1 + 2 * (seed - 7),
                     duration=duration, sharing=False),
               _mode("dra", "DRA (MIG + sharing)", seed=2 + 2 * (seed - 7), duration=duration,
                     sharing=True)),
    )
