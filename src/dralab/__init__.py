"""dralab: an engine and simulator for GPU scheduling with Kubernetes DRA.

The curated public API. Everything else lives in private-by-convention layers
(``dralab.api``, ``dralab.cel``, ``dralab.allocator``, ...) whose names may change.

Typical use::

    import dralab
    objects = dralab.load("cluster/")          # files, directories, "-"
    problems = dralab.validate(objects)        # [] when the API server would accept all
    print(dralab.dump(objects, "yaml"))        # a v1 List, kubectl style
    claims = [o for o in objects if isinstance(o, dralab.ResourceClaim) and not o.allocated]
    outcome = dralab.allocate(claims, "node-1", objects)   # Allocated | Unschedulable | ...
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from pathlib import Path

    from .allocator import Allocated, AllocationError, AllocationOutcome, Unschedulable, allocate
    from .api.base import KubeObject, ObjectMeta, UnknownObject
    from .api.core import Node, Pod, PriorityClass
    from .api.errors import DralabError, ErrorType, FieldError, InputError, LoadError
    from .api.features import FeatureGates
    from .api.io import dump, load
    from .api.quantity import Quantity, QuantityError, parse_quantity
    from .api.resource import (
        DeviceClass,
        DeviceTaintRule,
        ResourceClaim,
        ResourceClaimTemplate,
        ResourceSlice,
    )
    from .api.semver import Semver, SemverError, parse_semver
    from .api.workloads import CronJob, DaemonSet, Deployment, Job, ReplicaSet, StatefulSet
    from .replay.run import ReplayRun
    from .scheduler import ScheduleResult, explain_pod, schedule
    from .sim.results import SimulationResult
    from .sim.scenario import Scenario
    from .validation.check import Problem

__all__ = [
    "Allocated",
    "AllocationError",
    "AllocationOutcome",
    "CronJob",
    "DaemonSet",
    "Deployment",
    "DeviceClass",
    "DeviceTaintRule",
    "DralabError",
    "ErrorType",
    "FeatureGates",
    "FieldError",
    "InputError",
    "Job",
    "KubeObject",
    "LoadError",
    "Node",
    "ObjectMeta",
    "Pod",
    "PriorityClass",
    "Problem",
    "Quantity",
    "QuantityError",
    "ReplayRun",
    "ReplicaSet",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "ResourceSlice",
    "Scenario",
    "ScheduleResult",
    "Semver",
    "SemverError",
    "SimulationResult",
    "StatefulSet",
    "UnknownObject",
    "Unschedulable",
    "__version__",
    "allocate",
    "dump",
    "explain_pod",
    "load",
    "parse_quantity",
    "parse_semver",
    "replay_trace",
    "scenario",
    "schedule",
    "simulate",
    "validate",
]

# ``import dralab`` stays cheap: each public name is imported from its layer on first
# use (PEP 562), so a script that only loads YAML never pays for numpy or the scheduler.
_LAZY: dict[str, str] = {
    "allocate": "dralab.allocator",
    "Allocated": "dralab.allocator",
    "AllocationError": "dralab.allocator",
    "AllocationOutcome": "dralab.allocator",
    "CronJob": "dralab.api.workloads",
    "DaemonSet": "dralab.api.workloads",
    "Deployment": "dralab.api.workloads",
    "DeviceClass": "dralab.api.resource",
    "DeviceTaintRule": "dralab.api.resource",
    "DralabError": "dralab.api.errors",
    "dump": "dralab.api.io",
    "ErrorType": "dralab.api.errors",
    "explain_pod": "dralab.scheduler",
    "FeatureGates": "dralab.api.features",
    "FieldError": "dralab.api.errors",
    "InputError": "dralab.api.errors",
    "Job": "dralab.api.workloads",
    "KubeObject": "dralab.api.base",
    "load": "dralab.api.io",
    "LoadError": "dralab.api.errors",
    "Node": "dralab.api.core",
    "ObjectMeta": "dralab.api.base",
    "parse_quantity": "dralab.api.quantity",
    "parse_semver": "dralab.api.semver",
    "Pod": "dralab.api.core",
    "PriorityClass": "dralab.api.core",
    "Problem": "dralab.validation.check",
    "Quantity": "dralab.api.quantity",
    "QuantityError": "dralab.api.quantity",
    "ReplayRun": "dralab.replay.run",
    "ReplicaSet": "dralab.api.workloads",
    "ResourceClaim": "dralab.api.resource",
    "ResourceClaimTemplate": "dralab.api.resource",
    "ResourceSlice": "dralab.api.resource",
    "Scenario": "dralab.sim.scenario",
    "schedule": "dralab.scheduler",
    "ScheduleResult": "dralab.scheduler",
    "Semver": "dralab.api.semver",
    "SemverError": "dralab.api.semver",
    "SimulationResult": "dralab.sim.results",
    "StatefulSet": "dralab.api.workloads",
    "UnknownObject": "dralab.api.base",
    "Unschedulable": "dralab.allocator",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'dralab' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def validate(source: str | Path | Iterable[str | Path | KubeObject],
             features: FeatureGates | None = None) -> list[Problem]:
    """Every problem the Kubernetes 1.37 API server would report, in input order.

    ``source`` is a path (file, directory, ``-``), several paths, or objects
    already loaded or built in code. Returns ``[]`` when everything is valid.
    Raises LoadError only when a file cannot be read at all.
    """
    from .api.base import KubeObject
    from .api.io import read_documents
    from .validation.check import validate_documents, validate_objects

    items = [source] if isinstance(source, str | os.PathLike) else list(source)
    objects = [o for o in items if isinstance(o, KubeObject)]
    paths = [os.fspath(p) for p in items if not isinstance(p, KubeObject)]
    problems = validate_documents(read_documents(paths), features) if paths else []
    return problems + validate_objects(objects, features)


def scenario(document: Mapping[str, Any] | None = None, *, base_dir: str | Path = ".",
             source: str = "<scenario>") -> Scenario:
    """A ``Scenario`` built in code: ``document`` is what a Scenario file holds, as a
    mapping (``{"apiVersion": ..., "kind": "Scenario", "spec": {...}}``), or just its
    ``spec``; None gives the built-in scenario. Checked exactly as a file is
    (ScenarioError names the field); ``base_dir`` anchors relative ``template`` and
    ``fleet.file`` paths.
    """
    from .sim.default import default_scenario
    from .sim.scenario import parse_scenario
    from .sim.spec import API_VERSION

    if document is None:
        return default_scenario()
    if "spec" not in document and "kind" not in document:
        document = {"apiVersion": API_VERSION, "kind": "Scenario",
                    "metadata": {"name": "scenario"}, "spec": dict(document)}
    return parse_scenario(document, source, os.fspath(base_dir))


def replay_trace(workload: str = "default", policy: str = "FGD", seed: int | None = None,
                 trace_dir: str | Path | None = None) -> ReplayRun:
    """Replay one workload of the Alibaba GPU trace 2023 with one node-choice policy on
    one seed (the FGD paper's protocol; ``dralab replay`` runs many). ``workload`` is
    ``default`` or a trace name (``multi-gpu-20``, ...); ``policy`` a registered name
    (``FGD``, ``BestFit``, ...); ``seed`` defaults to the paper's first. The run's
    per-event arrays and ``curve(...)`` give fragmentation and allocation over arrivals.
    """
    from .replay.run import SEED0, replay

    return replay(workload, policy, SEED0 if seed is None else seed, trace_dir)


def simulate(scenario: Scenario | str | Path | None = None) -> SimulationResult:
    """Run a scenario (a ``Scenario``, a Scenario file, or None for the built-in one).

    Returns the metrics of every compared mode; ``result.modes[i].samples_records()``
    and ``pods_records()`` are plain records (``pandas.DataFrame(...)``-ready). Pure and
    deterministic for the scenario's seed; writes nothing (see ``dralab.report``).
    """
    from .sim.default import default_scenario
    from .sim.scenario import Scenario, load_scenario
    from .sim.simulate import simulate as run

    if scenario is None:
        scenario = default_scenario()
    elif not isinstance(scenario, Scenario):
        scenario = load_scenario(os.fspath(scenario))
    return run(scenario)
