"""Running a scenario: one event loop per compared mode, the scheduler framework inside.

Each mode gets its own cluster (built from the fleet as that mode sees it) and its
own ``Scheduler`` with the scenario's profile; the arrivals and run times were
drawn once for all modes (``jobs.draw_arrivals``). Events:

* job arrival: its pods are created (DRA: from the job kind's claim template,
  claims are generated in PreEnqueue; a kind with a manifest template copies its
  pod, see ``kinds``) and join the queue;
* completion: the pod leaves; its claims are released and deallocated;
* scheduling round (after every instant with arrivals, completions or node events,
  and when the queue has something due: the five-minute flush of unschedulable
  pods): the run's ``Scheduler`` takes every pod its queue offers
  (``Scheduler.schedule_pending``), the same loop ``dralab schedule`` runs, on the
  simulated clock. Pods of one job kind and priority form one equivalence class
  (``dralab.scheduler.queue``). Preemption victims are re-created as new pods once
  the round is over (their Job controller would do so after they terminated);
* sample: metrics (see ``observe``).

Pure: no I/O, no wall clock. Same scenario and seed, same result.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import msgspec

from dralab.api.base import KubeObject
from dralab.api.core import Node, Pod, Taint
from dralab.api.quantity import parse_quantity
from dralab.api.resource import ResourceSlice
from dralab.scheduler import Scheduler, build_cluster
from dralab.scheduler.cluster import PodInfo
from dralab.scheduler.cycle import Attempt

from .engine import Environment, Event, Priority
from .fleets import DeviceMap, mode_objects
from .jobs import GPU_RESOURCE, Arrival, draw_arrivals, make_pod, shape_demand, templates_for
from .kinds import check_device_plugin, kind_shape, pod_prototypes, template_objects
from .observe import Observer
from .results import ModeResult, PodRecord, SimulationResult
from .scenario import JobKind, NodeEvent, Scenario, parse_duration, parse_rate

__all__ = ["MODE_LABELS", "Progress", "run_mode", "simulate"]

MODE_LABELS = {"device-plugin": "Device plugin (whole GPUs)", "dra": "DRA (MIG + sharing)"}

Progress = Callable[[str, float], None]  # (mode, fraction of simulated time done)

_REASONS = re.compile(r"^\d+/\d+ nodes are available: (.*?)\.(?: |$)")


def reason_kinds(message: str) -> list[str]:
    """The reason phrases of a kube-scheduler message, without their node counts."""
    match = _REASONS.match(message)
    if match is None:
        return [message.split(".")[0]] if message else []
    return [re.sub(r"^\d+ ", "", part).strip() for part in match.group(1).split(", ")]


@dataclass(slots=True)
class _PodState:
    arrival: Arrival
    replica: int
    info: PodInfo
    arrived: float
    started: float | None = None
    ended: float | None = None
    node: str | None = None
    devices: int = 0
    gpu_fraction: float = 0.0
    preempted: bool = False
    reason: str | None = None
    completion: Event | None = None
    restarts: int = 0


# What a sample counts: pending (not started, not preempted), running (started, not
# ended) and completed (ended without preemption). Kept as running totals: counting
# every pod at every sample made a run cost pods x samples.
_CATEGORIES = ("pending", "running", "completed")


def _category(state: _PodState) -> str | None:
    if state.started is None:
        return None if state.preempted else "pending"
    if state.ended is None:
        return "running"
    return None if state.preempted else "completed"


@dataclass(slots=True)
class _Run:
    scenario: Scenario
    mode: str
    env: Environment
    scheduler: Scheduler
    observer: Observer
    progress: Progress | None = None
    prototypes: dict[str, Pod] = field(default_factory=dict)  # template kinds' pods
    pods: dict[str, _PodState] = field(default_factory=dict)
    order: list[_PodState] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_CATEGORIES, 0))
    round_pending: bool = False
    wakeups: set[float] = field(default_factory=set)
    attempts: int = 0
    preemptions: int = 0
    reasons: dict[str, int] = field(default_factory=dict)
    removed_nodes: dict[str, Node] = field(default_factory=dict)
    removed_slices: dict[str, tuple[ResourceSlice, ...]] = field(default_factory=dict)

    # --- events ---------------------------------------------------------------------
    def arrive(self, arrival: Arrival) -> None:
        for replica in range(len(arrival.durations)):
            self._add_pod(arrival, replica, 0)
        self.request_round()

    def _add_pod(self, arrival: Arrival, replica: int, restarts: int) -> _PodState:
        pod = make_pod(arrival, replica, self.mode, restarts,
                       self.prototypes.get(arrival.kind.name))
        scheduler = self.scheduler
        info = scheduler.cluster.add_pod(pod)
        state = _PodState(arrival, replica, info, self.env.now, restarts=restarts)
        self.pods[info.key] = state
        self.order.append(state)
        self.counts["pending"] += 1
        # Pods of one job kind and priority are interchangeable for the scheduler.
        scheduler.enqueue(info, (arrival.kind.name, info.priority))
        queued = scheduler.queue.pods.get(info.key)
        if queued is None or queued.where == "gated":
            state.reason = "waiting (PreEnqueue or no profile)"
        return state

    def request_round(self) -> None:
        if not self.round_pending:
            self.round_pending = True
            self.env.at(self.env.now, self.schedule_round, Priority.SCHEDULE)

    def _wake_at(self, when: float) -> None:
        """A round when the queue has something due on its own (the five-minute flush
        of unschedulable pods, an error back-off, a Permit timeout)."""
        if when >= self.scenario.duration or when in self.wakeups:
            return
        self.wakeups.add(when)

        def wake() -> None:
            self.wakeups.discard(when)
            self.request_round()
        self.env.at(when, wake, Priority.SCHEDULE)

    def _change(self, state: _PodState, **changes: object) -> None:
        """Set fields of ``state`` and keep ``counts`` in step (what sample() reports)."""
        before = _category(state)
        for name, value in changes.items():
            setattr(state, name, value)
        after = _category(state)
        if before != after:
            if before is not None:
                self.counts[before] -= 1
            if after is not None:
                self.counts[after] += 1

    def complete(self, key: str) -> None:
        state = self.pods[key]
        self._change(state, ended=self.env.now)
        state.completion = None
        self.scheduler.delete_pod(key)
        self.observer.pod_left(state.info)
        self.request_round()

    def schedule_round(self) -> None:
        """The scheduler takes every pod its queue offers now (``Scheduler.schedule_pending``);
        then a wake-up for whatever the queue will have due later."""
        self.round_pending = False
        self.scheduler.schedule_pending()
        wakeup = self.scheduler.next_wakeup()
        if wakeup != float("inf"):
            self._wake_at(wakeup)

    def on_placed(self, info: PodInfo, node: str) -> None:
        state = self.pods.get(info.key)
        if state is not None and state.started is None:
            self._started(state, node)

    def on_failed(self, info: PodInfo, attempt: Attempt) -> None:
        state = self.pods.get(info.key)
        if state is None:
            return
        if attempt.error is not None:
            state.reason = "scheduler error"
            self._count(state.reason)
            return
        assert attempt.diagnosis is not None
        for reason in reason_kinds(attempt.diagnosis.message()):
            self._count(reason)
            state.reason = reason

    def on_evicted(self, victim: PodInfo, preemptor: PodInfo) -> None:
        self._evicted(victim, counted=True)

    def _count(self, reason: str) -> None:
        self.reasons[reason] = self.reasons.get(reason, 0) + 1

    def _started(self, state: _PodState, node: str) -> None:
        self._change(state, started=self.env.now)
        state.node = node
        current = self.scheduler.cluster.pods.get(state.info.key)
        if current is not None:
            state.info = current
        state.devices, state.gpu_fraction = self.observer.pod_started(
            state.info, kind_shape(self.scenario, state.arrival.kind), node)
        duration = state.arrival.durations[state.replica]
        key = state.info.key
        state.completion = self.env.after(duration, functools.partial(self.complete, key),
                                          Priority.COMPLETION)

    def _evict(self, key: str, counted: bool = True) -> None:
        info = self.scheduler.delete_pod(key)
        if info is not None:
            self._evicted(info, counted)

    def _evicted(self, info: PodInfo, counted: bool) -> None:
        """The pod is gone from the cluster (preempted, its node removed)."""
        state = self.pods.get(info.key)
        if state is None:
            return
        if counted:
            self.preemptions += 1
        self.observer.pod_left(info)
        if state.completion is not None:
            state.completion.cancel()
            state.completion = None
        self._change(state, preempted=True, ended=self.env.now)
        # The Job controller re-creates the pod once the old one is gone: after the
        # scheduling round that evicted it (its preemptor is retried first, as the real
        # victim's graceful termination outlasts the preemptor's one-second back-off).
        # The new pod runs its full time again.
        self.env.at(self.env.now, functools.partial(self._recreate, state), Priority.ARRIVAL)

    def _recreate(self, state: _PodState) -> None:
        self._add_pod(state.arrival, state.replica, state.restarts + 1)
        self.request_round()

    def node_event(self, event: NodeEvent) -> None:
        """Apply a node event; unknown nodes are ignored (a removed node cannot be tainted)."""
        cluster = self.scheduler.cluster
        name = event.node
        if event.action == "remove":
            info = cluster.nodes.get(name)
            if info is None:
                return
            for pod in list(info.pods):
                self._evict(pod.key, counted=False)
            # The node's slices go with it; they come back when it is re-added.
            self.removed_slices[name] = cluster.slices_of(name)
            cluster.remove_node(name)
            self.removed_nodes[name] = info.node
        elif event.action == "add":
            node = self.removed_nodes.pop(name, None)
            if node is None:
                return
            cluster.add_node(_with_taints(node, []), self.removed_slices.pop(name, ()))
        else:
            current = cluster.nodes.get(name)
            if current is None:
                return
            taints = [t for t in current.node.spec.taints
                      if not (event.taint and t.key == event.taint.get("key"))]
            if event.action == "taint" and event.taint is not None:
                taints.append(Taint(key=str(event.taint["key"]),
                                    value=event.taint.get("value"),
                                    effect=str(event.taint["effect"])))
            cluster.add_node(_with_taints(current.node, taints))
        self.request_round()

    def sample(self) -> None:
        counts = self.counts
        self.observer.sample(self.env.now, counts["pending"], counts["running"],
                             counts["completed"])
        if self.progress is not None:
            self.progress(self.mode, min(1.0, self.env.now / self.scenario.duration))



def _with_taints(node: Node, taints: list[Taint]) -> Node:
    return msgspec.structs.replace(node, spec=msgspec.structs.replace(node.spec, taints=taints))


def _cpu_milli(scenario: Scenario, kind: JobKind) -> int:
    template = scenario.templates.get(kind.name)
    if template is None:
        return parse_quantity(str(kind.cpu)).milli_value()
    return sum(c.resources.requests["cpu"].milli_value()
               for c in template.pod.spec.containers if "cpu" in c.resources.requests)


def _demand(scenario: Scenario, kind: JobKind, mode: str) -> tuple[int, float, int]:
    shape = kind_shape(scenario, kind)
    if mode == "device-plugin" and kind.name in scenario.device_plugin \
            and shape is not None and shape.type == "mig":
        # A template's MIG request stays a MIG device with the device plugin (static MIG).
        return shape_demand(shape, "dra")
    return shape_demand(shape, mode)


def _kind_weights(scenario: Scenario, mode: str) -> list[tuple[float, int, tuple[int, float, int]]]:
    """The workload distribution M: (probability, cpu milli, (GPUs, share, MiB)) per kind."""
    weights = []
    for kind in scenario.workload:
        rate = parse_rate(kind.arrival_rate) if kind.arrival_rate is not None \
            else len(kind.arrivals) / scenario.duration
        weights.append((rate * kind.pods_per_job, kind))
    total = sum(w for w, _ in weights) or 1.0
    return [(w / total, _cpu_milli(scenario, k), _demand(scenario, k, mode)) for w, k in weights]


def run_mode(scenario: Scenario, mode: str, arrivals: Iterable[Arrival] | None = None,
             progress: Progress | None = None) -> ModeResult:
    """Simulate ``scenario`` in one mode (``dra`` or ``device-plugin``).

    ScenarioError if a template kind has no device-plugin translation and ``mode``
    is device-plugin."""
    check_device_plugin(scenario, (mode,))
    fleet = mode_objects(scenario, mode)
    objects: list[KubeObject] = list(fleet)
    if mode == "dra":
        # After the fleet's: a manifest's DeviceClass replaces the fleet's of that name.
        objects.extend(templates_for(scenario.workload))
        objects.extend(template_objects(scenario))
    cluster, _ = build_cluster(objects, None, scenario.seed)
    env = Environment()
    scheduler = Scheduler.build(cluster, scenario.scheduler, scenario.seed,
                                clock=lambda: env.now)
    nodes = [o for o in fleet if isinstance(o, Node)]
    devices = DeviceMap(o for o in fleet if isinstance(o, ResourceSlice)) if mode == "dra" \
        else None
    observer = Observer(cluster, nodes, devices, mode, _kind_weights(scenario, mode),
                        scenario.sample_interval, GPU_RESOURCE)
    run = _Run(scenario, mode, env, scheduler, observer, progress,
               prototypes=pod_prototypes(scenario, mode))
    scheduler.on_placed = run.on_placed
    scheduler.on_failed = run.on_failed
    scheduler.on_evicted = run.on_evicted
    for arrival in arrivals if arrivals is not None else draw_arrivals(scenario):
        env.at(arrival.time, functools.partial(run.arrive, arrival), Priority.ARRIVAL)
    for event in scenario.events:
        at = parse_duration(event.at)
        if at < scenario.duration:
            env.at(at, functools.partial(run.node_event, event), Priority.NODE)
    t = 0.0
    while t < scenario.duration:
        env.at(t, run.sample, Priority.SAMPLE)
        t += scenario.sample_interval
    env.run(until=scenario.duration)
    run.sample()
    records = tuple(
        PodRecord(key=s.info.key, job=s.arrival.name, kind=s.arrival.kind.name,
                  arrival=s.arrived, start=s.started, end=s.ended, node=s.node,
                  devices=s.devices, gpu_fraction=s.gpu_fraction, preempted=s.preempted,
                  unschedulable_reason=s.reason if s.started is None or s.reason else None)
        for s in run.order)
    return ModeResult(mode=mode, label=MODE_LABELS.get(mode, mode),
                      samples=tuple(observer.samples), pods=records,
                      occupancy=observer.occupancy(scenario.duration),
                      scheduling_attempts=scheduler.cycles, preemptions=run.preemptions,
                      unschedulable_reasons=dict(sorted(run.reasons.items())),
                      wall_seconds=0.0)


def simulate(scenario: Scenario, progress: Progress | None = None,
             timer: Callable[[], float] | None = None) -> SimulationResult:
    """Run every mode of ``scenario.compare`` on the same arrivals; deterministic.

    ``timer`` (e.g. ``time.perf_counter``, injected by the CLI) sets each mode's
    ``wall_seconds``; without it they are 0 and the function reads no clock.
    """
    check_device_plugin(scenario)
    arrivals = draw_arrivals(scenario)
    results = []
    for mode in scenario.compare:
        started = timer() if timer is not None else 0.0
        result = run_mode(scenario, mode, arrivals, progress)
        if timer is not None:
            result = dataclasses.replace(result, wall_seconds=timer() - started)
        results.append(result)
    modes = tuple(results)
    return SimulationResult(scenario=scenario.name, seed=scenario.seed,
                            duration=scenario.duration, modes=modes)


