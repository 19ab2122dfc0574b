"""The essentials of Kueue's validation (its webhooks and CRD schemas), with field paths.

Not every rule Kueue enforces: those whose breach would make admission meaningless
or ambiguous. Each problem is ``(field path, message)``; the caller names the file
and object.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from dralab.api.base import KubeObject
from dralab.api.durations import parse_go_duration

from .objects import (
    CONFIG_GROUP,
    ClusterQueue,
    Cohort,
    KueueConfiguration,
    KueueResourceGroup,
    KueueTopology,
    KueueWorkload,
    LocalQueue,
)
from .schema import schema_problems

__all__ = ["kueue_problems"]

_STRATEGIES = ("StrictFIFO", "BestEffortFIFO")
_WITHIN_CQ = ("Never", "LowerPriority", "LowerOrNewerEqualPriority")
_RECLAIM = ("Never", "LowerPriority", "Any")
_BORROW = ("Never", "LowerPriority")
_STOP = ("None", "Hold", "HoldAndDrain")
_ADMISSION_MODES = ("UsageBasedAdmissionFairSharing", "NoAdmissionFairSharing")
# Per version and field, as Kueue's CRDs list them (v1beta1 also keeps its old names).
_FUNGIBILITY: dict[str, dict[str, tuple[str, ...]]] = {
    "v1beta1": {"whenCanBorrow": ("MayStopSearch", "TryNextFlavor", "Borrow"),
                "whenCanPreempt": ("MayStopSearch", "TryNextFlavor", "Preempt")},
    "v1beta2": {"whenCanBorrow": ("MayStopSearch", "TryNextFlavor"),
                "whenCanPreempt": ("MayStopSearch", "TryNextFlavor")}}
_PREFERENCES = ("BorrowingOverPreemption", "PreemptionOverBorrowing")
_PRIORITY_REF_GROUPS = ("kueue.x-k8s.io", "scheduling.k8s.io")
_PRIORITY_REF_KINDS = ("WorkloadPriorityClass", "PriorityClass")
# Kueue's pkg/config/validation.go validStrategySets: the whole list must be one of
# these, in this order (field.NotSupported of the list).
_STRATEGY_SETS = (("LessThanOrEqualToFinalShare",), ("LessThanInitialShare",),
                  ("LessThanOrEqualToFinalShare", "LessThanInitialShare"))
Problem = tuple[str, str]


def _unsupported(path: str, value: str, allowed: Sequence[str]) -> Problem:
    shown = ", ".join(f'"{a}"' for a in allowed)
    return path, f'Unsupported value: "{value}": supported values: {shown}'


def _version(obj: KubeObject) -> str:
    return obj.api_version.rpartition("/")[2]


def _groups(groups: Sequence[KueueResourceGroup], has_cohort: bool, path: str
            ) -> Iterator[Problem]:
    seen_resources: set[str] = set()
    seen_flavors: set[str] = set()
    for gi, group in enumerate(groups):
        gpath = f"{path}.resourceGroups[{gi}]"
        if not group.covered_resources:
            yield f"{gpath}.coveredResources", "Required value"
        for ri, name in enumerate(group.covered_resources):
            if name in seen_resources:
                yield f"{gpath}.coveredResources[{ri}]", f'Duplicate value: "{name}"'
            seen_resources.add(name)
        for fi, flavor in enumerate(group.flavors):
            fpath = f"{gpath}.flavors[{fi}]"
            if not flavor.name:
                yield f"{fpath}.name", "Required value"
            elif flavor.name in seen_flavors:
                yield f"{fpath}.name", f'Duplicate value: "{flavor.name}"'
            seen_flavors.add(flavor.name)
            names = [r.name for r in flavor.resources]
            if names != list(group.covered_resources):
                yield (f"{fpath}.resources", "Invalid value: must have the same resources, "
                       "in the same order, as coveredResources")
            for ri, quota in enumerate(flavor.resources):
                qpath = f"{fpath}.resources[{ri}]"
                nominal = quota.nominal_quota
                if nominal is None:
                    yield f"{qpath}.nominalQuota", "Required value"
                elif nominal.sign() < 0:
                    yield f"{qpath}.nominalQuota", "Invalid value: must be greater than or " \
                                                   "equal to 0"
                for name, limit in (("borrowingLimit", quota.borrowing_limit),
                                    ("lendingLimit", quota.lending_limit)):
                    if limit is None:
                        continue
                    if limit.sign() < 0:
                        yield f"{qpath}.{name}", "Invalid value: must be greater than or " \
                                                 "equal to 0"
                    elif not has_cohort:
                        yield f"{qpath}.{name}", "Invalid value: must be nil when cohort is " \
                                                 "empty"
                if quota.lending_limit is not None and nominal is not None \
                        and quota.lending_limit > nominal:
                    yield (f"{qpath}.lendingLimit", "Invalid value: must be less than or "
                           "equal to the nominalQuota")


def _cluster_queue(cq: ClusterQueue) -> Iterator[Problem]:
    spec = cq.spec
    version = _version(cq)
    if version == "v1beta1" and spec.cohort_name is not None:
        yield "spec.cohortName", "unknown field in kueue.x-k8s.io/v1beta1 (use spec.cohort)"
    if version == "v1beta2" and spec.cohort is not None:
        yield "spec.cohort", "unknown field in kueue.x-k8s.io/v1beta2 (use spec.cohortName)"
    yield from _groups(spec.resource_groups, cq.cohort_ref is not None, "spec")
    if spec.queueing_strategy and spec.queueing_strategy not in _STRATEGIES:
        yield _unsupported("spec.queueingStrategy", spec.queueing_strategy, _STRATEGIES)
    if spec.stop_policy and spec.stop_policy not in _STOP:
        yield _unsupported("spec.stopPolicy", spec.stop_policy, _STOP)
    scope = spec.admission_scope
    if scope is not None:
        if not scope.admission_mode:
            yield "spec.admissionScope.admissionMode", "Required value"
        elif scope.admission_mode not in _ADMISSION_MODES:
            yield _unsupported("spec.admissionScope.admissionMode", scope.admission_mode,
                               _ADMISSION_MODES)
    pre = spec.preemption
    if pre is not None:
        if pre.within_cluster_queue and pre.within_cluster_queue not in _WITHIN_CQ:
            yield _unsupported("spec.preemption.withinClusterQueue",
                               pre.within_cluster_queue, _WITHIN_CQ)
        if pre.reclaim_within_cohort and pre.reclaim_within_cohort not in _RECLAIM:
            yield _unsupported("spec.preemption.reclaimWithinCohort",
                               pre.reclaim_within_cohort, _RECLAIM)
        borrow = pre.borrow_within_cohort
        if borrow is not None and borrow.policy and borrow.policy not in _BORROW:
            yield _unsupported("spec.preemption.borrowWithinCohort.policy",
                               borrow.policy, _BORROW)
        if borrow is not None and pre.reclaim_within_cohort in (None, "Never") \
                and borrow.policy not in (None, "Never"):
            yield ("spec.preemption", "Invalid value: reclaimWithinCohort=Never and "
                   "borrowWithinCohort.Policy!=Never")
    fungible = spec.flavor_fungibility
    allowed = _FUNGIBILITY.get(version, _FUNGIBILITY["v1beta2"])
    if fungible is not None:
        for name, value in (("whenCanBorrow", fungible.when_can_borrow),
                            ("whenCanPreempt", fungible.when_can_preempt)):
            if value and value not in allowed[name]:
                yield _unsupported(f"spec.flavorFungibility.{name}", value, allowed[name])
        if fungible.preference is not None:
            if fungible.preference not in _PREFERENCES:
                yield _unsupported("spec.flavorFungibility.preference", fungible.preference,
                                   _PREFERENCES)
            # The CRD's rule, read after its defaults (MayStopSearch, TryNextFlavor).
            if (fungible.when_can_borrow or "MayStopSearch") != "TryNextFlavor" \
                    or (fungible.when_can_preempt or "TryNextFlavor") != "TryNextFlavor":
                yield ("spec.flavorFungibility", "Invalid value: preference can only be set "
                       "when both whenCanBorrow and whenCanPreempt are TryNextFlavor")
    if spec.fair_sharing is not None and spec.fair_sharing.weight is not None \
            and spec.fair_sharing.weight.sign() < 0:
        yield "spec.fairSharing.weight", "Invalid value: must be greater than or equal to 0"


def _admission_fair_sharing(config: KueueConfiguration) -> Iterator[Problem]:
    """Kueue's validateAdmissionFairSharing (after defaulting: a missing sampling
    interval is 5m), and the durations' syntax (metav1.Duration's unmarshalling)."""
    afs = config.admission_fair_sharing
    if afs is None:
        return
    for name, text, positive in (("usageHalfLifeTime", afs.usage_half_life_time, False),
                                 ("usageSamplingInterval", afs.usage_sampling_interval, True)):
        if not text:
            continue
        try:
            seconds = parse_go_duration(text)
        except ValueError:
            yield f"admissionFairSharing.{name}", \
                f'Invalid value: "{text}": time: invalid duration "{text}"'
            continue
        if seconds < 0:  # a zero sampling interval is defaulted to 5m, not refused
            yield f"admissionFairSharing.{name}", (
                f'Invalid value: "{text}": '
                + ("must be greater than 0" if positive else "must be greater than or equal to 0"))
    for resource, weight in sorted(afs.resource_weights.items()):
        if weight < 0:
            yield (f"admissionFairSharing.resourceWeights[{resource}]",
                   f"Invalid value: {weight:g}: must be greater than or equal to 0")


def _configuration(config: KueueConfiguration) -> Iterator[Problem]:
    yield from _admission_fair_sharing(config)
    fair = config.fair_sharing
    if fair is not None and fair.preemption_strategies \
            and tuple(fair.preemption_strategies) not in _STRATEGY_SETS:
        # Go prints the refused list with %#v; the supported sets comma-joined.
        shown = ", ".join(f'"{s}"' for s in fair.preemption_strategies)
        supported = ", ".join(f'"{",".join(s)}"' for s in _STRATEGY_SETS)
        yield ("fairSharing.preemptionStrategies",
               f"Unsupported value: []v1beta2.PreemptionStrategy{{{shown}}}: "
               f"supported values: {supported}")
    # Kueue's validateResourceTransformations: one transformation per input (the
    # strategy's values are the decoder's)
    inputs: set[str] = set()
    for ti, transformation in enumerate(config.resources.transformations):
        if transformation.input in inputs:
            yield (f"resources.transformations[{ti}].input",
                   f'Duplicate value: "{transformation.input}"')
        inputs.add(transformation.input)
    seen: dict[str, int] = {}
    for mi, mapping in enumerate(config.resources.device_class_mappings):
        path = f"resources.deviceClassMappings[{mi}]"
        if not mapping.name:
            yield f"{path}.name", "Required value"
        if not mapping.device_class_names:
            yield f"{path}.deviceClassNames", "Required value"
        for ci, name in enumerate(mapping.device_class_names):
            if name in seen and seen[name] != mi:
                yield (f"{path}.deviceClassNames[{ci}]",
                       f'Duplicate value: "{name}": a DeviceClass maps to one resource only')
            seen.setdefault(name, mi)
        kinds = set()
        for si, source in enumerate(mapping.sources):
            spath = f"{path}.sources[{si}]"
            set_ = [s for s in (source.counter, source.capacity) if s is not None]
            if len(set_) != 1:
                yield spath, "Invalid value: exactly one of counter, capacity must be set"
                continue
            kind = "counter" if source.counter is not None else "capacity"
            kinds.add(kind)
            chosen = set_[0]
            for field, value in (("name", chosen.name), ("driver", chosen.driver)):
                if not value:
                    yield f"{spath}.{kind}.{field}", "Required value"
        if len(kinds) > 1:
            yield f"{path}.sources", "Invalid value: counter and capacity sources cannot be mixed"


def kueue_problems(obj: KubeObject) -> list[Problem]:
    """The problems Kueue would refuse ``obj`` for (empty: none found)."""
    out = schema_problems(obj.kind or type(obj).KIND, _version(obj), obj.raw) \
        if not obj.api_version.startswith(CONFIG_GROUP) else []
    return out + _kind_problems(obj)


def _kind_problems(obj: KubeObject) -> list[Problem]:
    if isinstance(obj, ClusterQueue):
        return list(_cluster_queue(obj))
    if isinstance(obj, Cohort):
        # A parent cycle (a self-parent too) is not refused: Kueue's webhook accepts
        # it and marks the ClusterQueues under it inactive (``hierarchy``).
        return list(_groups(obj.spec.resource_groups, True, "spec"))
    if isinstance(obj, LocalQueue):
        out = []
        if not obj.namespace:
            out.append(("metadata.namespace", "Required value"))
        if not obj.spec.cluster_queue:
            out.append(("spec.clusterQueue", "Required value"))
        if obj.spec.stop_policy and obj.spec.stop_policy not in _STOP:
            out.append(_unsupported("spec.stopPolicy", obj.spec.stop_policy, _STOP))
        return out
    if isinstance(obj, KueueTopology):
        levels = [level.node_label for level in obj.spec.levels]
        out = [(f"spec.levels[{i}].nodeLabel", "Required value")
               for i, label in enumerate(levels) if not label]
        if not levels:
            out.append(("spec.levels", "Required value"))
        out += [(f"spec.levels[{i}].nodeLabel", f'Duplicate value: "{label}"')
                for i, label in enumerate(levels) if label and label in levels[:i]]
        return out
    if isinstance(obj, KueueWorkload):
        out = []
        if not obj.spec.pod_sets:
            out.append(("spec.podSets", "Required value"))
        # podSets[].count's range is the schema's (schema.py).
        ref = obj.spec.priority_class_ref
        if ref is not None:
            if ref.group not in _PRIORITY_REF_GROUPS:
                out.append(_unsupported("spec.priorityClassRef.group", ref.group,
                                        _PRIORITY_REF_GROUPS))
            if ref.kind not in _PRIORITY_REF_KINDS:
                out.append(_unsupported("spec.priorityClassRef.kind", ref.kind,
                                        _PRIORITY_REF_KINDS))
        return out
    if isinstance(obj, KueueConfiguration):
        return list(_configuration(obj))
    if not obj.name and obj.kind != "Configuration":
        return [("metadata.name", "Required value")]
    return []
