"""Every scenario of ``scenarios.py`` run once per gate configuration, on the real control plane
and in dralab; the scheduling and objects-written comparisons both read these runs, so the
real components do the work once per session.

A configuration is a set of ``--feature-gates`` for every component (empty: the binaries'
defaults). dralab gets the gate values the API server reports, so that it answers for the
server's version rather than for its own 1.37 defaults.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from dralab.api.features import FeatureGates

from .api import ApiError, Client
from .conftest import dralab_gates_for, gates_of
from .controlplane import ControlPlane
from .scenario import (
    CLUSTER_SCOPED,
    RUNNING,
    Observed,
    Tracker,
    observe,
    run_in_dralab,
    run_on_server,
)
from .scenarios import SCENARIOS

__all__ = ["CONFIGS", "Config", "ScenarioRun", "in_namespace", "runs_for",
           "scheduling_differences"]

Obj = dict[str, Any]


@dataclass(frozen=True)
class Config:
    name: str
    gates: Mapping[str, bool] = field(default_factory=lambda: MappingProxyType({}))


# The server's defaults, and a second control plane with DRA gates turned the other way:
# beta gates that 1.36 has on switched off (partitionable devices, consumable capacity,
# binding conditions) and the off-by-default DeviceTaintRule API switched on. Gates that
# dralab models as locked in 1.37 (DRAExtendedResource, DRAResourceClaimDeviceStatus) stay
# as they are: dralab cannot describe a cluster that has them off.
CONFIGS = (
    Config("server-defaults"),
    Config("dra-gates-switched", MappingProxyType({
        "DRAPartitionableDevices": False, "DRAConsumableCapacity": False,
        "DRADeviceBindingConditions": False, "DRADeviceTaintRules": True})),
)


@dataclass
class ScenarioRun:
    """One scenario on one configuration: the input, what the server holds afterwards and what
    dralab printed (or why either refused the input)."""

    name: str
    namespace: str
    objects: list[Obj]
    stored: list[Obj] = field(default_factory=list)
    server: list[Obj] = field(default_factory=list)
    dralab: list[Obj] = field(default_factory=list)
    server_error: str = ""
    dralab_error: str = ""
    # dralab on the scenario's manifests as a user wrote them (namespaced ones in the
    # namespace): no server defaults, no uids, fields of disabled gates still there.
    dralab_written: list[Obj] = field(default_factory=list)
    dralab_written_error: str = ""

    def as_written(self) -> ScenarioRun:
        """This run with dralab's answer on the manifests as written in place of its answer on
        the objects the server stored."""
        return dataclasses.replace(self, dralab=self.dralab_written,
                                   dralab_error=self.dralab_written_error)


_RUNS: dict[str, list[ScenarioRun]] = {}


def in_namespace(objects: list[Obj], namespace: str) -> list[Obj]:
    """The manifests with their namespaced objects placed in ``namespace``."""
    out = copy.deepcopy(objects)
    for obj in out:
        if obj["kind"] not in CLUSTER_SCOPED:
            obj["metadata"]["namespace"] = namespace
    return out


def run_scenario(kube: Client, gates: FeatureGates, name: str,
                 build: Callable[[str], list[Obj]], *,
                 namespace_labels: Mapping[str, str] | None = None,
                 as_written: bool = True) -> ScenarioRun:
    """``build``'s objects on the server (in a fresh namespace with ``namespace_labels``)
    and in dralab on what the server stored; with ``as_written`` also in dralab on the
    manifests as written. The namespace is deleted afterwards."""
    namespace = f"t-{uuid.uuid4().hex[:10]}"
    metadata: dict[str, Any] = {"name": namespace}
    if namespace_labels:
        metadata["labels"] = dict(namespace_labels)
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": metadata})
    run = ScenarioRun(name, namespace, build(namespace))
    tracker = Tracker(kube)
    try:
        try:
            done = run_on_server(kube, tracker, namespace, run.objects)
        except ApiError as err:
            run.server_error = str(err)
            return run
        run.stored, run.server = done.stored, done.after
        try:
            run.dralab = run_in_dralab(run.stored, gates)
        except AssertionError as err:
            run.dralab_error = str(err)
        if not as_written:
            return run
        try:
            # Pods running before the others came are the server's (a manifest cannot say
            # "already running"); the rest as written.
            written = [o for o in run.objects if not o.get(RUNNING)]
            run.dralab_written = run_in_dralab(
                [*in_namespace(written, namespace), *done.running], gates)
        except AssertionError as err:
            run.dralab_written_error = str(err)
    finally:
        tracker.cleanup()
        with contextlib.suppress(ApiError):
            kube.delete("v1", "Namespace", namespace)
    return run


def runs_for(config: Config, plane_with: Callable[[Mapping[str, bool]], ControlPlane],
             client_for: Callable[[ControlPlane], Client]) -> list[ScenarioRun]:
    """The runs of every scenario on ``config``'s control plane (made once per session)."""
    if config.name not in _RUNS:
        kube = client_for(plane_with(config.gates))
        gates = dralab_gates_for(gates_of(kube))
        _RUNS[config.name] = [run_scenario(kube, gates, name, build)
                              for name, build in SCENARIOS.items()]
    return _RUNS[config.name]


def scheduling_differences(run: ScenarioRun) -> list[str]:
    """What differs in placements, devices, reservations, pending messages and events."""
    if run.server_error:
        return [f"the API server refused the scenario: {run.server_error}"]
    if run.dralab_error:
        return [f"dralab refused the objects: {run.dralab_error}"]
    server, dralab = observe(run.server), observe(run.dralab)
    out = _diff_lines(server, dralab)
    for pod, message in sorted(server.events.items()):
        mine = dralab.messages.get(pod, "").partition(": ")[2]
        if message != mine:
            out.append(f"FailedScheduling event of {pod}: server {message!r}, dralab {mine!r}")
    for pod in sorted(set(dralab.messages) - set(server.events)):
        out.append(f"{pod}: dralab reports it pending, the server has no FailedScheduling event")
    return out


def _diff_lines(server: Observed, dralab: Observed) -> list[str]:
    theirs, mine = list(server.lines()), list(dralab.lines())
    return ([f"server only: {line}" for line in theirs if line not in mine]
            + [f"dralab only: {line}" for line in mine if line not in theirs])
