"""``dralab migrate plan``: the pilot, made concrete, from a cluster dump.

1. Pools (``pools``): the GPU node pools and the workloads that can land on each.
2. The pilot pool: the lowest-risk pool that has work to move (risk of its riskiest
   workload's class, then fewest nodes, fewest pods); pools where the device
   plugin and DRA already both advertise GPUs are blockers to fix first.
3. Platform DeviceClasses for it, named by use (``pilot``).
4. The order: a smoke-test Job (one device of the pilot class, ``nvidia-smi -L``),
   then the pool's workloads, safest first (risk, then fewest pods).
5. The converted manifests (``convert``, claims on the pilot classes).
6. The predicted effect: the simulator (``dralab.sim``) runs the pilot pool with
   these workloads on both models: pods started, wait, GPU capacity allocated vs
   requested. The scenario, fleet and templates are written too, so
   ``dralab simulate --scenario`` reruns it.
7. A report (``report``) with the metrics to watch and their expected values.
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass, field
from typing import Any

from dralab.api.codec import encode
from dralab.api.errors import DralabError
from dralab.api.io import Document, dumps, to_list, write_files
from dralab.sim.scenario import load_scenario
from dralab.sim.simulate import simulate

from .clusterdump import read_dump
from .convert import Conversion, convert_sources
from .inventory import inventory
from .pilot import PilotClasses, fleet_document, pilot_classes, smoke_test
from .planchecks import shortfall, unconvertible, unserved
from .pods import workload_pods
from .podsets import workload_of
from .pools import CLASS_RISK, GpuPool, pools_of
from .refusals import share_memory_amount
from .rewrite import plan_document
from .shapes import TemplateNames

__all__ = ["ModeEffect", "PilotPlan", "make_plan"]

_SERVICE_KINDS = frozenset({"Deployment", "StatefulSet", "ReplicaSet", "InferenceService",
                            "LeaderWorkerSet", "DaemonSet", "Pod"})
_SLUG = re.compile(r"[^a-z0-9-]+")


@dataclass(frozen=True, slots=True)
class ModeEffect:
    """One model's predicted run of the pilot. Every number comes from that one run:
    waits are over the pods that started (``pods - started`` never did, within the
    run); claims (DRA only: the device plugin has none) are those of the started pods
    (allocated) and of the others (pending)."""

    mode: str
    label: str
    pods: int
    started: int
    mean_wait: float          # seconds, over started pods
    max_wait: float
    allocated: float          # 0..1 of the pool's GPU capacity, time-weighted mean
    requested: float
    claims_allocated: int = 0
    claims_pending: int = 0

    @property
    def not_started(self) -> int:
        return self.pods - self.started


@dataclass(slots=True)
class PilotPlan:
    source: str
    pools: list[GpuPool]
    pilot: GpuPool
    blockers: list[str]
    classes: PilotClasses
    order: list[tuple[str, str]]              # (what, why)
    conversion: Conversion
    smoke: list[dict[str, Any]]
    fleet: dict[str, Any]
    scenario: dict[str, Any]
    sim_templates: dict[str, str]
    effect: list[ModeEffect] = field(default_factory=list)
    duration: str = "2h"
    shortfall: list[str] = field(default_factory=list)          # planchecks.shortfall
    unserved: list[tuple[str, str]] = field(default_factory=list)  # (workload, why)
    unconvertible: dict[str, list[str]] = field(default_factory=dict)  # pool -> workloads
    claims_per_kind: dict[str, int] = field(default_factory=dict)  # scenario kind -> per pod


def _slug(text: str) -> str:
    return _SLUG.sub("-", text.lower()).strip("-")[:40]


def _choose(pools: list[GpuPool]) -> GpuPool:
    if not pools:
        raise ValueError("no GPU nodes in the dump (no nvidia.com/gpu allocatable and no "
                         "gpu.nvidia.com ResourceSlices)")
    return min(pools, key=lambda p: (not p.workloads, p.risk, len(p.nodes), p.pods,
                                     not p.dedicated, p.name))


def _time_weighted(samples: list[tuple[float, float]], end: float) -> float:
    if not samples:
        return 0.0
    total = 0.0
    for (t, value), (t_next, _) in zip(samples, [*samples[1:], (end, 0.0)], strict=True):
        total += value * max(0.0, t_next - t)
    return total / end if end > 0 else samples[-1][1]


def _simulate(directory: str, claims_per_kind: dict[str, int]) -> list[ModeEffect]:
    scenario = load_scenario(os.path.join(directory, "scenario.yaml"))
    result = simulate(scenario)
    out = []
    for mode in result.modes:
        waits = [p.start - p.arrival for p in mode.pods if p.start is not None]
        claims = [(claims_per_kind.get(p.kind, 0), p.start is not None) for p in mode.pods] \
            if mode.mode == "dra" else []
        out.append(ModeEffect(
            mode.mode, mode.label, len(mode.pods), len(waits),
            sum(waits) / len(waits) if waits else 0.0, max(waits, default=0.0),
            _time_weighted([(s.t, s.gpu_capacity_allocated) for s in mode.samples],
                           result.duration),
            _time_weighted([(s.t, s.gpu_capacity_requested) for s in mode.samples],
                           result.duration),
            sum(n for n, started in claims if started),
            sum(n for n, started in claims if not started)))
    return out


def _scenario(plan_docs: list[tuple[str, Any, Any]], conversion: Conversion, smoke: list[Any],
              duration: str, claims_per_kind: dict[str, int]
              ) -> tuple[dict[str, Any], dict[str, str]]:
    """The Scenario of the pilot and its template files (name -> text); ``claims_per_kind``
    gets each job kind's claims per pod."""
    templates: dict[str, str] = {}
    kinds: list[dict[str, Any]] = []
    by_name = {(t.metadata.namespace, t.metadata.name): t for t in conversion.templates}

    def add(name: str, pod: dict[str, Any], claim_templates: list[Any], pods: int,
            run_for: str) -> None:
        pod = {**pod, "metadata": {"name": name}}
        objects = [pod, *claim_templates]
        templates[f"templates/{name}.yaml"] = dumps(to_list(objects))
        claims_per_kind[name] = len(pod.get("spec", {}).get("resourceClaims") or [])
        kinds.append({"name": name, "arrivals": ["0s"], "podsPerJob": pods,
                      "duration": {"distribution": "fixed", "mean": run_for},
                      "template": f"templates/{name}.yaml"})

    smoke_workload = workload_of(smoke[1])
    assert smoke_workload is not None
    smoke_pod = workload_pods(smoke[1], smoke_workload)[0]
    smoke_rct = {**smoke[0], "metadata": {"name": smoke[0]["metadata"]["name"]}}
    add("dra-smoke-test", smoke_pod, [smoke_rct], 1, "5m")
    for kind, workload, converted in plan_docs:
        for pod_set in workload.pod_sets:
            converted_workload = workload_of(converted)
            if converted_workload is None:
                continue
            pods = workload_pods(converted, converted_workload)
            prefix = f"{_slug(workload.name)}-{_slug(pod_set.role)}".rstrip("-") \
                if pod_set.role else _slug(workload.name)
            mine = [p for p in pods if p["metadata"]["name"].startswith(prefix)]
            if not mine:
                continue
            pod = mine[0]
            names = [c.get("resourceClaimTemplateName") for c in
                     pod["spec"].get("resourceClaims") or []]
            rcts = []
            for name in names:
                rct = by_name.get((workload.namespace, name))
                if rct is not None:
                    rcts.append({**encode(rct), "metadata": {"name": name}})
            add(f"{_slug(workload.kind)}-{prefix}"[:50], pod, rcts, len(mine),
                duration if kind in _SERVICE_KINDS else "1h")
    scenario = {"apiVersion": "dralab.dev/v1alpha1", "kind": "Scenario",
                "metadata": {"name": "pilot"},
                "spec": {"seed": 1, "duration": duration, "sampleInterval": "1m",
                         "compare": ["device-plugin", "dra"], "fleet": {"file": "fleet.yaml"},
                         "workload": kinds}}
    return scenario, templates


def make_plan(docs: list[Document], source: str, share_memory: str = "8Gi",
              duration: str = "2h", run_simulation: bool = True) -> PilotPlan:
    """The pilot plan of a cluster dump (see the module doc); simulates unless told not to.
    ValidationFailed when a workload of the dump is one the API server would refuse;
    ValueError for a share of memory that is not a positive, whole number of bytes."""
    share_memory = share_memory_amount(share_memory)
    dump = read_dump(docs)
    pools = pools_of(dump)
    pilot = _choose(pools)
    blockers = [f"pool {p.name}: nodes {', '.join(n.name for n in p.nodes if n.double_advertised)}"
                " advertise GPUs through the device plugin and DRA (dralab migrate check); "
                "stop one of the two there first" for p in pools if p.double_advertised]
    classes = pilot_classes(pilot)
    names = TemplateNames()
    ranked = sorted(pilot.workloads, key=lambda w: (CLASS_RISK.get(w.cls, 9),
                                                    w.workload.total_pods or 0,
                                                    w.workload.kind, w.workload.ref))
    movable = [w for w in ranked if plan_document(w.document.data, names, share_memory).changes]
    namespace = movable[0].workload.namespace if movable and movable[0].workload.namespace \
        else "default"
    smoke = smoke_test(pilot, classes, namespace)
    order = [("Job dra-smoke-test", "proves the DRA driver, the pilot DeviceClass and claim "
              "allocation on the pool with one device and nothing at stake")]
    sources = []
    for i, entry in enumerate(movable, start=2):
        w = entry.workload
        why = f"class {entry.cls} (risk {CLASS_RISK.get(entry.cls, 9)}), " \
              f"{w.total_pods if w.total_pods is not None else 'one per node'} pod(s)"
        order.append((f"{w.kind} {w.ref}", why))
        name = f"{i:02d}-{_slug(w.kind)}-{_slug(w.name)}.yaml"
        text = dumps(entry.document.data)
        sources.append((f"{entry.document.where}", name, text,
                        [Document(entry.document.source, entry.document.index,
                                  entry.document.data)]))
    conversion = convert_sources(sources, share_memory, classes.class_for)
    conversion.classes = classes.all() + [c for c in conversion.classes
                                          if c.name not in {x.name for x in classes.all()}]
    shares = any(n.type == "share" for _, _, n in conversion.names.items())
    fleet = fleet_document(pilot, classes, shares)
    plan_docs = [(f.documents[0].data.get("kind"), f.plans[0].workload, f.converted[0])
                 for f in conversion.files if f.plans and f.plans[0].workload is not None]
    claims_per_kind: dict[str, int] = {}
    scenario, sim_templates = _scenario(plan_docs, conversion, smoke, duration, claims_per_kind)
    plan = PilotPlan(source, pools, pilot, blockers, classes, order, conversion, smoke, fleet,
                     scenario, sim_templates, duration=duration,
                     shortfall=shortfall(pilot, movable),
                     unserved=unserved(inventory(dump.documents), pools),
                     unconvertible={p.name: u for p in pools if (u := unconvertible(p))},
                     claims_per_kind=claims_per_kind)
    if run_simulation:
        with tempfile.TemporaryDirectory(prefix="dralab-pilot-") as tmp:
            _write_simulation(plan, tmp)
            try:
                plan.effect = _simulate(tmp, claims_per_kind)
            except (DralabError, OSError) as exc:
                # The files are ours, in a directory that is gone once we return: name
                # them as --out writes them (simulation/...), never by the temporary path.
                raise ValueError("the pilot's simulation inputs (written by --out under "
                                 f"simulation/): {_without_dir(str(exc), tmp)}") from None
    return plan


def _without_dir(message: str, directory: str) -> str:
    """``message`` with every mention of ``directory`` (as given or resolved) left out."""
    for form in {os.path.realpath(directory), os.path.abspath(directory), directory}:
        message = message.replace(form + os.sep, "").replace(form, ".")
    return message


def _write_simulation(plan: PilotPlan, directory: str) -> list[str]:
    files = {"fleet.yaml": dumps(plan.fleet), "scenario.yaml": dumps(plan.scenario),
             **plan.sim_templates}
    return write_files(directory, files)
