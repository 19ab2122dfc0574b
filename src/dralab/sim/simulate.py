"""Running a scenario: one event loop per compared mode, the scheduler framework inside.

Each mode gets its own cluster (built from the fleet as that mode sees it) and its
own ``Scheduler`` with the scenario's profile; the arrivals and run times were
drawn once for all modes (``jobs.draw_arrivals``). Events:

* job arrival: its pods are created (DRA: from the job kind's claim template,
  claims are generated in PreEnqueue; a kind with a manifest template copies its
  pod, see ``kinds``) and join the queue;
* completion: the pod leaves; its claims are released and deallocated;
* scheduling round (after every instant with arrivals or completions): pending pods
  in QueueSort order (priority, then arrival) each get one scheduling cycle of the
  framework. A pod kind that failed without preemption is not retried in the same
  round, since nothing changed for it (kube-scheduler's queueing hints do the same);
  preemption victims are re-created as new pods (their Job controller would do so);
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
from dralab.scheduler.claims import delete_pod
from dralab.scheduler.cluster import PodInfo

from .engine import Environment, Event, Priority
from .fleets import DeviceMap, mode_objects
from .jobs import GPU_RESOURCE, Arrival, draw_arrivals, make_pod, shape_demand, templates_for
from .kinds import check_device_plugin, kind_shape, pod_prototypes, template_objects
from .observe import Observer
from .podqueue import Item, KindQueues
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
    queue: KindQueues = field(default_factory=KindQueues)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_CATEGORIES, 0))
    round_pending: bool = False
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
        info = self.scheduler.cluster.add_pod(pod)
        state = _PodState(arrival, replica, info, self.env.now, restarts=restarts)
        self.pods[info.key] = state
        self.order.append(state)
        self.counts["pending"] += 1
        framework = self.scheduler.framework_for(info)
        if framework is not None and framework.run_pre_enqueue(info).is_success():
            self.queue.push((arrival.kind.name, info.priority),
                            (-info.priority, info.sequence, info.key))
        else:
            state.reason = "waiting (PreEnqueue or no profile)"
        return state

    def request_round(self) -> None:
        if not self.round_pending:
            self.round_pending = True
            self.env.at(self.env.now, self.schedule_round, Priority.SCHEDULE)

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
        delete_pod(self.scheduler.cluster, key)
        self.observer.pod_left(state.info)
        self.request_round()

    def schedule_round(self) -> None:
        """Every pending pod in QueueSort order, one cycle each; a kind that failed waits
        for the next round (``podqueue``)."""
        self.round_pending = False
        self.queue.start_round()
        while (taken := self.queue.next()) is not None:
            kind, item = taken
            state = self.pods.get(item[2])
            if state is None or state.started is not None:
                self.queue.settle(kind, item, done=True, kind_failed=False)
                continue
            started, kind_failed = self._attempt(state, item)
            self.queue.settle(kind, item, done=started, kind_failed=kind_failed)
        self.queue.end_round()

    def _attempt(self, state: _PodState, item: Item) -> tuple[bool, bool]:
        """One pod's turn: (started, whether its kind failed for the rest of the round)."""
        info = state.info
        framework = self.scheduler.framework_for(info)
        if framework is None:
            return False, False
        for _ in range(3):  # a nominated pod is retried once its victims are gone
            self.attempts += 1
            attempt = self.scheduler.cycle.schedule_one(framework, info)
            if attempt.node is not None:
                self._started(state, attempt.node)
                return True, False
            if attempt.error is not None:
                state.reason = "scheduler error"
                self._count(state.reason)
                return False, True
            assert attempt.diagnosis is not None
            for reason in reason_kinds(attempt.diagnosis.message()):
                self._count(reason)
                state.reason = reason
            if attempt.nominated or attempt.clear_nomination:
                self.scheduler.cycle.set_nomination(info, attempt.nominated)
            if attempt.victims:
                for key in attempt.victims:
                    self._evict(key)
                self.queue.reopen(item)
                continue
            if attempt.cluster_changed:
                continue
            return False, True
        return False, False

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
        state = self.pods.get(key)
        info = delete_pod(self.scheduler.cluster, key)
        if state is None or info is None:
            return
        if counted:
            self.preemptions += 1
        self.scheduler.cycle.set_nomination(info, None)
        self.observer.pod_left(info)
        if state.completion is not None:
            state.completion.cancel()
            state.completion = None
        self._change(state, preempted=True, ended=self.env.now)
        # The Job controller re-creates the pod; it runs its full time again.
        self._add_pod(state.arrival, state.replica, state.restarts + 1)

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
    scheduler = Scheduler.build(cluster, scenario.scheduler, scenario.seed)
    nodes = [o for o in fleet if isinstance(o, Node)]
    devices = DeviceMap(o for o in fleet if isinstance(o, ResourceSlice)) if mode == "dra" \
        else None
    observer = Observer(cluster, nodes, devices, mode, _kind_weights(scenario, mode),
                        scenario.sample_interval, GPU_RESOURCE)
    env = Environment()
    run = _Run(scenario, mode, env, scheduler, observer, progress,
               prototypes=pod_prototypes(scenario, mode))
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
                      scheduling_attempts=run.attempts, preemptions=run.preemptions,
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


