"""Snapshot semantics: what each workload controller would create on its next sync.

The objects given to dralab are a cluster's state, not a creation script: a
Deployment whose ReplicaSet and pods exist creates nothing, a half-done Job only
its missing pods. Each controller counts what it owns (``owners``: controller
references first, label selectors for adoption) and creates the difference:

* Deployment: the new ReplicaSet (the one whose pod template equals the
  Deployment's, ``pod-template-hash`` label aside) if it is missing, else nothing;
  it sets the new ReplicaSet's replicas as one rollout step does (RollingUpdate:
  up to ``replicas + maxSurge`` pods over all its ReplicaSets; Recreate: old
  ReplicaSets to zero, then the full count once no old pod is active). A paused
  Deployment creates no ReplicaSet. A RollingUpdate does not scale old ReplicaSets
  down: that waits for new pods to become available, which a scheduling run does
  not model. Pods are never deleted: running ones hold their node until they go.
* ReplicaSet: ``replicas`` (or what its Deployment sets) minus its active pods.
* Job: nothing when finished (Complete/Failed/SuccessCriteriaMet/FailureTarget),
  suspended or past its backoffLimit; else ``min(parallelism, completions -
  succeeded)`` (no completions: ``parallelism`` until one pod succeeded) minus its
  active pods. Succeeded counts ``status.succeeded``, the uncounted succeeded pods and
  succeeded pods still carrying the job-tracking finalizer, as the controller
  does. Indexed Jobs create the lowest indexes that are neither completed
  (``status.completedIndexes``, succeeded pods) nor held by an active pod.
* CronJob: nothing once ``status.lastScheduleTime`` is set (that activation has
  fired; the next one is in the future, and a run has no clock); otherwise the Job
  of the first activation after its creationTimestamp, unless a Job of that name
  exists, the CronJob is suspended, or concurrencyPolicy Forbid meets an active Job.
* StatefulSet: each missing ordinal of ``[start, start + replicas)``; a pod of the
  set that Succeeded or Failed is deleted and recreated under the same name.
* DaemonSet: one pod per eligible node that has no running pod of the set.

All workloads together create at most ``MAX_CREATED_PODS`` pods (``api.limits``);
a larger count is an InputError naming the workload and the field that asks for it,
raised while deciding, before a pod is built (a Job with parallelism 2,000,000,000 is valid
upstream, where the controller creates pods in batches over time).

Pods that Succeeded or Failed are never counted as active; pods being deleted
(deletionTimestamp set) are not active either. Decisions are made once, in input
order, before anything is created (an orphan is adopted by the first controller
that matches it); creation draws names and UIDs in input order. Pure apart from
the ``NameGenerator`` of the ``PodFactory``.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

import msgspec

from dralab.api.base import KubeObject
from dralab.api.core import Node, Pod, Toleration
from dralab.api.errors import InputError, ObjectError
from dralab.api.limits import MAX_CREATED_PODS, too_many_pods_message
from dralab.api.workloads import CronJob, DaemonSet, Deployment, Job, ReplicaSet, StatefulSet

from .cronschedule import next_activation
from .owners import (
    controller_ref,
    is_active,
    is_being_deleted,
    is_terminal,
    owns,
    raw_field,
    raw_int,
    raw_map,
    raw_str,
    stateful_ordinal,
)
from .workloadobjects import (
    COMPLETION_INDEX,
    JOB_TRACKING_FINALIZER,
    POD_TEMPLATE_HASH,
    PodFactory,
    daemon_template,
    pinned_node,
    raw_template,
    should_run_daemon,
    template_hash,
)

__all__ = ["MAX_CREATED_PODS", "Controllers"]

T = TypeVar("T", bound=KubeObject)

# The field that asks for a workload's pods, for the message when there are too many.
_COUNT_FIELD = {"Job": "spec.parallelism", "CronJob": "spec.jobTemplate.spec.parallelism",
                "Deployment": "spec.replicas", "ReplicaSet": "spec.replicas",
                "StatefulSet": "spec.replicas", "DaemonSet": "nodes"}
DEFAULT_BACKOFF_LIMIT = 6
DEFAULT_MAX_SURGE = "25%"
_FINISHED_CONDITIONS = ("Complete", "Failed", "SuccessCriteriaMet", "FailureTarget")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _namespace(obj: KubeObject) -> str:
    return obj.metadata.namespace or "default"


class OwnerIndex(Generic[T]):
    """Objects of one kind (pods, ReplicaSets, Jobs) by controller reference, so a
    controller finds what it owns without scanning its whole namespace. An orphan
    is adopted by the first controller that asks for it."""

    def __init__(self, objects: Iterable[T]) -> None:
        self.items = list(objects)
        self._by_name: dict[tuple[str, str, str], list[int]] = {}
        self._by_uid: dict[tuple[str, str], list[int]] = {}
        self._orphans: dict[str, list[int]] = {}
        self._adopter: dict[int, tuple[str, str, str]] = {}
        for i, obj in enumerate(self.items):
            namespace = _namespace(obj)
            ref = controller_ref(obj)
            if ref is None:
                self._orphans.setdefault(namespace, []).append(i)
                continue
            self._by_name.setdefault((namespace, ref.kind, ref.name), []).append(i)
            if ref.uid:
                self._by_uid.setdefault((namespace, ref.uid), []).append(i)

    def owned(self, kind: str, name: str, uid: str | None, namespace: str,
              selector: Mapping[str, Any] | None,
              member: Callable[[T], bool] | None = None) -> list[T]:
        """What controller ``kind``/``name`` owns, in input order (see ``owners.owns``);
        ``member`` further restricts what it may own (StatefulSet names)."""
        found = set(self._by_name.get((namespace, kind, name), ()))
        if uid:
            found.update(self._by_uid.get((namespace, uid), ()))
        keep = {i for i in found
                if owns(kind, name, uid, namespace, selector, self.items[i], adopt=False)
                and (member is None or member(self.items[i]))}
        me = (namespace, kind, name)
        for i in self._orphans.get(namespace, ()) if selector is not None else ():
            adopter = self._adopter.get(i)
            if adopter == me:
                keep.add(i)
            elif adopter is None and owns(kind, name, uid, namespace, selector, self.items[i]) \
                    and (member is None or member(self.items[i])):
                self._adopter[i] = me
                keep.add(i)
        return [self.items[i] for i in sorted(keep)]


# --- what to create ---------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class _Replicas:
    count: int


@dataclass(frozen=True, slots=True)
class _NewReplicaSet:
    template: dict[str, Any]
    selector: Mapping[str, Any] | None
    count: int


@dataclass(frozen=True, slots=True)
class _JobPods:
    """``count`` pods, or one pod per entry of ``indexes`` (Indexed)."""

    count: int
    indexes: tuple[int, ...] | None
    template: dict[str, Any]


@dataclass(frozen=True, slots=True)
class _CronActivation:
    scheduled: datetime
    job_template: dict[str, Any]
    pods: _JobPods


@dataclass(frozen=True, slots=True)
class _Ordinals:
    ordinals: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class _DaemonNodes:
    nodes: tuple[str, ...]
    template: dict[str, Any]


_Plan = _Replicas | _NewReplicaSet | _JobPods | _CronActivation | _Ordinals | _DaemonNodes


def _size(plan: _Plan) -> int:
    """How many pods ``plan`` creates."""
    if isinstance(plan, _Replicas | _NewReplicaSet):
        return plan.count
    if isinstance(plan, _CronActivation):
        return _size(plan.pods)
    if isinstance(plan, _JobPods):
        return plan.count if plan.indexes is None else len(plan.indexes)
    if isinstance(plan, _Ordinals):
        return len(plan.ordinals)
    return len(plan.nodes)


def _too_many(obj: KubeObject, count: int, total: int) -> InputError:
    return ObjectError(obj.kind or "", _namespace(obj), obj.name,
                       f"{_COUNT_FIELD.get(obj.kind, 'spec')}: "
                       f"{too_many_pods_message(count, total)}")


def _digits(text: str) -> bool:
    """ASCII decimal digits only: str.isdigit() also takes '٣' and '²' (int() refuses those)."""
    return text.isascii() and text.isdigit()


def _replicas(value: int | None) -> int:
    return 1 if value is None else max(value, 0)


def _same_template(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Pod templates equal apart from the pod-template-hash label (upstream's
    EqualIgnoreHash); a ``creationTimestamp: null`` kubectl prints is no difference."""
    def normal(template: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(template)
        meta = out.get("metadata")
        meta = dict(meta) if isinstance(meta, Mapping) else {}
        labels = meta.get("labels")
        if isinstance(labels, Mapping):
            meta["labels"] = {k: v for k, v in labels.items() if k != POD_TEMPLATE_HASH}
        if not meta.get("labels"):
            meta.pop("labels", None)
        if meta.get("creationTimestamp") is None:
            meta.pop("creationTimestamp", None)
        if meta:
            out["metadata"] = meta
        else:
            out.pop("metadata", None)
        return out
    return normal(a) == normal(b)


def _max_surge(deploy: Deployment, replicas: int) -> int:
    value = raw_field(deploy, "spec", "strategy", "rollingUpdate", "maxSurge")
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    text = value if isinstance(value, str) else DEFAULT_MAX_SURGE
    if not (text.endswith("%") and text[:-1].isascii() and text[:-1].isdigit()):
        text = DEFAULT_MAX_SURGE
    return math.ceil(int(text[:-1]) * replicas / 100)


def _surge_step(replicas: int, surge: int, total: int, current: int) -> int:
    """The new ReplicaSet's replicas after one RollingUpdate step (upstream's
    NewRSNewReplicas): grow while all ReplicaSets together stay within
    ``replicas + surge``, never beyond ``replicas``."""
    room = replicas + surge - total
    if room <= 0:
        return current
    return current + max(0, min(room, replicas - current))


class _Indexes:
    """A set of completion indexes: the intervals of ``status.completedIndexes`` (so
    "0-1999999999" costs one entry, not two billion) and single indexes (of succeeded
    pods)."""

    def __init__(self, spans: Iterable[tuple[int, int]] = ()) -> None:
        merged: list[tuple[int, int]] = []
        for low, high in sorted(spans):
            if merged and low <= merged[-1][1] + 1:
                merged[-1] = (merged[-1][0], max(merged[-1][1], high))
            else:
                merged.append((low, high))
        self._spans = merged  # inclusive, sorted, disjoint
        self._points: set[int] = set()

    def add(self, index: int) -> None:
        self._points.add(index)

    def _span_end(self, index: int) -> int | None:
        at = bisect.bisect_right(self._spans, (index, math.inf)) - 1
        if at >= 0 and self._spans[at][0] <= index <= self._spans[at][1]:
            return self._spans[at][1] + 1
        return None

    def end_of(self, index: int) -> int | None:
        """One past the run of indexes from ``index`` in the set, or None if it is not."""
        end = self._span_end(index)
        if end is None and index in self._points:
            end = index + 1
        return end

    def __contains__(self, index: object) -> bool:
        return isinstance(index, int) and self.end_of(index) is not None

    def __len__(self) -> int:
        return sum(b - a + 1 for a, b in self._spans) + sum(
            1 for i in self._points if self._span_end(i) is None)


def _parse_indexes(text: Any, limit: int) -> _Indexes:
    """``status.completedIndexes`` ("1,3-5") below ``limit``; unreadable parts are skipped."""
    spans: list[tuple[int, int]] = []
    for part in text.split(",") if isinstance(text, str) else ():
        first, dash, last = part.strip().partition("-")
        if not _digits(first) or (dash and not _digits(last)):
            continue
        low, high = int(first), min(int(last) if dash else int(first), limit - 1)
        if low <= high:
            spans.append((low, high))
    return _Indexes(spans)


def _free_indexes(completions: int, done: _Indexes, held: set[int], want: int) -> list[int]:
    """The ``want`` lowest indexes below ``completions`` neither done nor held; steps over
    a run of done indexes at once."""
    out: list[int] = []
    index = 0
    while index < completions and len(out) < want:
        end = done.end_of(index)
        if end is not None:
            index = end
            continue
        if index not in held:
            out.append(index)
        index += 1
    return out


def _completion_index(pod: Pod) -> int | None:
    value = pod.metadata.annotations.get(COMPLETION_INDEX) or \
        pod.metadata.labels.get(COMPLETION_INDEX)
    return int(value) if value is not None and _digits(value) else None


def _job_finished(job: KubeObject) -> bool:
    conditions = raw_field(job, "status", "conditions")
    return isinstance(conditions, list) and any(
        isinstance(c, Mapping) and c.get("type") in _FINISHED_CONDITIONS
        and c.get("status") == "True" for c in conditions)


def _uid_list(job: KubeObject, which: str) -> set[str]:
    value = raw_field(job, "status", "uncountedTerminatedPods", which)
    return {u for u in value if isinstance(u, str)} if isinstance(value, list) else set()


def _parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


class Controllers:
    """The decisions of every controller in ``objects`` (made at construction) and
    the objects that carry them out (``create``). ``nodes`` are the cluster's nodes,
    for DaemonSets."""

    def __init__(self, objects: Sequence[KubeObject], nodes: Sequence[Node]) -> None:
        self.nodes = list(nodes)
        self._plans: dict[int, _Plan] = {}
        self._replaced: set[int] = set()
        self._rs_targets: dict[int, int] = {}
        # (kind, namespace, name, spec.selector) of the controllers ``create`` made (a
        # Deployment's new ReplicaSet): the scheduler's store keeps their selectors.
        self.created_controllers: list[tuple[str, str, str, Any]] = []
        self.pods = OwnerIndex(o for o in objects if isinstance(o, Pod))
        self.replica_sets = OwnerIndex(o for o in objects if isinstance(o, ReplicaSet))
        self.jobs = OwnerIndex(o for o in objects if isinstance(o, Job))
        self.pod_names = {(_namespace(p), p.name) for p in self.pods.items}
        self.job_names = {(_namespace(j), j.name) for j in self.jobs.items}
        # Deployments first: they set the replicas of their ReplicaSets.
        for obj in objects:
            if isinstance(obj, Deployment):
                self._plan_deployment(obj)
        planners: dict[type, Callable[[Any], _Plan | None]] = {
            ReplicaSet: self._plan_replica_set, Job: self._plan_job,
            CronJob: self._plan_cron_job, StatefulSet: self._plan_stateful_set,
            DaemonSet: self._plan_daemon_set,
        }
        for obj in objects:
            planner = planners.get(type(obj))
            plan = planner(obj) if planner is not None else None
            if plan is not None:
                self._plans[id(obj)] = plan
        total = 0
        for obj in objects:
            plan = self._plans.get(id(obj))
            if plan is not None:
                total += _size(plan)
                if total > MAX_CREATED_PODS:
                    raise _too_many(obj, _size(plan), total)

    def replaced(self, pod: Pod) -> bool:
        """Whether a controller deletes ``pod`` to recreate it (it is left out)."""
        return id(pod) in self._replaced

    # --- decisions ------------------------------------------------------------------
    def _owned_pods(self, kind: str, obj: KubeObject, selector: Mapping[str, Any] | None,
                    member: Callable[[Pod], bool] | None = None) -> list[Pod]:
        return self.pods.owned(kind, obj.name, obj.metadata.uid, _namespace(obj), selector,
                               member)

    def _plan_deployment(self, deploy: Deployment) -> None:
        namespace = _namespace(deploy)
        selector = deploy.spec.selector
        sets = self.replica_sets.owned("Deployment", deploy.name, deploy.metadata.uid,
                                       namespace, selector)
        template = raw_template(deploy, "spec", "template")
        new = next((rs for rs in sets
                    if _same_template(raw_template(rs, "spec", "template"), template)), None)
        old = [rs for rs in sets if rs is not new]
        replicas = _replicas(deploy.spec.replicas)
        # ReplicaSets default to one replica when spec.replicas is absent.
        total = sum(_replicas(rs.spec.replicas) for rs in sets)
        current = _replicas(new.spec.replicas) if new is not None else 0
        recreate = raw_str(deploy, "spec", "strategy", "type") == "Recreate"
        if recreate:
            old_running = any(is_active(p) for rs in old
                              for p in self._owned_pods("ReplicaSet", rs, rs.spec.selector))
            target = current if old_running else replicas
            for rs in old:  # scaled to zero first; their pods are on their way out
                self._rs_targets[id(rs)] = 0
        elif current > replicas:
            target = replicas
        else:
            target = _surge_step(replicas, _max_surge(deploy, replicas), total, current)
        paused = raw_field(deploy, "spec", "paused") is True
        if new is None:
            # A paused Deployment rolls nothing out: no new ReplicaSet.
            if not paused and target > 0:
                self._plans[id(deploy)] = _NewReplicaSet(template, selector, target)
        elif not paused or not any(_replicas(rs.spec.replicas) for rs in old):
            # Paused, it still scales a lone active ReplicaSet to its replicas (the
            # surge step gives exactly that when no old ReplicaSet has replicas).
            self._rs_targets[id(new)] = target

    def _plan_replica_set(self, rs: ReplicaSet) -> _Plan | None:
        target = self._rs_targets.get(id(rs), _replicas(rs.spec.replicas))
        active = sum(1 for p in self._owned_pods("ReplicaSet", rs, rs.spec.selector)
                     if is_active(p))
        return _Replicas(target - active) if target > active else None

    def _job_selector(self, job: Job) -> Mapping[str, Any] | None:
        selector = raw_map(job, "spec", "selector")
        if selector is not None:
            return selector
        # The API server generates this selector for Jobs without one.
        uid = job.metadata.uid
        return {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}} if uid else None

    def _job_plan(self, job: KubeObject, spec: Any, pods: list[Pod],
                  template: dict[str, Any]) -> _JobPods | None:
        """What Job ``job`` (``spec`` its JobSpec; ``pods`` the pods it owns) creates."""
        if spec.suspend or _job_finished(job):
            return None
        uncounted_ok, uncounted_failed = _uid_list(job, "succeeded"), _uid_list(job, "failed")

        def fresh(pod: Pod) -> bool:  # terminated, not yet counted in the Job's status
            return JOB_TRACKING_FINALIZER in pod.metadata.finalizers and \
                (pod.metadata.uid or "") not in uncounted_ok | uncounted_failed

        failed = (raw_int(job, "status", "failed") or 0) + len(uncounted_failed) + sum(
            1 for p in pods if p.status.phase == "Failed" and fresh(p))
        limit = spec.backoff_limit if spec.backoff_limit is not None else DEFAULT_BACKOFF_LIMIT
        if raw_field(job, "spec", "backoffLimitPerIndex") is None and failed > limit:
            return None
        active = [p for p in pods if is_active(p)]
        replace_failed_only = raw_str(job, "spec", "podReplacementPolicy") == "Failed" or (
            raw_str(job, "spec", "podReplacementPolicy") is None
            and raw_field(job, "spec", "podFailurePolicy") is not None)
        terminating = sum(1 for p in pods if not is_terminal(p) and is_being_deleted(p)) \
            if replace_failed_only else 0
        parallelism = 1 if spec.parallelism is None else max(spec.parallelism, 0)
        completions = spec.completions
        indexed = spec.completion_mode == "Indexed" and completions is not None
        if indexed:
            done = _parse_indexes(raw_field(job, "status", "completedIndexes"), completions)
            for pod in pods:
                if pod.status.phase == "Succeeded" and (
                        i := _completion_index(pod)) is not None and i < completions:
                    done.add(i)
            succeeded = len(done)
        else:
            succeeded = (raw_int(job, "status", "succeeded") or 0) + len(uncounted_ok) + sum(
                1 for p in pods if p.status.phase == "Succeeded" and fresh(p))
        if completions is None:
            want = len(active) if succeeded > 0 else parallelism
        else:
            want = max(0, min(completions - succeeded, parallelism))
        missing = want - len(active) - terminating
        if missing <= 0:
            return None
        if not indexed:
            return _JobPods(missing, None, template)
        assert completions is not None
        held = {i for p in pods if not is_terminal(p) and (i := _completion_index(p)) is not None}
        # One past the limit is enough to be refused; the rest are never looked for.
        free = _free_indexes(completions, done, held, min(missing, MAX_CREATED_PODS + 1))
        return _JobPods(0, tuple(free), template) if free else None

    def _plan_job(self, job: Job) -> _Plan | None:
        pods = self._owned_pods("Job", job, self._job_selector(job))
        return self._job_plan(job, job.spec, pods, raw_template(job, "spec", "template"))

    def _plan_cron_job(self, cron: CronJob) -> _Plan | None:
        if cron.spec.suspend or raw_str(cron, "status", "lastScheduleTime"):
            return None
        after = _parse_time(cron.metadata.creation_timestamp) or _EPOCH
        try:
            scheduled = next_activation(cron.spec.schedule, after)
        except (ValueError, OverflowError):
            return None  # a schedule that never fires creates nothing
        namespace = _namespace(cron)
        job_name = f"{cron.name}-{int(scheduled.timestamp()) // 60}"
        if (namespace, job_name) in self.job_names:
            return None
        if raw_str(cron, "spec", "concurrencyPolicy") == "Forbid":
            jobs = self.jobs.owned("CronJob", cron.name, cron.metadata.uid, namespace, None)
            listed = raw_field(cron, "status", "active")
            if any(not _job_finished(j) for j in jobs) or (isinstance(listed, list) and listed):
                return None
        job_template = raw_template(cron, "spec", "jobTemplate")
        spec_raw = job_template.get("spec")
        pod_template = spec_raw.get("template") if isinstance(spec_raw, Mapping) else None
        template = dict(pod_template) if isinstance(pod_template, Mapping) else {}
        pods = self.pods.owned("Job", job_name, None, namespace, None)
        # The Job does not exist yet: nothing about it is finished or counted.
        unborn = Job(api_version="batch/v1", kind="Job")
        plan = self._job_plan(unborn, cron.spec.job_template.spec, pods, template)
        if plan is None:
            return None
        return _CronActivation(scheduled, job_template, plan)

    def _plan_stateful_set(self, sts: StatefulSet) -> _Plan | None:
        namespace, name = _namespace(sts), sts.name
        pods = self._owned_pods("StatefulSet", sts, sts.spec.selector,
                                lambda p: stateful_ordinal(name, p.name) is not None)
        by_ordinal: dict[int, Pod] = {}
        for pod in pods:
            ordinal = stateful_ordinal(name, pod.name)
            if ordinal is not None:
                by_ordinal.setdefault(ordinal, pod)
        start = max(raw_int(sts, "spec", "ordinals", "start") or 0, 0)
        replicas = _replicas(sts.spec.replicas)
        if replicas > MAX_CREATED_PODS:
            raise _too_many(sts, replicas, replicas)
        wanted: list[int] = []
        for ordinal in range(start, start + replicas):
            member = by_ordinal.get(ordinal)
            if member is None:
                # A pod of another owner under that name blocks the ordinal.
                if (namespace, f"{name}-{ordinal}") not in self.pod_names:
                    wanted.append(ordinal)
            elif is_terminal(member) and not is_being_deleted(member):
                self._replaced.add(id(member))
                wanted.append(ordinal)
        return _Ordinals(tuple(wanted)) if wanted else None

    def _plan_daemon_set(self, ds: DaemonSet) -> _Plan | None:
        template = daemon_template(raw_template(ds, "spec", "template"))
        raw_tolerations = template["spec"]["tolerations"]
        try:
            tolerations = [msgspec.convert(t, Toleration) for t in raw_tolerations]
        except msgspec.ValidationError:
            tolerations = []
        spec = ds.spec.template.spec
        affinity = spec.affinity.node_affinity if spec.affinity else None
        required = affinity.required_during_scheduling_ignored_during_execution \
            if affinity else None
        running = {pinned_node(p) for p in self._owned_pods("DaemonSet", ds, ds.spec.selector)
                   if not is_terminal(p)}
        nodes = tuple(n.name for n in self.nodes
                      if n.name not in running
                      and should_run_daemon(n, spec.node_selector, required, tolerations))
        return _DaemonNodes(nodes, template) if nodes else None

    # --- creation -------------------------------------------------------------------
    def create(self, obj: KubeObject, factory: PodFactory) -> Iterator[dict[str, Any]]:
        """The pod documents ``obj``'s controller creates (none for other kinds)."""
        plan = self._plans.get(id(obj))
        if plan is None:
            return
        if isinstance(plan, _NewReplicaSet):
            owner = factory.head(obj)
            head, template = factory.replica_set_head(owner, dict(plan.template),
                                                      plan.selector)
            meta = head["metadata"]
            self.created_controllers.append((head["kind"], meta["namespace"], meta["name"],
                                             head["spec"]["selector"]))
            for _ in range(plan.count):
                yield factory.replica_pod(head, template)
        elif isinstance(plan, _Replicas):
            head = factory.head(obj)
            template = raw_template(obj, "spec", "template")
            for _ in range(plan.count):
                yield factory.replica_pod(head, template)
        elif isinstance(plan, _JobPods):
            yield from _job_pods(factory, factory.head(obj), plan)
        elif isinstance(plan, _CronActivation):
            owner = factory.head(obj)
            head = factory.cron_job_head(owner, plan.job_template, plan.scheduled)
            yield from _job_pods(factory, head, plan.pods)
        elif isinstance(plan, _Ordinals):
            assert isinstance(obj, StatefulSet)
            head = factory.head(obj)
            template = raw_template(obj, "spec", "template")
            revision = f"{obj.name}-{template_hash(template)}"
            for ordinal in plan.ordinals:
                yield factory.stateful_pod(head, template, ordinal, obj.spec.service_name,
                                           revision)
        else:
            head = factory.head(obj)
            revision = template_hash(plan.template)
            for node in plan.nodes:
                yield factory.daemon_pod(head, plan.template, node, revision)


def _job_pods(factory: PodFactory, head: Mapping[str, Any], plan: _JobPods
              ) -> Iterator[dict[str, Any]]:
    if plan.indexes is None:
        for _ in range(plan.count):
            yield factory.job_pod(head, plan.template, None)
    else:
        for index in plan.indexes:
            yield factory.job_pod(head, plan.template, index)
