"""Cluster Autoscaler's GetPodsToMove table, ported whole.

kubernetes/autoscaler, branch cluster-autoscaler-release-1.37 at
a16f0ae8b5578f09604371c75e0cad29ed794e59, cluster-autoscaler/simulator/drain_test.go,
TestGetPodsToMove (41 cases, ids = upstream's ``desc``; two upstream cases share the
desc "Kube-system no pdb system pods blocking", the second is suffixed " (2)").

As upstream: the default rules with --skip-nodes-with-system-pods,
--skip-nodes-with-local-storage, --skip-nodes-with-custom-controller-pods and a
one-hour blocking-system-pod timeout, after the case's own rules; controller listers
only when the case gives ReplicationControllers or ReplicaSets (then the DaemonSet
ds, Job job and StatefulSet ss in namespace default too); the case's
PodDisruptionBudgets; the clock at 2020-12-18 17:00 UTC.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from dralab.api.core import Pod
from dralab.autoscale.drainability import (
    BLOCK_DRAIN,
    DRAIN_OK,
    ControllerListers,
    DeleteOptions,
    DrainContext,
    DrainRule,
    DrainStatus,
    PodDisruptionBudget,
    default_rules,
    pods_to_move,
)

from .builders_down import TEST_TIME
from .builders_down import drain_pod as _pod
from .builders_down import empty_dir as _empty_dir

SAFE = "cluster-autoscaler.kubernetes.io/safe-to-evict"
HOUR = 3600.0
RS_OLD = ("rs", "ReplicaSet", "extensions/v1beta1")
RC = ("rc", "ReplicationController", "core/v1")

UNREPLICATED = _pod("unreplicatedPod", "ns")
MANIFEST = _pod("manifestPod", "kube-system", annotations={"kubernetes.io/config.mirror":
                                                            "something"})
SYSTEM = _pod("systemPod", "kube-system", owner=RS_OLD)
DRAINABLE_SYSTEM = _pod("systemPod", "kube-system", owner=RS_OLD, created=-HOUR - 60)
BLOCKING_SYSTEM = _pod("systemPod", "kube-system", owner=RS_OLD, created=-HOUR + 60)
LOCAL_STORAGE = _pod("localStoragePod", "ns", owner=RS_OLD,
                     volumes=[{"name": "empty-vol", "emptyDir": {}}])
NON_LOCAL_STORAGE = _pod("nonLocalStoragePod", "ns", owner=RS_OLD,
                         volumes=[{"name": "my-repo", "gitRepo": {"repository": "my-repo"}}])
PDB_POD = _pod("pdbPod", "ns", owner=RS_OLD, labels={"critical": "true"})
RESTRICTIVE = PodDisruptionBudget("ns", {"critical": "true"}, 0)
PERMISSIVE = PodDisruptionBudget("ns", {"critical": "true"}, 1)
TERMINATED = _pod("terminatedPod", "ns", owner=RS_OLD, deleted=-30 - 60)
TERMINATING = _pod("terminatingPod", "ns", owner=RS_OLD, deleted=-30 + 60)
RC_POD = _pod(owner=RC)
KS_RC_POD = _pod(namespace="kube-system", owner=RC, labels={"k8s-app": "bar"})
DS_POD = _pod(owner=("ds", "DaemonSet", "apps/v1"))
CDS_POD = _pod(owner=("ds", "CustomDaemonSet", "crd/v1"),
               annotations={"cluster-autoscaler.kubernetes.io/daemonset-pod": "true"})
JOB_POD = _pod(owner=("job", "Job", "batch/v1"))
SS_POD = _pod(owner=("ss", "StatefulSet", "apps/v1"))
RS_POD = _pod(owner=("rs", "ReplicaSet", "apps/v1"))
RS_POD_DELETED = _pod(owner=("rs", "ReplicaSet", "apps/v1"), deleted=-HOUR)
EMPTY_DIR_ALL_MATCHING = _pod(
    owner=RC, annotations={"cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes":
                           "scratch-1,scratch-2,scratch-3"},
    volumes=[_empty_dir("scratch-1"), _empty_dir("scratch-2"), _empty_dir("scratch-3")])
TERMINAL = _pod(restart="OnFailure", phase="Succeeded")
LONG_TERMINATING = _pod(owner=RC, deleted=-60, restart="OnFailure", grace=0, phase="Unknown")
LONG_TERMINATING_EXTENDED = _pod(owner=RC, deleted=-180, restart="OnFailure", grace=360,
                                 phase="Unknown")
FAILED = _pod(restart="Never", phase="Failed")
EVICTED = _pod(restart="Always", phase="Failed")
SAFE_POD = _pod(annotations={SAFE: "true"})
KS_SAFE_POD = _pod(namespace="kube-system", annotations={SAFE: "true"})
EMPTY_DIR_SAFE = _pod(annotations={SAFE: "true"}, volumes=[_empty_dir("scratch")])
ON_COMPLETION = _pod(annotations={SAFE: "on-completion"})
EMPTY_PDB = PodDisruptionBudget("", None, 0)
KS_PDB = PodDisruptionBudget("kube-system", {"k8s-app": "bar"}, 1)
KS_FAKE_PDB = PodDisruptionBudget("kube-system", {"k8s-app": "foo"}, 1)
DEFAULT_PDB = PodDisruptionBudget("default", {"k8s-app": "PDB-managed pod"}, 1)


def _always_drain(ctx: DrainContext, pod: Pod) -> DrainStatus:
    return DrainStatus(DRAIN_OK)


def _never_drain(ctx: DrainContext, pod: Pod) -> DrainStatus:
    return DrainStatus(BLOCK_DRAIN, (), "UnexpectedError", "nope")


def _cant_decide(ctx: DrainContext, pod: Pod) -> DrainStatus:
    return DrainStatus()


RCS = {("default", "rc"): 5}
KS_RCS = {("kube-system", "rc"): 5}
RSS = {("default", "rs"): 5}

# (desc, pods, pdbs, rcs, replica sets (None: no listers unless rcs), rules,
#  want pods, want DaemonSet pods, want on-completion pods, want blocking (pod, reason))
Case = tuple[str, list[Pod], list[PodDisruptionBudget], dict[tuple[str, str], int] | None,
             dict[tuple[str, str], int] | None, list[DrainRule], list[Pod], list[Pod],
             list[Pod], tuple[Pod, str] | None]
CASES: list[Case] = [
    ("Unreplicated pod", [UNREPLICATED], [], None, None, [], [], [], [],
     (UNREPLICATED, "NotReplicated")),
    ("Replicated pod", [RS_POD], [], None, None, [], [RS_POD], [], [], None),
    ("Manifest pod", [MANIFEST], [], None, None, [], [], [], [], None),
    ("DaemonSet pod", [RS_POD, MANIFEST, DS_POD], [], None, None, [], [RS_POD], [DS_POD], [],
     None),
    ("Kube-system", [SYSTEM], [], None, None, [], [], [], [], (SYSTEM, "UnmovableKubeSystemPod")),
    ("Kube-system no pdb system pods blocking", [BLOCKING_SYSTEM], [], None, None, [], [], [], [],
     (BLOCKING_SYSTEM, "UnmovableKubeSystemPod")),
    ("Kube-system no pdb system pods allowing", [DRAINABLE_SYSTEM], [], None, None, [],
     [DRAINABLE_SYSTEM], [], [], None),
    ("Kube-system no pdb system pods blocking (2)", [DRAINABLE_SYSTEM, BLOCKING_SYSTEM], [], None,
     None, [], [DRAINABLE_SYSTEM], [], [], (BLOCKING_SYSTEM, "UnmovableKubeSystemPod")),
    ("Local storage", [LOCAL_STORAGE], [], None, None, [], [], [], [],
     (LOCAL_STORAGE, "LocalStorageRequested")),
    ("Non-local storage", [NON_LOCAL_STORAGE], [], None, None, [], [NON_LOCAL_STORAGE], [], [],
     None),
    ("Pdb blocking", [PDB_POD], [RESTRICTIVE], None, None, [], [], [], [],
     (PDB_POD, "NotEnoughPdb")),
    ("Pdb allowing", [PDB_POD], [PERMISSIVE], None, None, [], [PDB_POD], [], [], None),
    ("Pod termination", [RS_POD, TERMINATED, TERMINATING], [], None, None, [],
     [RS_POD, TERMINATING], [], [], None),
    ("Rule allows", [UNREPLICATED], [], None, None, [_always_drain], [UNREPLICATED], [], [],
     None),
    ("Second rule allows", [UNREPLICATED], [], None, None, [_cant_decide, _always_drain],
     [UNREPLICATED], [], [], None),
    ("Rule blocks", [RS_POD], [], None, None, [_never_drain], [], [], [],
     (RS_POD, "UnexpectedError")),
    ("Second rule blocks", [RS_POD], [], None, None, [_cant_decide, _never_drain], [], [], [],
     (RS_POD, "UnexpectedError")),
    ("Undecisive rule fallback to default logic: Unreplicated pod", [UNREPLICATED], [], None,
     None, [_cant_decide], [], [], [], (UNREPLICATED, "NotReplicated")),
    ("Undecisive rule fallback to default logic: Replicated pod", [RS_POD], [], None, None,
     [_cant_decide], [RS_POD], [], [], None),
    ("RC-managed pod", [RC_POD], [], RCS, None, [], [RC_POD], [], [], None),
    ("DS-managed pod", [DS_POD], [], None, None, [], [], [DS_POD], [], None),
    ("DS-managed pod by a custom Daemonset", [CDS_POD], [], None, None, [], [], [CDS_POD], [],
     None),
    ("Job-managed pod", [JOB_POD], [], RCS, None, [], [JOB_POD], [], [], None),
    ("SS-managed pod", [SS_POD], [], RCS, None, [], [SS_POD], [], [], None),
    ("RS-managed pod", [RS_POD], [], None, RSS, [], [RS_POD], [], [], None),
    ("RS-managed pod that is being deleted", [RS_POD_DELETED], [], None, RSS, [], [], [], [],
     None),
    ("pod with EmptyDir and SafeToEvictLocalVolumesKey annotation with matching values",
     [EMPTY_DIR_ALL_MATCHING], [], RCS, None, [], [EMPTY_DIR_ALL_MATCHING], [], [], None),
    ("failed pod", [FAILED], [], None, None, [], [FAILED], [], [], None),
    ("long terminating pod with 0 grace period", [LONG_TERMINATING], [], RCS, None, [], [], [],
     [], None),
    ("long terminating pod with extended grace period", [LONG_TERMINATING_EXTENDED], [], RCS,
     None, [], [LONG_TERMINATING_EXTENDED], [], [], None),
    ("evicted pod", [EVICTED], [], None, None, [], [EVICTED], [], [], None),
    ("pod in terminal state", [TERMINAL], [], None, None, [], [TERMINAL], [], [], None),
    ("pod with PodSafeToEvict annotation", [SAFE_POD], [], None, None, [], [SAFE_POD], [], [],
     None),
    ("kube-system pod with PodSafeToEvict annotation", [KS_SAFE_POD], [], None, None, [],
     [KS_SAFE_POD], [], [], None),
    ("pod with EmptyDir and PodSafeToEvict annotation", [EMPTY_DIR_SAFE], [], None, None, [],
     [EMPTY_DIR_SAFE], [], [], None),
    ("empty PDB with RC-managed pod", [RC_POD], [EMPTY_PDB], RCS, None, [], [RC_POD], [], [],
     None),
    ("kube-system PDB with matching kube-system pod", [KS_RC_POD], [KS_PDB], KS_RCS, None, [],
     [KS_RC_POD], [], [], None),
    ("kube-system PDB with non-matching kube-system pod", [KS_RC_POD], [KS_FAKE_PDB], KS_RCS,
     None, [], [], [], [], (KS_RC_POD, "UnmovableKubeSystemPod")),
    ("kube-system PDB with default namespace pod", [RC_POD], [KS_PDB], RCS, None, [], [RC_POD],
     [], [], None),
    ("default namespace PDB with matching labels kube-system pod", [KS_RC_POD], [DEFAULT_PDB],
     KS_RCS, None, [], [], [], [], (KS_RC_POD, "UnmovableKubeSystemPod")),
    ("pod with safe-to-evict=on-completion annotation", [ON_COMPLETION], [], None, None, [], [],
     [], [ON_COMPLETION], None),
]

OPTIONS = DeleteOptions(skip_nodes_with_system_pods=True, skip_nodes_with_local_storage=True,
                        skip_nodes_with_custom_controller_pods=True,
                        blocking_system_pod_disruption_timeout=HOUR)


def _listers(rcs: dict[tuple[str, str], int] | None, rss: dict[tuple[str, str], int] | None
             ) -> ControllerListers | None:
    if rcs is None and rss is None:
        return None
    return ControllerListers(
        replication_controllers=dict(rcs or {}), replica_sets=dict(rss or {}),
        daemon_sets=frozenset({("default", "ds")}), jobs=frozenset({("default", "job")}),
        stateful_sets=frozenset({("default", "ss")}))


@pytest.mark.parametrize(("pods", "pdbs", "rcs", "rss", "rules", "want_pods", "want_ds",
                          "want_on_completion", "want_blocking"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_get_pods_to_move(pods: list[Pod], pdbs: list[PodDisruptionBudget],
                          rcs: dict[tuple[str, str], int] | None,
                          rss: dict[tuple[str, str], int] | None, rules: Sequence[DrainRule],
                          want_pods: list[Pod], want_ds: list[Pod],
                          want_on_completion: list[Pod],
                          want_blocking: tuple[Pod, str] | None) -> None:
    ctx = DrainContext(pdbs, TEST_TIME, _listers(rcs, rss))
    got = pods_to_move(pods, [*rules, *default_rules(OPTIONS)], ctx)
    assert got.pods == want_pods
    assert got.daemon_set_pods == want_ds
    assert got.on_completion_pods == want_on_completion
    blocking = None if got.blocking is None else got.blocking[:2]
    assert blocking == want_blocking
    # Upstream's error: exactly when a pod blocks, with its message.
    assert got.blocking is None or got.blocking[2] != ""
