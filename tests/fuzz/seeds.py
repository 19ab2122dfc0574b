"""The well-formed inputs the fuzz suite starts from, read once per session.

Manifests are every YAML file of ``examples/`` and ``tests/data/`` (the upstream corpus
included); scenarios are the shipped ones, shrunk (a shorter run, at most two nodes a pool)
so that a mutant that stays valid runs in about a second; Fleet specs are the default fleet
and the scenarios' inline fleets; scheduler configurations are ``examples/scheduling/
pack.yaml`` and a few shaped like the tests' profiles; traces are small slices of the
shipped Alibaba 2023 CSV files (every k-th row, header kept).
"""

from __future__ import annotations

import copy
import csv
import io
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
TEST_DATA = ROOT / "tests" / "data"
DATA = ROOT / "src" / "dralab" / "data"
TRACE = DATA / "alibaba-gpu-2023"
NODE_FILE = "openb_node_list_gpu_node.csv"

Doc = dict[str, Any]
# libyaml when PyYAML has it: reading every seed is most of the suite's set-up otherwise.
LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_all(data: bytes | str) -> list[Any]:
    """Every document of ``data`` (well-formed seed text)."""
    return list(yaml.load_all(data, Loader=LOADER))


@dataclass(frozen=True)
class ManifestSeed:
    """A manifest file: its text and its documents (mappings only)."""

    name: str
    text: str
    docs: tuple[Doc, ...]


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@cache
def manifests() -> tuple[ManifestSeed, ...]:
    """Every YAML file under examples/ and tests/data/ that parses, in a stable order."""
    out = []
    for path in sorted([*EXAMPLES.rglob("*.yaml"), *TEST_DATA.rglob("*.yaml")]):
        text = path.read_text()
        try:
            docs = tuple(d for d in yaml.load_all(text, Loader=LOADER) if isinstance(d, dict))
        except yaml.YAMLError:
            continue  # unrendered Go templates
        if docs:
            out.append(ManifestSeed(_rel(path), text, docs))
    return tuple(out)


@cache
def kueue_manifests() -> tuple[ManifestSeed, ...]:
    """The manifests with Kueue objects (queues, flavors, workloads, its Configuration):
    the inputs on which admit and explain workload get past the lookup into admission."""
    return tuple(seed for seed in manifests()
                 if any(str(d.get("apiVersion", "")).split("/")[0].endswith("kueue.x-k8s.io")
                        for d in seed.docs))


@cache
def cluster_files() -> dict[str, bytes]:
    """examples/fleet: nodes, DeviceClasses and the slices of an H100, an L4 and an A100 node,
    the cluster that schedule/allocate/explain cases run their workloads against."""
    return {p.name: p.read_bytes() for p in sorted((EXAMPLES / "fleet").glob("*.yaml"))}


def names_in(docs: tuple[Doc, ...] | list[Doc], kinds: tuple[str, ...]) -> list[str]:
    """``NAMESPACE/NAME`` of the objects of ``kinds`` (for explain targets and --node)."""
    found = []
    for doc in docs:
        meta = doc.get("metadata")
        if doc.get("kind") in kinds and isinstance(meta, dict) and isinstance(meta.get("name"),
                                                                                str):
            namespace = meta.get("namespace")
            found.append(f"{namespace}/{meta['name']}" if isinstance(namespace, str)
                         else meta["name"])
    return found


@cache
def node_names() -> tuple[str, ...]:
    names: set[str] = set()
    for seed in manifests():
        for doc in seed.docs:
            spec = doc.get("spec")
            if doc.get("kind") == "Node":
                names.update(names_in([doc], ("Node",)))
            elif doc.get("kind") == "ResourceSlice" and isinstance(spec, dict) and isinstance(
                    spec.get("nodeName"), str):
                names.add(spec["nodeName"])
    return tuple(sorted(names))


# --- scenarios and fleets ------------------------------------------------------------------

def _shrink_fleet(fleet: Doc, count: int = 2) -> Doc:
    for pool in fleet.get("pools") or []:
        if isinstance(pool, dict) and isinstance(pool.get("count"), int):
            pool["count"] = min(pool["count"], count)
    return fleet


def _shrink_scenario(doc: Doc) -> Doc:
    """A short run on a small fleet: a valid mutant must finish in about a second."""
    spec = doc["spec"]
    spec["duration"] = "2h"
    spec["sampleInterval"] = "10m"
    fleet = spec.get("fleet")
    if isinstance(fleet, dict) and isinstance(fleet.get("spec"), dict):
        _shrink_fleet(fleet["spec"])
    return doc


@cache
def scenarios() -> tuple[tuple[str, Doc], ...]:
    paths = [DATA / "default-scenario.yaml", *sorted((EXAMPLES / "scenarios").glob("*.yaml"))]
    return tuple((_rel(p), _shrink_scenario(yaml.safe_load(p.read_text()))) for p in paths)


@cache
def fleets() -> tuple[tuple[str, Doc], ...]:
    """The default fleet (one node a pool: `fleet` prints every device, and a valid mutant
    should take a fraction of a second) and every scenario's inline fleet as a Fleet."""
    default = yaml.safe_load((DATA / "default-fleet.yaml").read_text())
    _shrink_fleet(default["spec"], 1)
    out = [(_rel(DATA / "default-fleet.yaml"), default)]
    for name, scenario in scenarios():
        fleet = scenario["spec"].get("fleet")
        if isinstance(fleet, dict) and isinstance(fleet.get("spec"), dict):
            out.append((f"{name}#fleet", {
                "apiVersion": "dralab.dev/v1alpha1", "kind": "Fleet",
                "metadata": {"name": scenario["metadata"]["name"]},
                "spec": _shrink_fleet(copy.deepcopy(fleet["spec"]), 1)}))
    return tuple(out)


# --- scheduler configurations ------------------------------------------------------------

def _config(*profiles: Doc, **top: Any) -> Doc:
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            **top, "profiles": list(profiles)}


@cache
def scheduler_configs() -> tuple[tuple[str, Doc], ...]:
    pack = EXAMPLES / "scheduling" / "pack.yaml"
    return (
        (_rel(pack), yaml.safe_load(pack.read_text())),
        ("fgd", _config({
            "schedulerName": "default-scheduler",
            "plugins": {"score": {"disabled": [{"name": "*"}],
                                  "enabled": [{"name": "FGD", "weight": 1}]}},
            "pluginConfig": [{"name": "FGD", "args": {
                "shapes": [{"cpu": "4", "gpus": 1, "share": 500, "weight": 5},
                           {"cpu": "2", "gpus": 0, "weight": 2}],
                "gpuResource": "nvidia.com/gpu"}}]})),
        ("percentage", _config(
            {"schedulerName": "default-scheduler", "percentageOfNodesToScore": 50,
             "plugins": {"filter": {"disabled": [{"name": "TaintToleration"}]},
                         "multiPoint": {"enabled": [{"name": "BestFit", "weight": 3}]}},
             "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
                 "type": "RequestedToCapacityRatio",
                 "resources": [{"name": "cpu", "weight": 1}],
                 "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0},
                                                        {"utilization": 100, "score": 10}]}}}}]},
            percentageOfNodesToScore=30, parallelism=4)),
    )


# --- trace slices ------------------------------------------------------------------------

# The pod lists the slices come from: each column layout of the trace (multigpu* has no
# gpu_spec, cpu0 has no GPU pods at all).
TRACE_WORKLOADS = ("default", "gpuspec33", "multigpu50", "gpushare40", "cpu050", "cpu0")


def _every(text: str, rows: int) -> str:
    lines = text.splitlines(keepends=True)
    step = max(1, (len(lines) - 1) // rows)
    return "".join([lines[0], *lines[1::step][:rows]])


@cache
def trace_slices() -> dict[str, str]:
    """File name -> the text of a slice: about 30 nodes (every model) and 150 pods a list."""
    out = {NODE_FILE: _every((TRACE / NODE_FILE).read_text(), 30)}
    for workload in TRACE_WORKLOADS:
        name = f"openb_pod_list_{workload}.csv"
        out[name] = _every((TRACE / name).read_text(), 150)
    return out


def csv_rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def csv_text(rows: list[list[str]]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    return buffer.getvalue()


# --- migrate, autoscale and queueing inputs (issue 29) -------------------------------------

MIGRATE = EXAMPLES / "migrate"


@cache
def migrate_workloads() -> tuple[ManifestSeed, ...]:
    """What ``migrate inventory`` and ``convert`` read: examples/migrate/manifests, the
    migrate test data, and every other manifest with a device-plugin GPU request."""
    return tuple(s for s in manifests()
                 if s.name.startswith(("examples/migrate/", "tests/data/migrate/"))
                 or "nvidia.com/gpu:" in s.text or "nvidia.com/mig-" in s.text)


@cache
def migrate_dumps() -> tuple[ManifestSeed, ...]:
    """Cluster dumps (``kubectl get ... -o yaml``) for ``migrate check`` and ``plan``."""
    return tuple(s for s in manifests() if s.name in (
        "examples/migrate/cluster-dump.yaml", "tests/data/migrate/list-dump.yaml"))


@cache
def helm_templates() -> tuple[tuple[str, bytes], ...]:
    """Unrendered Helm/Go templates (``{{ }}``) of the upstream corpus: raw text that
    ``migrate`` is told it may get from a chart's directory."""
    out = []
    for path in sorted(TEST_DATA.rglob("*.yaml")):
        data = path.read_bytes()
        if b"{{" in data and len(data) < 20_000:
            out.append((_rel(path), data))
    return tuple(out[:12])


@cache
def autoscale_inputs() -> tuple[tuple[str, Doc, tuple[Doc, ...]], ...]:
    """(name, an autoscaled Fleet, the pods and claims beside it) for ``autoscale``: the
    autoscale test data, and the autoscaling scenario's fleet with its queued jobs' shape."""
    data = TEST_DATA / "autoscale"
    workloads = {p.name: tuple(d for d in yaml.load_all(p.read_text(), Loader=LOADER)
                               if isinstance(d, dict))
                 for p in sorted(data.glob("*.yaml")) if p.name != "fleet.yaml"}
    fleet = yaml.safe_load((data / "fleet.yaml").read_text())
    out = [(f"{_rel(data)}/fleet.yaml+{name}", fleet, docs)
           for name, docs in workloads.items() if name != "scale-down.yaml"]
    down = workloads["scale-down.yaml"]
    [own] = [d for d in down if d.get("kind") == "Fleet"]
    out.append((f"{_rel(data)}/scale-down.yaml", own,
                tuple(d for d in down if d.get("kind") != "Fleet")))
    for name, doc in fleets():
        pools = doc["spec"].get("pools") or []
        if any(isinstance(p, dict) and "autoscaling" in p for p in pools):
            out.append((name, doc, workloads["pending.yaml"]))
    return tuple(out)


@cache
def kueue_files() -> dict[str, bytes]:
    """The Kueue objects scenarios queue through, by the path a scenario names them."""
    files = {f"kueue/{p.name}": p.read_bytes()
             for p in sorted((TEST_DATA / "sim" / "queueing").glob("*.yaml"))}
    for path in sorted((EXAMPLES / "scenarios").glob("*/*.yaml")):
        files[path.relative_to(EXAMPLES / "scenarios").as_posix()] = path.read_bytes()
    return files


@cache
def queueing_scenarios() -> tuple[tuple[str, Doc], ...]:
    """Short scenarios with ``spec.queueing`` (the shapes of tests/sim/test_queueing_
    scenario.py: two teams borrowing in a cohort, feasibility preemption) and with both
    queueing and autoscaling; each names one of ``kueue_files``."""
    kind: Doc = {"cpu": "8", "memory": "64Gi",
                 "duration": {"distribution": "fixed", "mean": "30m"},
                 "devices": {"type": "gpu", "count": 8}}
    h100 = {"name": "h100", "count": 2, "cpu": "64", "memory": "512Gi",
            "gpu": {"model": "h100-80gb-sxm", "count": 8}}

    def scenario(name: str, kueue: str, **spec: Any) -> tuple[str, Doc]:
        body = {"duration": "2h", "sampleInterval": "10m", "compare": ["dra"],
                "queueing": {"kueue": f"kueue/{kueue}"},
                "fleet": {"spec": {"pools": [h100]}},
                "workload": [{"name": "team-a", "arrivals": ["0s", "0s", "0s"],
                              "queue": "team-a/training", **kind},
                             {"name": "team-b", "arrivals": ["30m"],
                              "queue": "team-b/training", **kind}]} | spec
        return (f"queueing:{name}", {"apiVersion": "dralab.dev/v1alpha1", "kind": "Scenario",
                                     "metadata": {"name": name}, "spec": body})

    autoscaled = h100 | {"count": 0, "autoscaling": {"min": 0, "max": 2, "pricePerHour": 32.0,
                                                      "provisioningDelay": "5m"}}
    return (
        scenario("reclaim", "kueue.yaml"),
        scenario("no-reclaim", "kueue-no-reclaim.yaml", compare=["device-plugin", "dra"]),
        scenario("feasibility", "kueue-feasibility.yaml"),
        scenario("feasibility-preemption", "kueue-feasibility-preemption.yaml"),
        scenario("autoscaled", "kueue.yaml", fleet={"spec": {"pools": [autoscaled]}},
                 autoscaling={"model": "cluster-autoscaler", "expander": "least-waste",
                              "scanInterval": "10s", "scaleDownUnneededTime": "10m"}),
    )
