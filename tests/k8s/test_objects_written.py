"""Objects written: the pods and claims dralab prints against what the real components wrote.

For every scenario run (``runs.py``; the same runs the scheduling comparison reads), each Pod and
ResourceClaim of the namespace is compared as a whole, byte for byte once encoded, after
dropping what only the server sets: ``uid``, ``resourceVersion``, ``creationTimestamp`` and
``managedFields``, and the values (not the presence) of timestamps and of the random
``shareID`` of a consumable-capacity allocation. Claims generated with a
random name suffix (from templates by the resourceclaim controller, for extended resources by
the scheduler) are matched by owner and pod claim name, and their names are replaced by that
key wherever they appear (the claim's name, the pod's ``resourceClaimStatuses`` and
``extendedResourceClaimStatus``). dralab reads the pods as the server stored them on create,
so their uids, spec defaults and admission-added fields are the server's on both sides.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pytest

from .api import Client
from .controlplane import ControlPlane
from .runs import CONFIGS, Config, runs_for
from .test_scheduling import KNOWN_AS_WRITTEN, NO_KUBELET
from .written import compare_run, normalized

# Differences accepted with their reason: (configuration, scenario, object) -> reason.
KNOWN: dict[tuple[str, str, str], str] = {
    (config.name, "cpu_preemption", key): NO_KUBELET
    for config in CONFIGS for key in ("Pod high", "ResourceClaim high/gpu",
                                      "ResourceClaim low/gpu")
} | {
    (config.name, "cpu_preemption", "Pod low"):
        "dralab drops a preemption victim's resourceClaimStatuses when it releases the claims "
        "(its generated claim is deleted at once); upstream keeps them until the pod object "
        "is gone. " + NO_KUBELET
    for config in CONFIGS
} | {
    ("dra-gates-switched", "taint_rule", f"ResourceClaim {claim}"):
        "kube-scheduler v1.36.2 ignores DeviceTaintRules (kubernetes/kubernetes#139651); see "
        "test_scheduling.KNOWN"
    for claim in ("r1/gpu", "r2/gpu")
} | {
    ("dra-gates-switched", "taint_rule", "Pod r2"):
        "kube-scheduler v1.36.2 ignores DeviceTaintRules (kubernetes/kubernetes#139651)",
}


@pytest.mark.parametrize("config", CONFIGS, ids=[c.name for c in CONFIGS])
def test_objects_written_match_the_real_components(
        config: Config, control_plane_with: Callable[[Mapping[str, bool]], ControlPlane],
        client_for: Callable[[ControlPlane], Client]) -> None:
    runs = runs_for(config, control_plane_with, client_for)
    compared = sum(len(normalized(run.server)) for run in runs)
    differing = {(config.name, run.name, key): lines for run in runs
                 for key, lines in compare_run(run).items()}
    print(f"\nobjects written [{config.name}]: {compared} pods and claims compared, "
          f"{compared - len(differing)} identical, {len(differing)} differ "
          f"({sum(1 for k in differing if k in KNOWN)} known)")
    for (_, scenario, key), lines in sorted(differing.items()):
        print(f"{scenario}: {key}:" + "".join(f"\n  {line}" for line in lines))
    unexplained = {k: v for k, v in differing.items() if k not in KNOWN}
    assert not unexplained, unexplained
    # Something real was compared: generated claims with allocations and reservations.
    allocated = [o for run in runs for o in run.server if o.get("kind") == "ResourceClaim"
                 and (o.get("status") or {}).get("reservedFor")]
    assert len(allocated) >= len(runs)


@pytest.mark.parametrize("config", CONFIGS, ids=[c.name for c in CONFIGS])
def test_claims_written_from_manifests_as_written(
        config: Config, control_plane_with: Callable[[Mapping[str, bool]], ControlPlane],
        client_for: Callable[[ControlPlane], Client]) -> None:
    """The claims dralab writes when given the manifests as a user wrote them: the same claims
    (API defaults included), apart from the uids of pods that never went through the server."""
    runs = [run.as_written() for run in runs_for(config, control_plane_with, client_for)]
    compared = sum(len(normalized(run.server, claims_only=True)) for run in runs)
    differing = {(config.name, run.name): lines for run in runs
                 if (lines := compare_run(run, claims_only=True))}
    print(f"\nclaims written from manifests as written [{config.name}]: {compared} claims, "
          f"{len(differing)} scenarios differ")
    for (_, scenario), found in sorted(differing.items()):
        print(f"{scenario}:" + "".join(f"\n  {key}: {line}" for key, lines in found.items()
                                       for line in lines))
    unexplained = {k: v for k, v in differing.items() if k not in KNOWN_AS_WRITTEN}
    assert not unexplained, unexplained
