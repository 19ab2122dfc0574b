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

from collections.abc import Iterable
from pathlib import Path

from ._version import __version__
from .allocator import Allocated, AllocationError, AllocationOutcome, Unschedulable, allocate
from .api.base import KubeObject, ObjectMeta, UnknownObject
from .api.core import Node, Pod, PriorityClass
from .api.errors import DralabError, ErrorType, FieldError, InputError, LoadError
from .api.features import FeatureGates
from .api.io import dump, load
from .api.io import read_documents as _read_documents
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
from .scheduler import ScheduleResult, explain_pod, schedule
from .sim.results import SimulationResult
from .sim.scenario import Scenario
from .validation.check import Problem
from .validation.check import validate_documents as _validate_documents
from .validation.check import validate_objects as _validate_objects

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
    "schedule",
    "simulate",
    "validate",
]


def validate(source: str | Path | Iterable[str | Path | KubeObject],
             features: FeatureGates | None = None) -> list[Problem]:
    """Every problem the Kubernetes 1.37 API server would report, in input order.

    ``source`` is a path (file, directory, ``-``), several paths, or objects
    already loaded or built in code. Returns ``[]`` when everything is valid.
    Raises LoadError only when a file cannot be read at all.
    """
    items = [source] if isinstance(source, str | Path) else list(source)
    objects = [o for o in items if isinstance(o, KubeObject)]
    paths = [str(p) for p in items if not isinstance(p, KubeObject)]
    problems = _validate_documents(_read_documents(paths), features) if paths else []
    return problems + _validate_objects(objects, features)


def simulate(scenario: Scenario | str | Path | None = None) -> SimulationResult:
    """Run a scenario (a ``Scenario``, a Scenario file, or None for the built-in one).

    Returns the metrics of every compared mode; ``result.modes[i].samples_records()``
    and ``pods_records()`` are plain records (``pandas.DataFrame(...)``-ready). Pure and
    deterministic for the scenario's seed; writes nothing (see ``dralab.report``).
    """
    from .sim.default import default_scenario
    from .sim.scenario import load_scenario
    from .sim.simulate import simulate as run

    if scenario is None:
        scenario = default_scenario()
    elif not isinstance(scenario, Scenario):
        scenario = load_scenario(str(scenario))
    return run(scenario)
