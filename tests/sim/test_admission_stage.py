"""The simulator's admission stage: jobs of a queued kind wait, suspended, until the
policy admits their workload; finishing gives the quota back; an eviction deletes
the pods and the workload waits again. The policy here is a deliberately small
FIFO quota (the stage's contract, not Kueue's rules, is under test)."""

from __future__ import annotations

from collections.abc import Callable

import dralab
from dralab.queueing.model import (
    Admission,
    ClusterQueueSpec,
    Decision,
    PodSetAssignment,
    PodSetRequest,
    QueueingState,
    WorkloadSpec,
)
from dralab.sim.jobs import Arrival, draw_arrivals
from dralab.sim.modes import Mode
from dralab.sim.simulate import QueueingSetup, run_mode

GPU = "nvidia.com/gpu"


class FifoQuota:
    """Admit in creation order while the ClusterQueue's GPU quota lasts."""

    def __init__(self, quota: int) -> None:
        self.quota = quota

    def cycle(self, state: QueueingState, now: float) -> list[Decision]:
        used = sum(ps.usage.get(GPU, 0) for a in state.admitted.values() for ps in a.pod_sets)
        out = []
        order = sorted(state.workloads.items(),
                       key=lambda kv: (-kv[1].priority, kv[1].created, kv[0]))
        for key, w in order:
            if key in state.admitted:
                continue
            need = sum(ps.per_pod.get(GPU, 0) * ps.count for ps in w.pod_sets)
            if used + need > self.quota:
                victims = [k for k, _ in reversed(order) if k in state.admitted
                           and state.workloads[k].priority < w.priority]
                if victims:  # one victim per cycle; the stage runs cycles until stable
                    del state.admitted[victims[0]]
                    out.append(Decision(victims[0], preempted=True, by=key,
                                        reason="InClusterQueue"))
                    return out
                out.append(Decision(key, pending="insufficient quota"))
                break
            used += need
            admission = Admission("cq", tuple(PodSetAssignment(
                ps.name, {GPU: "default"}, {GPU: ps.per_pod.get(GPU, 0) * ps.count}, ps.count)
                for ps in w.pod_sets))
            state.admitted[key] = admission
            out.append(Decision(key, admitted=admission))
        return out


def _scenario() -> dralab.Scenario:
    return dralab.scenario({
        "duration": "6h", "compare": ["dra"], "sampleInterval": "10m",
        "fleet": {"spec": {"pools": [{"name": "h100", "count": 2, "cpu": "64",
                                      "memory": "512Gi",
                                      "gpu": {"model": "h100-80gb-sxm", "count": 8}}]}},
        "workload": [{"name": "train", "arrivals": ["0s"] * 4, "cpu": "4", "memory": "8Gi",
                      "duration": {"distribution": "fixed", "mean": "1h"},
                      "devices": {"type": "gpu", "count": 8}}]})


def _setup(quota: int, priorities: dict[str, int] | None = None) -> QueueingSetup:
    def state(mode: Mode) -> QueueingState:
        return QueueingState(cluster_queues={"cq": ClusterQueueSpec("cq")},
                             local_queues={"sim/lq": "cq"})

    def workload_of(mode: Mode) -> Callable[[Arrival], WorkloadSpec | None]:
        def make(arrival: Arrival) -> WorkloadSpec:
            priority = (priorities or {}).get(arrival.kind.name, 0)
            return WorkloadSpec(f"sim/{arrival.name}", "sim/lq", "cq", priority,
                                arrival.time + arrival.index * 1e-6,
                                (PodSetRequest("main", len(arrival.durations),
                                               {GPU: 8000}),))
        return make

    return QueueingSetup(state, lambda: FifoQuota(quota), workload_of)


def test_quota_admits_one_job_at_a_time() -> None:
    s = _scenario()
    result = run_mode(s, "dra", draw_arrivals(s), queueing=_setup(8000))
    starts = sorted(p.start for p in result.pods if p.start is not None)
    # Two nodes could run two jobs at once; eight GPUs of quota admit one at a time.
    assert starts == [0.0, 3600.0, 7200.0, 10800.0]
    cq = result.queues["cq"]
    assert cq.admitted == 4 and cq.preempted == 0
    assert sorted(cq.waits) == [0.0, 3600.0, 7200.0, 10800.0]
    assert cq.samples[0] == (0.0, 3, 1)
    assert cq.usage[0] == (0.0, {GPU: 8000})


def test_without_queueing_the_fleet_decides() -> None:
    s = _scenario()
    result = run_mode(s, "dra", draw_arrivals(s))
    starts = sorted(p.start for p in result.pods if p.start is not None)
    assert starts == [0.0, 0.0, 3600.0, 3600.0]
    assert result.queues == {}


def test_queue_metrics_survive_json() -> None:
    s = _scenario()
    result = run_mode(s, "dra", draw_arrivals(s), queueing=_setup(16000))
    again = type(result).from_json(result.to_json())
    assert again.queues == result.queues


def test_preempted_workload_loses_its_pods_and_runs_again_in_full() -> None:
    s = dralab.scenario({
        "duration": "6h", "compare": ["dra"], "sampleInterval": "10m",
        "fleet": {"spec": {"pools": [{"name": "h100", "count": 2, "cpu": "64",
                                      "memory": "512Gi",
                                      "gpu": {"model": "h100-80gb-sxm", "count": 8}}]}},
        "workload": [
            {"name": "low", "arrivals": ["0s"], "cpu": "4", "memory": "8Gi",
             "duration": {"distribution": "fixed", "mean": "2h"},
             "devices": {"type": "gpu", "count": 8}},
            {"name": "high", "arrivals": ["30m"], "cpu": "4", "memory": "8Gi",
             "duration": {"distribution": "fixed", "mean": "1h"},
             "devices": {"type": "gpu", "count": 8}}]})
    result = run_mode(s, "dra", draw_arrivals(s), queueing=_setup(8000, {"high": 10}))
    runs = sorted((p.kind, p.start, p.end, p.preempted) for p in result.pods)
    assert runs == [("high", 1800.0, 5400.0, False),
                    ("low", 0.0, 1800.0, True),       # evicted at 30 min
                    ("low", 5400.0, 12600.0, False)]  # re-admitted, runs its full 2 h
    assert result.queues["cq"].preempted == 1 and result.queues["cq"].admitted == 3


def test_report_shows_queues_only_when_queueing_was_on(tmp_path: object) -> None:
    from dralab.report import render_html, render_plots
    from dralab.report.plots import QUEUE_PLOT_IDS
    from dralab.sim.results import SimulationResult

    s = _scenario()
    queued = run_mode(s, "dra", draw_arrivals(s), queueing=_setup(8000))
    plain = run_mode(s, "dra", draw_arrivals(s))
    for mode, shown in ((queued, True), (plain, False)):
        result = SimulationResult(scenario="q", seed=0, duration=s.duration, modes=(mode,))
        plots = render_plots(result)
        page = render_html(result, plots)
        assert (QUEUE_PLOT_IDS[0] in {p.id for p in plots}) is shown
        assert ('id="queue-table"' in page) is shown
    page = render_html(SimulationResult(scenario="q", seed=0, duration=s.duration,
                                        modes=(queued,)), [])
    # cq: 4 admitted, none preempted; waits 0, 1 h, 2 h, 3 h -> p50 1.5 h, p90 2.7 h (interpolated).
    assert "<td>4</td><td>0</td><td>1.5 h</td><td>2.7 h</td>" in page
