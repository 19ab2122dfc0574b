"""Running a scenario: one event loop per compared mode, the scheduler framework inside.

Each mode (``modes``) gets its own cluster (built from the fleet as that mode
sees it) and its own ``Scheduler`` with the scenario's profile; the arrivals and
run times were drawn once for all modes (``jobs.draw_arrivals``). The run is a
set of stages (``stages``), each one policy with one verb, registered with the
event engine, which orders same-instant events by stage (``engine``):

* node lifecycle: node events (taint, remove, add again or from a pool);
* completion: the pod leaves; its claims are released and deallocated;
* job controller (arrival): a job's pods are created (DRA: from the job kind's
  claim template, claims are generated in PreEnqueue; a kind with a manifest
  template copies its pod, see ``kinds``) and join the queue; preempted or
  evicted pods are re-created;
* scheduling: after every instant with arrivals, completions or node events,
  pending pods get scheduling cycles (``stages.scheduling``); in the kai mode a KAI
  Scheduler session instead, which is also the queueing policy (``stages.kai``);
* autoscaling (a fleet with autoscaled pools): the autoscaler's loop each scan
  interval adds and removes nodes (``stages.autoscaling``);
* sampling: metrics (see ``observe``).

Pure: no I/O, no wall clock. Same scenario and seed, same result.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence

from dralab.api.core import Node, Pod
from dralab.api.gcpause import gc_relaxed
from dralab.api.resource import ResourceSlice
from dralab.cluster import ClusterState
from dralab.queueing.feasibility import flavor_labels
from dralab.queueing.model import Admission
from dralab.scheduler import Scheduler, build_cluster
from dralab.scheduler.plugins.nvlinkgang import with_sizes
from dralab.scheduler.plugins.registry import default_registry

from .autoscaling import build_model
from .computedomain_metrics import ComputeDomainMetrics
from .computedomains import (
    ComputeDomainSampler,
    cd_jobs,
    clique_affinity,
    gang_sizes,
    placement_label,
)
from .engine import Environment, Stage
from .jobs import Arrival, draw_arrivals
from .kai import KaiAccounting, kai_snapshot
from .modes import MODES, Mode, check_modes, resolve_mode
from .observe import Observer, Weight
from .queueing import QueueingSetup, queueing_setup
from .results import ModeResult, SimulationResult
from .scenario import Scenario
from .stages import (
    AutoscalingStage,
    Completion,
    JobController,
    NodeLifecycle,
    PodBook,
    Sampling,
    SchedulingStage,
)
from .stages.admission import AdmissionStage, LivePlacement
from .stages.kai import KaiSchedulingStage
from .stages.pods import PodState
from .stages.sampling import Progress

__all__ = ["MODE_LABELS", "Progress", "QueueingSetup", "run_mode", "simulate"]

MODE_LABELS = {name: m.label for name, m in MODES.items()}


def _kind_weights(scenario: Scenario, mode: Mode) -> list[Weight]:
    """The workload distribution M: (probability, cpu milli, (GPUs, share, MiB)) per kind."""
    weights = []
    for kind in scenario.kinds:
        rate = kind.rate if kind.rate is not None else len(kind.arrivals) / scenario.duration
        weights.append((rate * kind.pods_per_job, kind))
    total = sum(w for w, _ in weights) or 1.0
    return [(w / total, _cpu_milli(scenario, k.name, k.cpu.milli_value()), mode.demand(k))
            for w, k in weights]


def _cpu_milli(scenario: Scenario, kind: str, own: int) -> int:
    template = scenario.templates.get(kind)
    if template is None:
        return own
    return sum(c.resources.requests["cpu"].milli_value()
               for c in template.pod.spec.containers if "cpu" in c.resources.requests)


def _live_placement(scenario: Scenario, mode: Mode, scheduler: Scheduler,
                    admission: AdmissionStage, jobs: JobController) -> LivePlacement:
    """The pod-set placement check of admission on this run's cluster."""
    prototypes = mode.prototypes(scenario)

    def pods_of(key: str) -> list[Pod]:
        arrival = admission.arrivals[key]
        return [mode.make_pod(arrival, replica, 0, prototypes.get(arrival.kind.name))
                for replica in range(len(arrival.durations))]

    def labels_of(assigned: Admission) -> dict[str, str]:
        labels: dict[str, str] = {}
        for pod_set in assigned.pod_sets:
            labels.update(flavor_labels(admission.state, sorted(set(pod_set.flavors.values()))))
        return labels

    def live_pods_of(key: str) -> list[str]:
        arrival = admission.arrivals.get(key)
        return jobs.live_pods(arrival.name) if arrival is not None else []

    return LivePlacement(scheduler, pods_of, labels_of, live_pods_of)


def kai_accounting(observer: Observer) -> KaiAccounting:
    """The kai mode's accounting (``KaiMode.accounting``), which its stage keeps current."""
    accounting = observer.accounting
    assert isinstance(accounting, KaiAccounting)
    return accounting


def _job_waits(arrivals: list[Arrival], book: PodBook) -> tuple[float, ...]:
    """Per job whose pods started, arrival -> its first pod's start: with a queue in front
    of the scheduler (Kueue's admission, or KAI's queues) the wait a job's owner sees."""
    first: dict[str, float] = {}
    for state in book.order:
        if state.started is not None:
            name = state.arrival.name
            first[name] = min(first.get(name, state.started), state.started)
    return tuple(first[a.name] - a.time for a in arrivals if a.name in first)


def _cd_sampler(scenario: Scenario, mode: Mode, cluster: ClusterState,
                observer: Observer, held: Callable[[], int]) -> ComputeDomainSampler | None:
    """The NVLink fragmentation sampler when the scenario has ComputeDomain job kinds."""
    kinds = [k for k in scenario.kinds if k.compute_domain]
    if not kinds:
        return None
    multi = [(k.pods_per_job, mode.demand(k)[0]) for k in kinds if k.pods_per_job > 1]
    return ComputeDomainSampler(
        cluster, lambda: observer.accounting.use(observer.node_gpus),
        frozenset(k.name for k in kinds), min(multi) if multi else (0, 0), held)


def _cd_metrics(scenario: Scenario, prototypes: Mapping[str, Pod],
                arrived: Sequence[Arrival], book: PodBook,
                sampler: ComputeDomainSampler | None) -> ComputeDomainMetrics | None:
    """Each ComputeDomain job's wait and NVLink domains, and the sampled fragmentation."""
    if sampler is None:
        return None
    jobs = cd_jobs(
        ((a.name, a.kind.name, a.kind.pods_per_job, a.time)
         for a in arrived if a.kind.compute_domain),
        ((s.arrival.name, s.replica, s.started, s.node or "") for s in book.order
         if s.arrival.kind.compute_domain and s.started is not None),
        lambda node: sampler.cliques.get(node))
    return ComputeDomainMetrics(jobs=jobs, samples=tuple(sampler.samples),
                                smallest=sampler.smallest[0],
                                profile=placement_label(scenario.scheduler, [
                                    clique_affinity(prototypes.get(k.name))
                                    for k in scenario.kinds
                                    if k.compute_domain and k.pods_per_job > 1]))


def run_mode(scenario: Scenario, mode: Mode | str, arrivals: Iterable[Arrival] | None = None,
             progress: Progress | None = None,
             queueing: QueueingSetup | None = None,
             timer: Callable[[], float] | None = None) -> ModeResult:
    """Simulate ``scenario`` in one mode (a Mode, or its name: ``dra``, ``device-plugin``).

    ScenarioError if a template kind has no device-plugin translation and ``mode``
    is device-plugin. ``timer``: a wall clock to time each scheduling cycle with
    (``ModeResult.cycle_seconds``); without it no clock is read."""
    mode = resolve_mode(mode)
    check_modes(scenario, (mode,))
    fleet = mode.objects(scenario)
    cluster, _ = build_cluster(mode.cluster_objects(scenario, fleet), scenario.features,
                               scenario.seed)
    env = Environment()
    arrived = list(arrivals) if arrivals is not None else draw_arrivals(scenario)
    # NVLinkDomainGang (opt-in, when the profile names it) sizes each job's gang by its
    # ComputeDomain's numNodes, as ``dralab schedule`` does from its input.
    registry = with_sizes(default_registry(), gang_sizes(arrived))
    scheduler = Scheduler.build(cluster, scenario.scheduler, scenario.seed,
                                clock=lambda: env.now, registry=registry)
    scheduler.cycle.record_rejections = False  # nothing reads a placed pod's rejections
    observer = Observer(
        cluster, [o for o in fleet if isinstance(o, Node)],
        mode.accounting(cluster, (o for o in fleet if isinstance(o, ResourceSlice))),
        mode.name, _kind_weights(scenario, mode), scenario.sample_interval)
    book = PodBook()
    kai: KaiSchedulingStage | None = None
    if mode.pod_scheduler == "kai":
        # KAI is the queueing policy and the pod scheduler: its session replaces both.
        kai = KaiSchedulingStage(env, scheduler, book, kai_snapshot(scenario),
                                 kai_accounting(observer))
        scheduling: SchedulingStage = kai
        queueing = None
    else:
        scheduling = SchedulingStage(env, scheduler, book)
    if timer is not None:
        scheduling.time_cycles(timer)
    completion = Completion(env, book, observer, scheduling)
    jobs = JobController(env, cluster, book, mode, mode.prototypes(scenario), observer,
                         scheduling)
    nodes = NodeLifecycle(env, cluster, jobs, observer, scheduling,
                          scenario.pool_nodes.get(mode.name, {}))
    sampling = Sampling(env, observer, book, mode.name, scenario.duration, progress)
    # The job controller counts each job's pods as they finish (a ComputeDomain job's
    # channel template goes with its last pod; a queued job's quota comes back).
    completion.on_finished = jobs.pod_finished
    cd_sampler = _cd_sampler(scenario, mode, cluster, observer, completion.held_gpus)
    if cd_sampler is None:
        scheduling.bind(started=completion.start, evicted=jobs.preempted)
    else:
        sampling.also.append(lambda: cd_sampler.sample(env.now))

        def started(state: PodState, node: str) -> None:
            cd_sampler.placed(node)
            completion.start(state, node)

        scheduling.bind(started=started, evicted=jobs.preempted)
    stages: list[Stage] = [nodes, completion, jobs, scheduling, sampling]
    admission: AdmissionStage | None = None
    if queueing is not None:
        admission = AdmissionStage(env, queueing.policy(), queueing.state(mode),
                                   release=jobs.release, evict=jobs.suspend)
        jobs.queue_with(admission, queueing.workload_of(mode))
        if queueing.feasibility and hasattr(admission.policy, "placement"):
            admission.placement = _live_placement(scenario, mode, scheduler, admission, jobs)
            admission.policy.placement = admission.placement
        sampling.also.append(admission.sample)
        stages.append(admission)
    if kai is not None:
        sampling.also.append(kai.sample)
    autoscaling: AutoscalingStage | None = None
    if scenario.autoscaling is not None:
        pools = mode.pool_fleet(scenario)
        model = build_model(scenario.autoscaling, scheduler, pools, scenario.seed)
        autoscaling = AutoscalingStage(env, scenario.autoscaling, model, scheduler, nodes, book,
                                       pools, scenario.seed, mode.join_form)
        scheduling.after_round.append(autoscaling.notice)
        sampling.also.append(autoscaling.sample)
        stages.append(autoscaling)
    env.register(*stages)

    for arrival in arrived:
        jobs.at(arrival.time, functools.partial(jobs.arrive, arrival))
    for change in scenario.timeline:
        if change.at < scenario.duration:
            nodes.at(change.at, functools.partial(nodes.apply, change))
    t = 0.0
    while t < scenario.duration:
        sampling.at(t, sampling.sample)
        t += scenario.sample_interval
    with gc_relaxed():
        env.run(until=scenario.duration)
    sampling.sample()
    return ModeResult(mode=mode.name, label=mode.label,
                      samples=tuple(observer.samples), pods=tuple(s.record() for s in book.order),
                      occupancy=observer.occupancy(scenario.duration),
                      scheduling_attempts=scheduling.attempts, preemptions=jobs.preemptions,
                      unschedulable_reasons=dict(sorted(scheduling.reasons.items())),
                      wall_seconds=0.0, cycle_seconds=tuple(scheduling.cycle_seconds),
                      queues={q: st.freeze() for q, st in sorted(admission.stats.items())}
                      if admission else {},
                      kai_queues=kai.queue_metrics() if kai is not None else {},
                      job_waits=_job_waits(arrived, book) if admission or kai else (),
                      autoscaling=autoscaling.metrics() if autoscaling is not None else None,
                      compute_domains=_cd_metrics(scenario, mode.prototypes(scenario),
                                                  arrived, book, cd_sampler))


def simulate(scenario: Scenario, progress: Progress | None = None,
             timer: Callable[[], float] | None = None) -> SimulationResult:
    """Run every mode of ``scenario.compare`` on the same arrivals; deterministic.

    ``timer`` (e.g. ``time.perf_counter``, injected by the CLI) sets each mode's
    ``wall_seconds``; without it they are 0 and the function reads no clock.
    """
    check_modes(scenario)
    arrivals = draw_arrivals(scenario)
    queueing = queueing_setup(scenario)
    results = []
    for mode in scenario.modes:
        started = timer() if timer is not None else 0.0
        result = run_mode(scenario, mode, arrivals, progress, queueing, timer)
        if timer is not None:
            result = dataclasses.replace(result, wall_seconds=timer() - started)
        results.append(result)
    return SimulationResult(scenario=scenario.name, seed=scenario.seed,
                            duration=scenario.duration, modes=tuple(results))
