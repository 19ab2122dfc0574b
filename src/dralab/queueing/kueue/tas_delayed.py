"""Kueue's delayed topology assignment: TAS behind a ProvisioningRequest admission check.

A ClusterQueue's admission checks apply to its flavors (``spec.admissionChecks``: all
of them; ``admissionChecksStrategy.admissionChecks[].onFlavors``: those listed, all if
none). Where a check run by the ProvisioningRequest controller covers a TAS flavor, a
pod set placed on it gets no topology when its workload first reserves quota -- the
nodes are yet to be provisioned -- but ``delayedTopologyRequest: Pending``
(pkg/scheduler/flavorassigner/tas_flavorassigner.go podSetTopologyRequest). Once every
admission check of the workload is Ready, the scheduler's second pass places those pod
sets on the flavors already assigned, without asking quota again, and marks them Ready
(pkg/workload NeedsSecondPass); a pass that does not place them leaves them Pending
(a SecondPassFailed event) for the next one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from dralab.queueing.kueue.tas import TASPodSetRequests
from dralab.queueing.kueue.tas_assign import TASContext, TASProvider
from dralab.queueing.kueue.tas_replace import SecondPass
from dralab.queueing.model import PodSetRequest

__all__ = ["PROVISIONING_REQUEST_CONTROLLER", "assign_delayed", "delayed_flavors",
           "needs_delayed_pass"]

PROVISIONING_REQUEST_CONTROLLER = "kueue.x-k8s.io/provisioning-request"
READY = "Ready"


def delayed_flavors(flavors: Iterable[str], checks: Mapping[str, Sequence[str]],
                    controllers: Mapping[str, str]) -> frozenset[str]:
    """A ClusterQueue's flavors a ProvisioningRequest check covers (Kueue's
    flavorsWithProvReqAdmissionCheck): ``checks`` maps each of its admission checks to
    the flavors it names (none: every flavor), ``controllers`` each AdmissionCheck to
    its controllerName (a check without an object covers nothing)."""
    every = frozenset(flavors)
    covered: set[str] = set()
    for check, on in checks.items():
        if controllers.get(check) == PROVISIONING_REQUEST_CONTROLLER:
            covered |= set(on) if on else every
    return frozenset(covered)


def needs_delayed_pass(provider: TASProvider, key: str) -> bool:
    """Kueue's needsSecondPassForDelayedAssignment: the workload has admission checks,
    all Ready, and a pod set whose topology is still Pending."""
    states = provider.check_states.get(key, {})
    return bool(states) and all(s == READY for s in states.values()) \
        and "Pending" in provider.delayed.get(key, {}).values()


def assign_delayed(provider: TASProvider, key: str, context: TASContext,
                   pod_sets: Sequence[PodSetRequest], flavors: Mapping[str, list[str]],
                   counts: Mapping[str, int]) -> SecondPass:
    """The Pending pod sets placed on their assigned flavors (FindTopologyAssignments-
    ForWorkload, the cluster as it is; ``context`` delays nothing), with the admitted
    pod counts; on success charged and marked Ready."""
    pending = provider.delayed[key]
    requests: dict[str, list[TASPodSetRequests]] = {}
    for pod_set in pod_sets:
        if pending.get(pod_set.name) != "Pending":
            continue
        flavor, request, error = context.pod_set_request(
            pod_set, counts.get(pod_set.name, pod_set.count), flavors.get(pod_set.name, []))
        if flavor is None or request is None:
            return SecondPass(None, pod_set.name, error)
        requests.setdefault(flavor, []).append(request)
    found, failure = context.find(requests, False)
    if failure is not None:
        return SecondPass(None, failure[0], failure[1])
    current = provider.topology_assignments.get(key, {})
    topology = {**current, **found}
    provider.admitted(key, pod_sets, flavors, topology, previous=current)
    for name in found:
        pending[name] = READY
    return SecondPass(topology)
