"""Cluster Autoscaler's drainability rule tables, ported whole.

kubernetes/autoscaler, branch cluster-autoscaler-release-1.37 at
a16f0ae8b5578f09604371c75e0cad29ed794e59, cluster-autoscaler/simulator/drainability/rules:
TestDrainable of daemonset (2), mirror (2), safetoevict (2), terminal (3),
oncompletion (4), longterminating (5), notsafetoevict (5), localstorage (8),
replicated (14: six shared cases with skipNodesWithCustomControllerPods true and
false, and the two custom-controller cases), system (7), pdb (3), replicacount (17)
and rules (7); cluster-autoscaler/utils/drain/drain_test.go TestIsPodLongTerminating (7).
Case ids are upstream's names (the rule's directory first). Upstream's listers,
PodDisruptionBudget tracker and fake rules become the drain context's controllers
and budgets and plain functions. Upstream's TestBlockingPodReasonFormatting (Go's
enum String()) has no counterpart: dralab's reasons are those strings.
"""

from __future__ import annotations

import pytest

from dralab.api.core import Pod
from dralab.autoscale.drainability import (
    BLOCK_DRAIN,
    DRAIN_OK,
    SKIP_DRAIN,
    UNDEFINED,
    WAIT_FOR_COMPLETION,
    ControllerListers,
    DrainContext,
    DrainRule,
    DrainStatus,
    PodDisruptionBudget,
    daemonset_rule,
    drainable,
    local_storage_rule,
    long_terminating_rule,
    mirror_rule,
    not_safe_to_evict_rule,
    on_completion_rule,
    pdb_rule,
    replica_count_rule,
    replicated_rule,
    safe_to_evict_rule,
    system_rule,
    terminal_rule,
)
from dralab.autoscale.utilization import is_long_terminating

from .builders_down import TEST_TIME
from .builders_down import drain_pod as _pod
from .builders_down import empty_dir as _empty_dir

SAFE = "cluster-autoscaler.kubernetes.io/safe-to-evict"
LOCAL = "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes"
CTX = DrainContext(now=TEST_TIME)
RC = ("rc", "ReplicationController", "core/v1")
JOB = ("job", "Job", "batch/v1")
RS = ("rs", "ReplicaSet", "apps/v1")
SS = ("ss", "StatefulSet", "apps/v1")

# (rule directory, case, rule, context, pod, want outcome)
OUTCOMES: list[tuple[str, str, DrainRule, DrainContext, Pod, str]] = [
    ("daemonset", "regular pod", daemonset_rule, CTX, _pod("pod", "ns"), UNDEFINED),
    ("daemonset", "daemonset pod", daemonset_rule, CTX,
     _pod("pod", "ns", owner=("ds", "DaemonSet", "apps/v1")), DRAIN_OK),
    ("mirror", "regular pod", mirror_rule, CTX, _pod("regularPod", "ns"), UNDEFINED),
    ("mirror", "mirror pod", mirror_rule, CTX,
     _pod("manifestPod", "kube-system", annotations={"kubernetes.io/config.mirror": "something"}),
     SKIP_DRAIN),
    ("safetoevict", "regular pod", safe_to_evict_rule, CTX, _pod("pod", "ns"), UNDEFINED),
    ("safetoevict", "safe to evict pod", safe_to_evict_rule, CTX,
     _pod(annotations={SAFE: "true"}), DRAIN_OK),
    ("terminal", "regular pod", terminal_rule, CTX, _pod("pod", "ns"), UNDEFINED),
    ("terminal", "terminal pod", terminal_rule, CTX,
     _pod(restart="OnFailure", phase="Succeeded"), DRAIN_OK),
    ("terminal", "failed pod", terminal_rule, CTX, _pod(restart="Never", phase="Failed"),
     DRAIN_OK),
    ("oncompletion", "regular pod", on_completion_rule, CTX, _pod("pod1"), UNDEFINED),
    ("oncompletion", "safe to evict on-completion pod", on_completion_rule, CTX,
     _pod("pod2", annotations={SAFE: "on-completion"}), WAIT_FOR_COMPLETION),
    ("oncompletion", "pod with true safe-to-evict annotation", on_completion_rule, CTX,
     _pod("pod3", annotations={SAFE: "true"}), UNDEFINED),
    ("oncompletion", "pod with false safe-to-evict annotation", on_completion_rule, CTX,
     _pod("pod4", annotations={SAFE: "false"}), UNDEFINED),
    ("longterminating", "regular pod", long_terminating_rule, CTX, _pod("pod", "ns"), UNDEFINED),
    ("longterminating", "long terminating pod with 0 grace period", long_terminating_rule, CTX,
     _pod(deleted=15, restart="OnFailure", grace=0, phase="Unknown"), UNDEFINED),
    ("longterminating", "expired long terminating pod with 0 grace period",
     long_terminating_rule, CTX, _pod(deleted=-60, restart="OnFailure", grace=0,
                                      phase="Unknown"), SKIP_DRAIN),
    ("longterminating", "long terminating pod with extended grace period",
     long_terminating_rule, CTX, _pod(deleted=180, restart="OnFailure", grace=360,
                                      phase="Unknown"), UNDEFINED),
    ("longterminating", "expired long terminating pod with extended grace period",
     long_terminating_rule, CTX, _pod(deleted=-720, restart="OnFailure", grace=360,
                                      phase="Unknown"), SKIP_DRAIN),
]


@pytest.mark.parametrize(("rule", "ctx", "pod", "want"), [o[2:] for o in OUTCOMES],
                         ids=[f"{o[0]}/{o[1]}" for o in OUTCOMES])
def test_drainable_outcome(rule: DrainRule, ctx: DrainContext, pod: Pod, want: str) -> None:
    """The rules whose upstream tables compare the whole status."""
    assert rule(ctx, pod) == DrainStatus(want)


SCRATCH_123 = [_empty_dir("scratch-1"), _empty_dir("scratch-2"), _empty_dir("scratch-3")]
CUSTOM = _pod(owner=("Foo", "FooController", "apps/v1"))

# (rule directory, case, rule, context, pod, want BlockingPodReason ("" none))
REASONS: list[tuple[str, str, DrainRule, DrainContext, Pod, str]] = [
    ("notsafetoevict", "pod with PodSafeToEvict annotation", not_safe_to_evict_rule, CTX,
     _pod(namespace="kube-system", annotations={SAFE: "true"}), ""),
    ("notsafetoevict", "RC-managed pod with no annotation", not_safe_to_evict_rule, CTX,
     _pod(owner=RC), ""),
    ("notsafetoevict", "RC-managed pod with PodSafeToEvict=false annotation",
     not_safe_to_evict_rule, CTX, _pod(owner=RC, annotations={SAFE: "false"}),
     "NotSafeToEvictAnnotation"),
    ("notsafetoevict", "job-managed pod with no annotation", not_safe_to_evict_rule, CTX,
     _pod(owner=JOB), ""),
    ("notsafetoevict", "job-managed pod with PodSafeToEvict=false annotation",
     not_safe_to_evict_rule, CTX, _pod(owner=JOB, annotations={SAFE: "false"}),
     "NotSafeToEvictAnnotation"),
    ("localstorage", "pod with EmptyDir", local_storage_rule, CTX,
     _pod(owner=RC, volumes=[_empty_dir("scratch")]), "LocalStorageRequested"),
    ("localstorage", "pod with EmptyDir and SafeToEvictLocalVolumesKey annotation",
     local_storage_rule, CTX,
     _pod(owner=RC, annotations={LOCAL: "scratch"}, volumes=[_empty_dir("scratch")]), ""),
    ("localstorage", "pod with EmptyDir and empty value for SafeToEvictLocalVolumesKey "
     "annotation", local_storage_rule, CTX,
     _pod(owner=RC, annotations={LOCAL: ""}, volumes=[_empty_dir("scratch")]),
     "LocalStorageRequested"),
    ("localstorage", "pod with EmptyDir and non-matching value for SafeToEvictLocalVolumesKey "
     "annotation", local_storage_rule, CTX,
     _pod(owner=RC, annotations={LOCAL: "scratch-2"}, volumes=[_empty_dir("scratch-1")]),
     "LocalStorageRequested"),
    ("localstorage", "pod with EmptyDir and SafeToEvictLocalVolumesKey annotation with matching "
     "values", local_storage_rule, CTX,
     _pod(owner=RC, annotations={LOCAL: "scratch-1,scratch-2,scratch-3"}, volumes=SCRATCH_123),
     ""),
    ("localstorage", "pod with EmptyDir and SafeToEvictLocalVolumesKey annotation with "
     "non-matching values", local_storage_rule, CTX,
     _pod(owner=RC, annotations={LOCAL: "scratch-1,scratch-2,scratch-5"}, volumes=SCRATCH_123),
     "LocalStorageRequested"),
    ("localstorage", "pod with EmptyDir and SafeToEvictLocalVolumesKey annotation with some "
     "matching values", local_storage_rule, CTX,
     _pod(owner=RC, annotations={LOCAL: "scratch-1,scratch-2"}, volumes=SCRATCH_123),
     "LocalStorageRequested"),
    ("localstorage", "pod with EmptyDir and SafeToEvictLocalVolumesKey annotation empty values",
     local_storage_rule, CTX,
     _pod(owner=RC, annotations={LOCAL: ","}, volumes=SCRATCH_123), "LocalStorageRequested"),
]

_SHARED_REPLICATED: list[tuple[str, Pod, str]] = [
    ("RC-managed pod", _pod(owner=RC), ""),
    ("Job-managed pod", _pod(owner=JOB), ""),
    ("SS-managed pod", _pod(owner=SS), ""),
    ("RS-managed pod", _pod(owner=RS), ""),
    ("RS-managed pod that is being deleted", _pod(owner=RS, deleted=-3600), ""),
    ("naked pod", _pod(), "NotReplicated"),
]
for _skip in (True, False):
    for _name, _p, _want in _SHARED_REPLICATED:
        REASONS.append(("replicated", f"{_name} with skipNodesWithCustomControllerPods:{_skip}",
                        replicated_rule(_skip), CTX, _p, _want))
REASONS += [
    ("replicated", "custom-controller-managed non-blocking pod", replicated_rule(False), CTX,
     CUSTOM, ""),
    ("replicated", "custom-controller-managed blocking pod", replicated_rule(True), CTX, CUSTOM,
     "NotReplicated"),
]

# system: bspDisruptionTimeout 1 minute.
_RC_POD = _pod(owner=RC)
_KS_RC_POD = _pod(namespace="kube-system", owner=RC, labels={"k8s-app": "bar"})
_DRAINABLE_SYSTEM = _pod("systemPod", "kube-system", owner=("rs", "ReplicaSet",
                                                             "extensions/v1beta1"),
                         created=-61)
_BLOCKING_SYSTEM = _pod("systemPod", "kube-system", owner=("rs", "ReplicaSet",
                                                            "extensions/v1beta1"),
                        created=-59)
EMPTY_PDB = PodDisruptionBudget("", None)
KS_PDB = PodDisruptionBudget("kube-system", {"k8s-app": "bar"})
KS_FAKE_PDB = PodDisruptionBudget("kube-system", {"k8s-app": "foo"})
DEFAULT_PDB = PodDisruptionBudget("default", {"k8s-app": "PDB-managed pod"})
SYSTEM = system_rule(60.0)


def _with(*pdbs: PodDisruptionBudget) -> DrainContext:
    return DrainContext(pdbs, TEST_TIME)


REASONS += [
    ("system", "empty PDB with RC-managed pod", SYSTEM, _with(EMPTY_PDB), _RC_POD, ""),
    ("system", "kube-system PDB with matching kube-system pod", SYSTEM, _with(KS_PDB),
     _KS_RC_POD, ""),
    ("system", "kube-system PDB with non-matching kube-system pod", SYSTEM, _with(KS_FAKE_PDB),
     _KS_RC_POD, "UnmovableKubeSystemPod"),
    ("system", "kube-system PDB with default namespace pod", SYSTEM, _with(KS_PDB), _RC_POD, ""),
    ("system", "default namespace PDB with matching labels kube-system pod", SYSTEM,
     _with(DEFAULT_PDB), _KS_RC_POD, "UnmovableKubeSystemPod"),
    ("system", "block non-pdb system pod existing for less than BspDisruptionTimeout", SYSTEM,
     _with(EMPTY_PDB), _BLOCKING_SYSTEM, "UnmovableKubeSystemPod"),
    ("system", "allow non-pdb system pod existing for more than BspDisruptionTimeout", SYSTEM,
     _with(KS_PDB), _DRAINABLE_SYSTEM, ""),
]

# replicacount: listers of rc (5 replicas; only where the case gives rcs), rs (5
# replicas; where it gives rss), ds, job, ss; --min-replica-count 0.
_DS = frozenset({("default", "ds")})
_JOBS = frozenset({("default", "job")})
_SS = frozenset({("default", "ss")})
WITH_RC = DrainContext(now=TEST_TIME, listers=ControllerListers(
    replication_controllers={("default", "rc"): 5}, daemon_sets=_DS, jobs=_JOBS,
    stateful_sets=_SS))
WITH_RS = DrainContext(now=TEST_TIME, listers=ControllerListers(
    replica_sets={("default", "rs"): 5}, daemon_sets=_DS, jobs=_JOBS, stateful_sets=_SS))
NEITHER = DrainContext(now=TEST_TIME, listers=ControllerListers(
    daemon_sets=_DS, jobs=_JOBS, stateful_sets=_SS))
COUNT = replica_count_rule(0)
_DS_CUSTOM = {"cluster-autoscaler.kubernetes.io/daemonset-pod": "true"}
REASONS += [
    ("replicacount", "RC-managed pod", COUNT, WITH_RC, _pod(owner=RC), ""),
    ("replicacount", "RC-managed pod with missing reference", COUNT, WITH_RC,
     _pod(owner=("missing", "ReplicationController", "core/v1")), "ControllerNotFound"),
    ("replicacount", "DS-managed pod", COUNT, NEITHER, _pod(owner=("ds", "DaemonSet", "apps/v1")),
     ""),
    ("replicacount", "DS-managed pod with missing reference", COUNT, NEITHER,
     _pod(owner=("missing", "DaemonSet", "apps/v1")), "ControllerNotFound"),
    ("replicacount", "DS-managed pod by a custom API Group", COUNT, NEITHER,
     _pod(owner=("ds", "DaemonSet", "crd/v1")), ""),
    ("replicacount", "DS-managed pod by a custom API Group with missing reference", COUNT,
     NEITHER, _pod(owner=("missing", "DaemonSet", "crd/v1")), ""),
    ("replicacount", "DS-managed pod by a custom Daemonset", COUNT, NEITHER,
     _pod(owner=("ds", "CustomDaemonSet", "crd/v1"), annotations=_DS_CUSTOM), ""),
    ("replicacount", "DS-managed pod by a custom Daemonset with missing reference", COUNT,
     NEITHER, _pod(owner=("missing", "CustomDaemonSet", "crd/v1"), annotations=_DS_CUSTOM), ""),
    ("replicacount", "Job-managed pod", COUNT, WITH_RC, _pod(owner=JOB), ""),
    ("replicacount", "Job-managed pod with missing reference", COUNT, WITH_RC,
     _pod(owner=("missing", "Job", "batch/v1")), "ControllerNotFound"),
    ("replicacount", "SS-managed pod", COUNT, WITH_RC, _pod(owner=SS), ""),
    ("replicacount", "SS-managed pod with missing reference", COUNT, WITH_RC,
     _pod(owner=("missing", "StatefulSet", "apps/v1")), "ControllerNotFound"),
    ("replicacount", "SS-managed pod by a custom API Group", COUNT, NEITHER,
     _pod(owner=("ss", "StatefulSet", "kruise/v1")), ""),
    ("replicacount", "SS-managed pod by a custom API Group with missing reference", COUNT,
     NEITHER, _pod(owner=("missing", "StatefulSet", "kruise/v1")), ""),
    ("replicacount", "RS-managed pod", COUNT, WITH_RS, _pod(owner=RS), ""),
    ("replicacount", "RS-managed pod that is being deleted", COUNT, WITH_RS,
     _pod(owner=RS, deleted=-3600), ""),
    ("replicacount", "RS-managed pod with missing reference", COUNT, WITH_RS,
     _pod(owner=("missing", "ReplicaSet", "apps/v1")), "ControllerNotFound"),
]

# pdb: MinAvailable 1, status.disruptionsAllowed 0 (as upstream leaves it).
_GOOD_POD = _pod("happy", "good", labels={"label": "true"})
_BAD_TRUE = PodDisruptionBudget("bad", {"label": "true"})
_GOOD_FALSE = PodDisruptionBudget("good", {"label": "false"})
_GOOD_TRUE = PodDisruptionBudget("good", {"label": "true"})
REASONS += [
    ("pdb", "no pdbs", pdb_rule, DrainContext(), _pod("", ""), ""),
    ("pdb", "no matching pdbs", pdb_rule, _with(_BAD_TRUE, _GOOD_FALSE), _GOOD_POD, ""),
    ("pdb", "pdb prevents scale-down", pdb_rule, _with(_BAD_TRUE, _GOOD_TRUE, _GOOD_FALSE),
     _pod("sad", "good", labels={"label": "true"}), "NotEnoughPdb"),
]


@pytest.mark.parametrize(("rule", "ctx", "pod", "want"), [r[2:] for r in REASONS],
                         ids=[f"{r[0]}/{r[1]}" for r in REASONS])
def test_drainable_blocking_reason(rule: DrainRule, ctx: DrainContext, pod: Pod,
                                   want: str) -> None:
    """The rules whose upstream tables compare the blocking reason and whether there
    is an error (BlockDrain exactly when there is a reason)."""
    status = rule(ctx, pod)
    assert status.reason == want
    assert (status.error is not None) == bool(want)
    assert (status.outcome == BLOCK_DRAIN) == bool(want)


def _fixed(status: DrainStatus) -> DrainRule:
    """rules_test.go's fakeRule."""
    def rule(ctx: DrainContext, pod: Pod) -> DrainStatus:
        return status
    return rule


_OK_OVER_BLOCK = DrainStatus(DRAIN_OK, (BLOCK_DRAIN,))
_OK_OVER_SKIP = DrainStatus(DRAIN_OK, (SKIP_DRAIN,))
_SKIP_OVER_BLOCK = DrainStatus(SKIP_DRAIN, (BLOCK_DRAIN,))
_PDB_BLOCK = DrainStatus(BLOCK_DRAIN, (), "NotEnoughPdb", None)

RULES: list[tuple[str, list[DrainStatus], DrainStatus]] = [
    ("no rules", [], DrainStatus()),
    ("first non-undefined rule returned",
     [DrainStatus(), DrainStatus(DRAIN_OK), DrainStatus(SKIP_DRAIN)], DrainStatus(DRAIN_OK)),
    ("override match", [_OK_OVER_BLOCK, _PDB_BLOCK], _OK_OVER_BLOCK),
    ("override no match", [_OK_OVER_SKIP, _PDB_BLOCK], _PDB_BLOCK),
    ("override unreachable", [DrainStatus(SKIP_DRAIN), _OK_OVER_BLOCK, _PDB_BLOCK],
     DrainStatus(SKIP_DRAIN)),
    ("multiple overrides all run", [_OK_OVER_SKIP, _SKIP_OVER_BLOCK, _PDB_BLOCK],
     _SKIP_OVER_BLOCK),
    ("multiple overrides respects order", [_SKIP_OVER_BLOCK, _OK_OVER_BLOCK, _PDB_BLOCK],
     _SKIP_OVER_BLOCK),
]


@pytest.mark.parametrize(("statuses", "want"), [r[1:] for r in RULES],
                         ids=[f"rules/{r[0]}" for r in RULES])
def test_rules_drainable(statuses: list[DrainStatus], want: DrainStatus) -> None:
    """rules_test.go TestDrainable: the first answer wins unless overridden."""
    assert drainable([_fixed(s) for s in statuses], DrainContext(), _pod("", "")) == want


# utils/drain/drain_test.go TestIsPodLongTerminating: (name, deleted, grace, want)
LONG: list[tuple[str, float | None, int | None, bool]] = [
    ("No deletion timestamp", None, 0, False),
    ("Just deleted no grace period defined", 0, None, False),
    ("Deleted for longer than PodLongTerminatingExtraThreshold with no grace period", -90, None,
     True),
    ("Just deleted with grace period defined to 0", 0, 0, False),
    ("Deleted for longer than PodLongTerminatingExtraThreshold with grace period defined to 0",
     -60, 0, True),
    ("Deleted for longer than PodLongTerminatingExtraThreshold but not longer than grace "
     "period (2 min)", -60, 120, False),
    ("Deleted for longer than grace period (2 min) and PodLongTerminatingExtraThreshold",
     -180, 120, True),
]


@pytest.mark.parametrize(("deleted", "grace", "want"), [c[1:] for c in LONG],
                         ids=[c[0] for c in LONG])
def test_is_pod_long_terminating(deleted: float | None, grace: int | None, want: bool) -> None:
    assert is_long_terminating(_pod(deleted=deleted, grace=grace), TEST_TIME) is want
