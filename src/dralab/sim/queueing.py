"""Queueing in a scenario (``spec.queueing``): Kueue objects read when the scenario
loads, and per mode the admission stage's setup.

A job kind with ``queue: namespace/name`` sends its jobs to that LocalQueue: each
job is one Workload of one pod set (``main``, one pod per replica) whose per-pod
requests are what Kueue charges for the kind's pod in the run's mode: cpu, memory
and extended resources (``nvidia.com/gpu`` in device-plugin mode), and in DRA mode
the devices of its claim templates through the Configuration's
``deviceClassMappings``. The policy is Kueue's (fair sharing as the Configuration
says).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dralab.api.base import KubeObject
from dralab.api.codec import KINDS
from dralab.api.errors import LoadError
from dralab.api.io import read_documents
from dralab.api.kindcount import api_group, warn_unused_kinds
from dralab.queueing.configured import configuration, feasibility_on, kueue_policy
from dralab.queueing.dra import Inadmissible
from dralab.queueing.load import load_snapshot
from dralab.queueing.model import AdmissionPolicy, PodSetRequest, QueueingState, WorkloadSpec
from dralab.queueing.objects import CONFIG_GROUP, KUEUE_GROUP, LocalQueue
from dralab.queueing.reader import admission_fair_sharing, pod_set_request, read_snapshot

from .computedomains import job_template
from .jobs import Arrival
from .modes import Mode
from .spec import JobKind, QueueingRef, ScenarioError
from .templates import TemplateError, resolve_path

if TYPE_CHECKING:
    from .parsedscenario import ParsedScenario

__all__ = ["QueueingSetup", "queueing_setup", "read_kueue"]

# The Kubernetes kinds dralab models: what Kueue's snapshot may read from the file.
_MODELLED = frozenset((api_group(k.API_VERSION), k.KIND) for k in KINDS)


def read_kueue(ref: QueueingRef, workload: Sequence[JobKind], base_dir: str, source: str,
               allow_outside: bool) -> tuple[KubeObject, ...]:
    """The Kueue objects of ``spec.queueing.kueue``; ScenarioError naming the field for a
    file that cannot be read, an invalid object, or a kind's unknown LocalQueue."""
    field = "spec.queueing.kueue"
    if not ref.kueue.strip():
        raise ScenarioError(source, field, "must name a file or directory of Kueue objects")
    try:
        path = resolve_path(ref.kueue, base_dir, allow_outside)
        docs = read_documents([path])
        objects, problems = load_snapshot(docs)
    except (TemplateError, LoadError) as exc:
        raise ScenarioError(source, field, str(exc)) from None
    if problems:
        raise ScenarioError(source, field, problems[0])
    queues = {o.ref for o in objects if isinstance(o, LocalQueue)}
    for i, job in enumerate(workload):
        if job.queue is not None and job.queue not in queues:
            known = ", ".join(sorted(queues)) or "none"
            raise ScenarioError(source, f"spec.workload[{i}].queue", (
                f"no LocalQueue {job.queue!r} in {ref.kueue} (LocalQueues: {known}); "
                "write namespace/name"))
    # Kueue's objects and the Kubernetes kinds Kueue reads (Jobs, pods, classes) are used;
    # anything else in the file changes nothing.
    warn_unused_kinds(docs, f"dralab simulate ({field})",
                      lambda key: key[0] in (KUEUE_GROUP, CONFIG_GROUP) or key in _MODELLED)
    return tuple(objects)


@dataclass(frozen=True, slots=True)
class QueueingSetup:
    """Admission before scheduling (``stages.AdmissionStage``): per mode a fresh state,
    the policy, and how a job becomes a workload (None: the job is not queued)."""

    state: Callable[[Mode], QueueingState]
    policy: Callable[[], AdmissionPolicy]
    workload_of: Callable[[Mode], Callable[[Arrival], WorkloadSpec | None]]
    # Kueue's gate KueueDRADeviceFeasibility: admission places the whole pod set first.
    feasibility: bool = False


def queueing_setup(scenario: ParsedScenario) -> QueueingSetup | None:
    """The scenario's queueing (None when ``spec.queueing`` is not set)."""
    objects = scenario.kueue_objects
    if objects is None:
        return None
    kinds = {k.name: k.queue for k in scenario.workload if k.queue is not None}
    positions = {k.name: f"spec.workload[{i}].queue" for i, k in enumerate(scenario.workload)}
    config = configuration(objects)
    local_queues = {o.ref: o.spec.cluster_queue for o in objects if isinstance(o, LocalQueue)}

    def state(mode: Mode) -> QueueingState:
        return read_snapshot(list(objects)).state

    def policy() -> AdmissionPolicy:
        made = kueue_policy(config)
        made.afs = admission_fair_sharing(objects)  # a fresh ledger per run
        return made

    def workload_of(mode: Mode) -> Callable[[Arrival], WorkloadSpec | None]:
        everything = [*objects, *mode.cluster_objects(scenario, mode.objects(scenario))]
        prototypes = mode.prototypes(scenario)
        per_kind: dict[str, PodSetRequest] = {}

        def make(arrival: Arrival) -> WorkloadSpec | None:
            queue = kinds.get(arrival.kind.name)
            if queue is None:
                return None
            request = per_kind.get(arrival.kind.name)
            if request is None:
                pod = mode.make_pod(arrival, 0, 0, prototypes.get(arrival.kind.name))
                # A ComputeDomain job's channel template exists once the job does (the
                # controller writes it); each job's has the same shape, so one serves.
                known = [*everything, job_template(arrival)] \
                    if arrival.kind.compute_domain else everything
                try:
                    request = pod_set_request(known, pod, 1)
                except Inadmissible as exc:
                    # Kueue keeps such a workload inadmissible for good: every job of the
                    # kind would wait the whole run, which a scenario never means.
                    raise ScenarioError(scenario.source, positions[arrival.kind.name], (
                        f"Kueue would admit none of its jobs in {mode.name} mode: "
                        f"{exc.message}")) from None
                per_kind[arrival.kind.name] = request
            pod_set = PodSetRequest(request.name, len(arrival.durations), request.per_pod,
                                    request.node_selector, request.tolerations,
                                    request.topology)
            namespace = queue.partition("/")[0]
            # Jobs of one instant keep their arrival order (Kueue orders by creation).
            return WorkloadSpec(f"{namespace}/{arrival.name}", queue, local_queues.get(queue),
                                arrival.kind.priority, arrival.time + arrival.index * 1e-6,
                                (pod_set,))
        return make

    return QueueingSetup(state, policy, workload_of, feasibility_on(config))
