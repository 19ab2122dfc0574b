"""Hypothesis strategies for whole cases: a mutated input put where a verb reads it, with
the options a user would give (and some they should not), for every verb of ``dralab``.

Families, one strategy each:

* ``manifest_cases``: examples/ and tests/data/ manifests (the upstream corpus included),
  mutated, as a file, on stdin or in a directory, for validate, import, schedule, allocate,
  explain pod, explain claim, admit and explain workload (schedule, allocate and the
  explains beside examples/fleet's cluster);
* ``fleet_cases``: Fleet specs for ``fleet``;
* ``autoscale_cases``: autoscaled Fleet specs and pending pods for ``autoscale``;
* ``migrate_cases``: workloads and cluster dumps for ``migrate inventory``, ``convert``,
  ``check`` and ``plan``;
* ``config_cases``: KubeSchedulerConfigurations for ``schedule --config`` and ``explain``;
* ``scenario_cases``: scenarios (with queueing and autoscaling among them, and their
  Kueue files) for ``simulate`` and ``sweep scenarios``;
* ``trace_cases``: Alibaba trace slices for ``replay`` and ``sweep alibaba-2023``;
* ``argv_cases``: valid invocations of every verb with one argument spoiled;
* ``hostile_case``: a file of ``hostile`` in the input slot of any verb.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from typing import Any

from hypothesis import strategies as st

from . import seeds
from .harness import Case, Content
from .mutate import (
    donor_values,
    dump_yaml,
    mild_mutation,
    mutate_bytes,
    mutate_tree,
    mutated_text,
    serialise,
)

MANIFEST_VERBS = ("validate", "import", "schedule", "allocate", "explain pod", "explain claim",
                  "admit", "explain workload")
CLUSTER_VERBS = ("schedule", "allocate", "explain pod", "explain claim", "explain workload")
# Verbs that take neither --feature-gates nor -n (Kueue's own gates are in its Configuration).
KUEUE_VERBS = ("admit", "explain workload")
# The verbs drawn by manifest_cases: Kueue's twice, so that they get a fair share.
MANIFEST_DRAW = MANIFEST_VERBS + KUEUE_VERBS
# Values a Kueue object may get: the CRDs' limits and just past them, cohort parents
# (which may close a cycle), flavors and strategies that do not exist.
KUEUE_VALUES: list[Any] = [
    2**31 - 1, 2**31, 2**63, -(2**31) - 1, 16, 17, 64, 65, "c0", "research", "team-a",
    {"parentName": "research"}, {"parentName": "team-a"}, {"parentName": ""},
    ["Bogus"], ["LessThanOrEqualToFinalShare", "LessThanInitialShare"], "Bogus",
    "LowerPriority", "Any", "Never", "BestEffortFIFO", "StrictFIFO",
    {"KueueDRADeviceFeasibility": True}, {"KueueDRADeviceFeasibility": "yes"},
    [{"nodeLabel": "kubernetes.io/hostname"}] * 17, {"enable": True, "preemptionStrategies":
                                                     ["Bogus"]},
    {"name": "nvidia.com/gpu", "deviceClassNames": ["gpu.nvidia.com"]},
    {"name": "cpu", "nominalQuota": "1e99999999"}, {"name": "cpu", "nominalQuota": "-1"},
    "٣s", "３m", "1e9h", "-1s",
]
CLUSTER_NODES = ("h100-node-01", "a100-mig-node-01", "l4-node-01")  # examples/fleet/nodes.yaml
POLICIES = ("Random", "DotProd", "GpuClustering", "GpuPacking", "BestFit", "FGD", "FGD-FS")

# Settable gates first: hypothesis draws the first elements of a list more often.
FEATURE_GATES = ["DRAConsumableCapacity=true", "DRAPartitionableDevices=false,DRADeviceTaints=true",
                 "DRAExtendedResource=true", "DRADeviceBindingConditions=true",
                 "DRAListTypeAttributes=true", "DRAPrioritizedList=false",
                 "DRAAdminAccess=false", "DynamicResourceAllocation=false", "Bogus=true",
                 "DRAAdminAccess=maybe", "=", ",,,", "DRAAdminAccess",
                 "DRAAdminAccess=true=false", "\x1b[31m=true"]
SEEDS = ["0", "1", "42", "-1", "99999999999999999999999", "1e3", "x", ""]
JUNK = ["", "-", "-1", "0", "abc", "1e9", "99999999999999999999", "\x1b[31mred",
        "\u202eevil", "a" * 5000, "{in}/nope", "{in}", "/dev/null", "--help", "a/b/c/d",
        "job/", "pod/", "ns//x", " ", "\n"]


def rarely(draw: st.DrawFn, one_in: int) -> bool:
    """True about once in ``one_in`` draws. (Hypothesis favours small integers, so the
    usual outcome is the one of the smallest value.)"""
    return draw(st.integers(1, one_in)) == one_in


def _is_json(data: bytes) -> bool:
    try:
        json.loads(data)
    except (ValueError, RecursionError):  # a mutation may nest a JSON list 1,500 deep
        return False
    return True


def _option(draw: st.DrawFn, probability: int, *choices: list[str]) -> list[str]:
    """With about ``probability`` percent, one of ``choices`` (an option and its value)."""
    if draw(st.integers(0, 99)) < 100 - probability:
        return []
    return list(draw(st.sampled_from(choices)))


def _cluster(draw: st.DrawFn, files: dict[str, Content]) -> list[str]:
    """examples/fleet under {in}/cluster, one of its files mutated now and then."""
    cluster = dict(seeds.cluster_files())
    if rarely(draw, 10):
        name = draw(st.sampled_from(sorted(cluster)))
        cluster[name] = mutate_bytes(draw, cluster[name])
    files.update({f"cluster/{name}": data for name, data in cluster.items()})
    return ["-f", "{in}/cluster"]


def _deliver(draw: st.DrawFn, data: bytes, files: dict[str, Content], name: str,
             *, stdin_ok: bool = True) -> tuple[list[str], bytes | None]:
    """Put ``data`` in a file, on stdin or in a directory (with company); the -f arguments."""
    how = draw(st.sampled_from(["file", "file", "stdin", "dir"] if stdin_ok else ["file"]))
    if how == "stdin":
        return ["-f", "-"], data
    if how == "dir":
        files[f"m/{name}"] = data
        if draw(st.booleans()):
            files["m/README.md"] = b"# not a manifest\n"
            files["m/sub/more.yml"] = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m}\n"
        return ["-f", "{in}/m"], None
    files[name] = data
    return ["-f", f"{{in}}/{name}"], None


def _target(draw: st.DrawFn, docs: list[Any], verb: str) -> str:
    kinds = {"explain pod": ("Pod", "Job", "Deployment", "StatefulSet", "ReplicaSet",
                             "DaemonSet", "CronJob"),
             "explain workload": ("Job", "Pod", "Workload")}.get(verb, ("ResourceClaim",))
    names = seeds.names_in(docs, kinds)
    prefixes = {"Job": "job/", "Deployment": "deploy/", "DaemonSet": "ds/"}
    for doc in docs:
        prefix = prefixes.get(str(doc.get("kind")))
        if prefix and verb == "explain pod":
            names += [prefix + n.split("/")[-1] for n in seeds.names_in([doc], (doc["kind"],))]
    if rarely(draw, 10):
        return draw(st.sampled_from(JUNK))
    return draw(st.sampled_from(names or ["x"]))


def _spoil(draw: st.DrawFn, docs: list[Any], donors: dict[str, list[Any]],
           extra: list[Any] | None = None) -> tuple[bytes, str]:
    """Half the time ``mutated_text`` (hostile values, broken text), half the time plausible
    edits only (``mild_mutation``), so that many runs get past the reader into the engine;
    the text and "-mild" for the latter."""
    if draw(st.booleans()):
        return mutated_text(draw, docs, tree=lambda d, root: mutate_tree(d, root, extra)), ""
    docs = copy.deepcopy(docs)
    for _ in range(draw(st.integers(0, 3))):
        docs = mild_mutation(draw, docs, donors)
    return serialise(draw, docs).encode("utf-8", "surrogatepass"), "-mild"


@cache
def _manifest_donors() -> dict[str, list[Any]]:
    return donor_values([d for seed in seeds.manifests() for d in seed.docs])


@cache
def _donors(family: str) -> dict[str, list[Any]]:
    """Values of the family's own seeds (fleets, configs, scenarios and their fleets)."""
    docs = {"fleet": [d for _, d in seeds.fleets()],
            "config": [d for _, d in seeds.scheduler_configs()],
            "scenario": [d for _, d in (*seeds.scenarios(), *seeds.queueing_scenarios(),
                                        *seeds.fleets())]}
    return donor_values(docs[family])


@st.composite
def manifest_cases(draw: st.DrawFn, verbs: tuple[str, ...] = MANIFEST_DRAW) -> Case:
    verb = draw(st.sampled_from(verbs))
    pool = seeds.manifests()
    if verb in KUEUE_VERBS and not rarely(draw, 5):
        pool = seeds.kueue_manifests() or pool  # else most runs stop at "no such workload"
    seed = draw(st.sampled_from(pool))
    docs = list(copy.deepcopy(seed.docs))
    if verb in KUEUE_VERBS and not seeds.names_in(docs, ("Job", "Pod", "Workload")) \
            and not rarely(draw, 5):
        # Queues without workloads (most Kueue samples): add a sample's jobs or workloads.
        with_jobs = [s for s in seeds.kueue_manifests()
                     if seeds.names_in(s.docs, ("Job", "Pod", "Workload"))]
        docs += copy.deepcopy(draw(st.sampled_from(with_jobs)).docs)
    if rarely(draw, 4):
        docs += copy.deepcopy(draw(st.sampled_from(seeds.manifests())).docs)
    data, mild = _spoil(draw, docs, _manifest_donors(),
                        KUEUE_VALUES if verb in KUEUE_VERBS else None)
    generator = f"manifest{mild}:{seed.name}"
    files: dict[str, Content] = {}
    args = verb.split()
    if verb.startswith("explain"):
        args.append(_target(draw, docs, verb))
    if verb == "admit" and rarely(draw, 3):
        args += _cluster(draw, files)  # Nodes and slices: admission's placement check
    if verb in ("explain pod", "explain claim"):
        args += _option(draw, 20, ["-n", "ml"], ["-n", "default"], ["-n", draw(st.sampled_from(
            JUNK))])
    if verb in CLUSTER_VERBS and not rarely(draw, 10):
        args += _cluster(draw, files)
    # The file is named for what it holds, now and then not.
    names = ["input.json", "input.yaml"] if _is_json(data) else ["input.yaml", "input.json"]
    inputs, stdin = _deliver(draw, data, files, names[rarely(draw, 10)])
    args += inputs
    if verb == "allocate":
        # A node of the input (the cluster's first), now and then one of another file.
        nodes = [*CLUSTER_NODES, *seeds.names_in(docs, ("Node",))]
        if rarely(draw, 5):
            nodes = [*seeds.node_names(), *JUNK]
        args += ["--node", draw(st.sampled_from(nodes))]
    if verb != "import" and verb not in KUEUE_VERBS:
        args += _option(draw, 15, *(["--feature-gates", g] for g in FEATURE_GATES))
    if verb in ("import", "allocate", "schedule", "admit"):
        formats = ["yaml", "json", "table"] if verb == "schedule" else ["yaml", "json"]
        args += _option(draw, 30, *(["-o", f] for f in formats))
    if verb in ("schedule", "explain pod", "explain claim"):
        args += _option(draw, 20, *(["--seed", s] for s in SEEDS))
    return Case(generator, tuple(args), files, stdin)


FLEET_VALUES: list[Any] = [1000000, 5001, 2**64, "8", 9, 129, 0, -3, "h100-80gb-sxm", "l4",
                           "a100-40gb", "no-such-model", {"mode": "dynamic"}, {"mode": "static"},
                           {"mode": "bogus"}, "1g.5gb", {"consumableShares": "memory"},
                           {"count": 64, "driver": "sriov"}, {"zone": "", "nodesPerRack": 0}]


@st.composite
def fleet_cases(draw: st.DrawFn) -> Case:
    name, doc = draw(st.sampled_from(seeds.fleets()))
    data, mild = _spoil(draw, [doc], _donors("fleet"), FLEET_VALUES)
    files: dict[str, Content] = {}
    inputs, stdin = _deliver(draw, data, files, "fleet.yaml")
    args = ["fleet", *inputs]
    args += _option(draw, 20, *(["--seed", s] for s in SEEDS))
    args += _option(draw, 30, ["-o", "json"], ["-o", "yaml"])
    args += _option(draw, 5, ["--default"])
    return Case(f"fleet{mild}:{name}", tuple(args), files, stdin)


AUTOSCALE_VALUES: list[Any] = [
    {"min": 0, "max": 3, "pricePerHour": 4.0, "provisioningDelay": "3m", "priority": 1},
    {"min": 0, "max": 10**9}, {"min": -1, "max": -1}, {"min": 5, "max": 1}, {"max": 2**64},
    {"min": 0, "max": 3, "pricePerHour": float("nan")}, {"pricePerHour": -1},
    {"provisioningDelay": "1e300h"}, {"provisioningDelay": "٣s"}, {"provisioningDelay": "-5m"},
    {"priority": 2**63}, {}, 0, 3, 10**9, -1, "5m", "３m", 1e300, float("inf"),
]


@cache
def _autoscale_donors() -> dict[str, list[Any]]:
    docs = [d for _, fleet, pods in seeds.autoscale_inputs() for d in (fleet, *pods)]
    return donor_values(docs)


@st.composite
def autoscale_cases(draw: st.DrawFn) -> Case:
    """An autoscaled Fleet and pending pods, one or both spoiled, for ``autoscale``."""
    name, fleet, pods = draw(st.sampled_from(seeds.autoscale_inputs()))
    which = draw(st.sampled_from(["fleet", "fleet", "pods", "both", "one-file"]))
    files: dict[str, Content] = {}
    args = ["autoscale"]
    if which == "one-file":  # the Fleet and its pods in one stream
        data, mild = _spoil(draw, [fleet, *pods], _autoscale_donors(), AUTOSCALE_VALUES)
        inputs, stdin = _deliver(draw, data, files, "input.yaml")
        args += inputs
    else:
        mild = ""
        fleet_data = dump_yaml([fleet]).encode()
        pod_data = dump_yaml(list(pods)).encode()
        if which in ("fleet", "both"):
            fleet_data, mild = _spoil(draw, [fleet], _autoscale_donors(), AUTOSCALE_VALUES)
        if which in ("pods", "both"):
            pod_data, mild = _spoil(draw, list(pods), _autoscale_donors(), AUTOSCALE_VALUES)
        inputs, stdin = _deliver(draw, fleet_data, files, "fleet.yaml")
        files["pods.yaml"] = pod_data
        args += [*inputs, "-f", "{in}/pods.yaml"]
        if rarely(draw, 8):  # the pool's nodes already there, from `dralab fleet`
            args += _cluster(draw, files)
    args += _option(draw, 40, ["--model", "karpenter"], ["--model", "cluster-autoscaler"])
    args += _option(draw, 40, *(["--expander", e] for e in (
        "random", "most-pods", "least-waste", "price", "priority", "fragmentation")))
    args += _option(draw, 50, ["-o", "json"], ["-o", "yaml"], ["-o", "table"])
    return Case(f"autoscale{mild}:{which}:{name}", tuple(args), files, stdin)


# --share-memory and --duration values of migrate: fine, odd and invalid ones.
SHARE_MEMORY = ["8Gi", "8Gi", "1Gi", "80Gi", "-8Gi", "0", "1e99999999", "abc", "٣Gi",
                "８Gi", "0.5", ""]
DURATIONS = ["2h", "2h", "30m", "0s", "-1h", "٣s", "３m", "1e9h", "nan", "1d", ""]


@cache
def _migrate_donors() -> dict[str, list[Any]]:
    return donor_values([d for s in (*seeds.migrate_workloads(), *seeds.migrate_dumps())
                         for d in s.docs])


@st.composite
def migrate_cases(draw: st.DrawFn) -> Case:
    """GPU workloads (and now and then a raw Helm template) for ``migrate inventory`` and
    ``convert``; cluster dumps for ``check`` and ``plan``; spoiled, or plausibly edited."""
    verb = draw(st.sampled_from(["inventory", "convert", "convert", "check", "plan"]))
    files: dict[str, Content] = {}
    pool = seeds.migrate_dumps() if verb in ("check", "plan") else seeds.migrate_workloads()
    if rarely(draw, 6):  # any manifest: most have no GPU workload at all
        pool = seeds.manifests()
    if verb in ("inventory", "convert") and rarely(draw, 8):
        name, raw = draw(st.sampled_from(seeds.helm_templates()))
        data, mild = raw, "-helm"
        if draw(st.booleans()):
            data = mutate_bytes(draw, data)
    else:
        seed = draw(st.sampled_from(pool))
        name = seed.name
        data, mild = _spoil(draw, list(seed.docs), _migrate_donors())
    inputs, stdin = _deliver(draw, data, files, "workloads.yaml")
    if verb == "convert" and stdin is None and rarely(draw, 3):
        # A manifests directory, one file of it spoiled.
        for seed in seeds.migrate_workloads():
            if seed.name.startswith("examples/migrate/manifests/"):
                files[f"manifests/{seed.name.rsplit('/', 1)[1]}"] = seed.text.encode()
        files["manifests/spoiled.yaml"] = data
        files.pop("workloads.yaml", None)
        files.pop("m/workloads.yaml", None)
        inputs = ["-f", "{in}/manifests"]
    args = ["migrate", verb, *inputs]
    if verb == "convert":
        args += ["-o", "{out}"]
        args += _option(draw, 30, *(["--share-memory", v] for v in SHARE_MEMORY))
        if rarely(draw, 4):
            files["fleet.yaml"] = (seeds.MIGRATE / "fleet.yaml").read_bytes()
            args += ["--verify", "{in}/fleet.yaml"]
    elif verb == "plan":
        args += _option(draw, 50, ["--out", "{out}"])
        args += _option(draw, 30, *(["--share-memory", v] for v in SHARE_MEMORY))
        args += _option(draw, 30, *(["--duration", v] for v in DURATIONS))
    elif verb == "inventory":
        args += _option(draw, 50, ["-o", "json"], ["-o", "csv"], ["-o", "table"])
    else:
        args += _option(draw, 50, ["-o", "json"], ["-o", "table"])
    return Case(f"migrate{mild}:{verb}:{name}", tuple(args), files, stdin)


# The clusters a configuration schedules: device-plugin nodes with workloads, or the DRA
# fleet with its workloads and claims.
_CONFIG_CLUSTERS: dict[str, tuple[str, ...]] = {
    "device-plugin": ("examples/scheduling/cluster.yaml", "examples/scheduling/workloads.yaml"),
    "dra": ("examples/claims/two-h100.yaml", "examples/scheduling/dra-workloads.yaml"),
}
CONFIG_VALUES: list[Any] = ["MostAllocated", "LeastAllocated", "RequestedToCapacityRatio",
                            "NodeResourcesFit", "DynamicResources", "FGD", "*", 101, 0, -1,
                            {"name": "FGD", "weight": 1}, [{"name": "*"}],
                            {"utilization": 101, "score": 11}]


@st.composite
def config_cases(draw: st.DrawFn) -> Case:
    name, doc = draw(st.sampled_from(seeds.scheduler_configs()))
    data, mild = _spoil(draw, [doc], _donors("config"), CONFIG_VALUES)
    cluster = draw(st.sampled_from(sorted(_CONFIG_CLUSTERS)))
    files: dict[str, Content] = {"config.yaml": data}
    args: list[str] = []
    if cluster == "dra":
        args += _cluster(draw, files)
    for path in _CONFIG_CLUSTERS[cluster]:
        files[path.rsplit("/", 1)[1]] = (seeds.ROOT / path).read_bytes()
        args += ["-f", "{in}/" + path.rsplit("/", 1)[1]]
    verb = draw(st.sampled_from(["schedule", "schedule", "explain pod"]))
    head = ["schedule"] if verb == "schedule" else [
        "explain", "pod", "ml/pair" if cluster == "dra" else "train-0"]
    args += ["--config", "{in}/config.yaml"]
    if verb == "schedule":
        args += _option(draw, 30, ["-o", "table"], ["-o", "json"])
    return Case(f"config{mild}:{name}", (*head, *args), files)


SCENARIO_VALUES: list[Any] = [
    "2h", "30m", "0s", "1e9h", "-1h", ".5ms", "1d", "nan", "inf", 0.000000001, 1e9, -1,
    "0/h", "60/h", "1e9/s", "nan/h", "inf/h", "-1/h", "1e400/h", f"{2**64}/s",
    {"distribution": "lognormal", "mean": "1h", "sigma": 11}, {"distribution": "uniform",
                                                               "min": "2h", "max": "1h"},
    {"distribution": "fixed", "mean": "nan"}, {"distribution": "pareto", "mean": "1h"},
    ["0s", "10m", "1e9h"], {"type": "gpu", "count": 9}, {"type": "mig", "profile": "7g.80gb"},
    {"type": "share", "memory": "1e99999999"}, {"type": "gpu", "productName": "NVIDIA L4\""},
    {"default": True}, {"file": "fleet.yaml"}, {"file": "/etc/hostname"}, {"file": "../x"},
    {"at": "1h", "node": "a100-0", "action": "remove"}, {"at": "nan", "action": "explode"},
    "templates/job.yaml", "templates", "/etc", "../../..", ".", "fleet.yaml",
    ["device-plugin"], ["dra", "dra"], ["gpu"], 1000000, 5001, 1e9, 100,
]


def _scenario_files(draw: st.DrawFn) -> dict[str, Content]:
    """Files a scenario may name: a fleet file, a template (a claim template and a Job) and
    the Kueue files of ``spec.queueing``."""
    job = (seeds.ROOT / "examples/scheduling/dra-workloads.yaml").read_text()
    fleet = copy.deepcopy(seeds.fleets()[0][1])
    for pool in fleet["spec"]["pools"]:
        pool["count"] = 1
    return {"fleet.yaml": dump_yaml([fleet]).encode(),
            "templates/job.yaml": job.split("\n---\napiVersion: v1\nkind: Pod")[0].encode(),
            **seeds.kueue_files()}


@st.composite
def scenario_cases(draw: st.DrawFn) -> Case:
    name, doc = draw(st.sampled_from(seeds.scenarios() + seeds.queueing_scenarios()))
    files = _scenario_files(draw)
    queueing = doc["spec"].get("queueing")
    if isinstance(queueing, dict) and queueing.get("kueue") in files and rarely(draw, 3):
        # The Kueue file it queues through spoiled instead (or as well).
        kueue = str(queueing["kueue"])
        kueue_docs = [d for d in seeds.load_all(files[kueue]) if isinstance(d, dict)]
        files[kueue], _ = _spoil(draw, kueue_docs, _manifest_donors(), KUEUE_VALUES)
        name += f"+{kueue}"
        if draw(st.booleans()):
            data, mild = dump_yaml([doc]).encode(), "-kueue"
        else:
            data, mild = _spoil(draw, [doc], _donors("scenario"), SCENARIO_VALUES)
    else:
        data, mild = _spoil(draw, [doc], _donors("scenario"), SCENARIO_VALUES)
    files["scenario.yaml"] = data
    if draw(st.booleans()):
        args = ["simulate", "--scenario", "{in}/scenario.yaml", "--quiet", "--out", "{out}"]
        args += _option(draw, 20, *(["--seed", s] for s in SEEDS))
        args += _option(draw, 20, ["--compare", "dra"], ["--compare", "device-plugin,dra"],
                        ["--compare", "dra,dra"], ["--compare", "gpu"], ["--compare", ""])
    else:
        args = ["sweep", "scenarios", "-f", "{in}/scenario.yaml", "--workers", "1",
                "--seeds", draw(st.sampled_from(["1", "2"]))]
        args += _option(draw, 40, ["-o", "json"], ["-o", "csv"], ["-o", "table"])
        args += _option(draw, 30, ["--out", "{out}"])
    return Case(f"scenario{mild}:{name}", tuple(args), files)


CSV_VALUES = ["", "-1", "0", "1", "2", "8", "9", "16", "1000000", "9" * 5000, str(2**63),
              str(2**64), "99999999999999999999", "1e3", "nan", "inf", " 12", "0x10", "1_000",
              "١٢", "=1+1", "+1", "@SUM(A1)", "-2", "x" * 200_000, "a\x00b", "a\nb", '"', "\u202e",
              "V100M16", "P100|T4", "A10", "H100", "1001", "500"]


def _mutate_csv(draw: st.DrawFn, text: str) -> bytes:
    rows = seeds.csv_rows(text)
    for _ in range(draw(st.integers(0, 3))):
        op = draw(st.sampled_from(["cell", "cell", "cell", "drop_column", "add_column",
                                   "drop_header", "dup_rows", "short_row", "drop_rows"]))
        if op == "cell" and len(rows) > 1:
            row = rows[draw(st.integers(1, len(rows) - 1))]
            if row:
                row[draw(st.integers(0, len(row) - 1))] = draw(st.sampled_from(CSV_VALUES))
        elif op == "drop_column" and rows and rows[0]:
            column = draw(st.integers(0, len(rows[0]) - 1))
            rows = [r[:column] + r[column + 1:] for r in rows]
        elif op == "add_column":
            rows = [[*r, draw(st.sampled_from(CSV_VALUES))] for r in rows]
        elif op == "drop_header":
            rows = rows[1:]
        elif op == "dup_rows" and len(rows) > 1:
            rows += rows[1:] * draw(st.sampled_from([2, 10]))
        elif op == "short_row" and len(rows) > 1:
            i = draw(st.integers(1, len(rows) - 1))
            rows[i] = rows[i][: draw(st.integers(0, max(0, len(rows[i]) - 1)))]
        elif op == "drop_rows":
            rows = rows[: draw(st.integers(0, len(rows)))]
    data = seeds.csv_text(rows).encode("utf-8", "surrogatepass")
    for _ in range(draw(st.integers(0, 2))):
        data = mutate_bytes(draw, data)
    return data


def _trace_args(draw: st.DrawFn, workload: str) -> list[str]:
    policies = draw(st.lists(st.sampled_from(POLICIES), min_size=1, max_size=2, unique=True))
    policy = draw(st.sampled_from(["all", "", "Nope", "FGD,,", "fgd"])) if rarely(
        draw, 10) else ",".join(policies)
    if draw(st.booleans()):
        args = ["replay", "alibaba-2023", "--workload", workload, "--policy", policy]
    else:
        args = ["sweep", "alibaba-2023", "--workloads", workload, "--policies", policy]
    args += ["--trace-dir", "{in}/trace", "--workers", "1",
             "--seeds", draw(st.sampled_from(["1", "2"]))]
    args += _option(draw, 40, ["-o", "json"], ["-o", "csv"], ["-o", "table"])
    args += _option(draw, 20, ["--out", "{out}"])
    return args


@st.composite
def trace_cases(draw: st.DrawFn) -> Case:
    workload = draw(st.sampled_from(seeds.TRACE_WORKLOADS))
    slices = seeds.trace_slices()
    pod_file = f"openb_pod_list_{workload}.csv"
    files: dict[str, Content] = {f"trace/{seeds.NODE_FILE}": slices[seeds.NODE_FILE].encode(),
                                 f"trace/{pod_file}": slices[pod_file].encode()}
    which = draw(st.sampled_from([seeds.NODE_FILE, pod_file, "both"]))
    for name in ([seeds.NODE_FILE, pod_file] if which == "both" else [which]):
        files[f"trace/{name}"] = _mutate_csv(draw, slices[name])
    return Case(f"trace:{workload}", tuple(_trace_args(draw, workload)), files)


# --- spoiled command lines -------------------------------------------------------------------

def valid_invocations() -> dict[str, tuple[tuple[str, ...], dict[str, Content]]]:
    """One working invocation per verb (and the files it reads)."""
    root = seeds.ROOT
    cluster: dict[str, Content] = {f"cluster/{n}": d for n, d in seeds.cluster_files().items()}
    work: dict[str, Content] = {
        "m/two-h100.yaml": (root / "examples/claims/two-h100.yaml").read_bytes(),
        "m/dra-workloads.yaml": (root / "examples/scheduling/dra-workloads.yaml").read_bytes()}
    scenario: dict[str, Content] = {"scenario.yaml": dump_yaml([seeds.scenarios()[1][1]]).encode()}
    slices = seeds.trace_slices()
    trace: dict[str, Content] = {
        f"trace/{n}": slices[n].encode() for n in (seeds.NODE_FILE, "openb_pod_list_default.csv")}
    fleet: dict[str, Content] = {"fleet.yaml": dump_yaml([seeds.fleets()[0][1]]).encode()}
    kueue: dict[str, Content] = {
        "q/big-gang.yaml": (root / "tests/data/queueing/big-gang-feasibility.yaml").read_bytes()}
    tr = ("--trace-dir", "{in}/trace", "--seeds", "1", "--workers", "1")
    autoscale: dict[str, Content] = {
        "as/fleet.yaml": (seeds.TEST_DATA / "autoscale/fleet.yaml").read_bytes(),
        "as/pending.yaml": (seeds.TEST_DATA / "autoscale/pending.yaml").read_bytes()}
    migrate: dict[str, Content] = {
        f"manifests/{p.name}": p.read_bytes()
        for p in sorted((seeds.MIGRATE / "manifests").glob("*.yaml"))}
    migrate["dump.yaml"] = (seeds.MIGRATE / "cluster-dump.yaml").read_bytes()
    migrate["fleet.yaml"] = (seeds.MIGRATE / "fleet.yaml").read_bytes()
    return {
        "validate": (("validate", "-f", "{in}/m"), work),
        "import": (("import", "-f", "{in}/cluster", "-o", "json"), cluster),
        "allocate": (("allocate", "-f", "{in}/cluster", "-f", "{in}/m/two-h100.yaml",
                      "--node", "h100-node-01"), {**cluster, **work}),
        "schedule": (("schedule", "-f", "{in}/cluster", "-f", "{in}/m", "-o", "table",
                      "--seed", "3"), {**cluster, **work}),
        "explain pod": (("explain", "pod", "ml/pair", "-f", "{in}/cluster", "-f", "{in}/m"),
                        {**cluster, **work}),
        "explain claim": (("explain", "claim", "two-h100", "-n", "ml", "-f", "{in}/cluster",
                           "-f", "{in}/m"), {**cluster, **work}),
        "explain workload": (("explain", "workload", "default/big-train", "-f", "{in}/cluster",
                              "-f", "{in}/q"), {**cluster, **kueue}),
        "fleet": (("fleet", "-f", "{in}/fleet.yaml", "--seed", "1"), fleet),
        "admit": (("admit", "-f", "{in}/cluster", "-f", "{in}/q", "-o", "json"),
                  {**cluster, **kueue}),
        "autoscale": (("autoscale", "-f", "{in}/as", "--model", "karpenter", "--expander",
                       "price", "-o", "json"), autoscale),
        "migrate inventory": (("migrate", "inventory", "-f", "{in}/manifests", "-o", "csv"),
                              migrate),
        "migrate convert": (("migrate", "convert", "-f", "{in}/manifests", "-o", "{out}",
                             "--share-memory", "8Gi"), migrate),
        "migrate check": (("migrate", "check", "-f", "{in}/dump.yaml", "-o", "json"), migrate),
        "migrate plan": (("migrate", "plan", "-f", "{in}/dump.yaml", "--out", "{out}",
                          "--duration", "30m"), migrate),
        "simulate": (("simulate", "--scenario", "{in}/scenario.yaml", "--quiet", "--out",
                      "{out}", "--compare", "dra"), scenario),
        "sweep scenarios": (("sweep", "scenarios", "-f", "{in}/scenario.yaml", "--seeds", "1",
                             "--workers", "1", "-o", "csv"), scenario),
        "replay": (("replay", "alibaba-2023", "--policy", "FGD", *tr, "-o", "json"), trace),
        "sweep alibaba-2023": (("sweep", "alibaba-2023", "--policies", "BestFit", *tr,
                                "--out", "{out}"), trace),
    }


OUT_VALUES = ["{in}/m/two-h100.yaml", "{in}/m/two-h100.yaml/sub", "/proc/dralab-fuzz",
              "/dev/null", "", "{in}/scenario.yaml", "{in}/trace/" + seeds.NODE_FILE]
# Where migrate's outputs may not go: an input file, inside the input directory, above it.
MIGRATE_OUT_VALUES = ["{in}/manifests/vllm-deployment.yaml", "{in}/manifests",
                      "{in}/manifests/converted", "{in}", "{in}/..", "{in}/dump.yaml",
                      "/proc/dralab-fuzz", "/dev/null", ""]
ODD_OPTIONS = ["--nope", "-x", "--seed", "--out", "--workers", "--dask", "-f", "--node",
               "--config", "--feature-gates", "--trace-dir", "--limit-pods", "-o", "--help",
               "--version"]


@st.composite
def argv_cases(draw: st.DrawFn) -> Case:
    invocations = valid_invocations()
    verb = draw(st.sampled_from(sorted(invocations)))
    argv, files = invocations[verb]
    args = list(argv)
    skip = 2 if verb in ("explain pod", "explain claim", "explain workload", "sweep scenarios",
                         "sweep alibaba-2023", "replay") or verb.startswith("migrate") else 1
    op = draw(st.sampled_from(["drop", "value", "value", "add", "repeat", "out", "dask", "none",
                               "migrate"]))
    if op == "drop" and len(args) > skip:
        del args[draw(st.integers(skip, len(args) - 1))]
    elif op == "value" and len(args) > skip:
        args[draw(st.integers(skip, len(args) - 1))] = draw(st.sampled_from(JUNK + SEEDS))
    elif op == "add":
        args.insert(draw(st.integers(1, len(args))), draw(st.sampled_from(ODD_OPTIONS)))
        if draw(st.booleans()):
            args.append(draw(st.sampled_from(JUNK)))
    elif op == "repeat" and len(args) > skip + 1:
        i = draw(st.integers(skip, len(args) - 2))
        args += args[i:i + 2]
    elif op == "out" and verb in ("simulate", "replay", "sweep scenarios",
                                  "sweep alibaba-2023"):
        args += ["--out", draw(st.sampled_from(OUT_VALUES))]
    elif op == "out" and verb in ("migrate convert", "migrate plan"):
        option = "-o" if verb == "migrate convert" else "--out"
        args[args.index(option) + 1] = draw(st.sampled_from(MIGRATE_OUT_VALUES))
    elif op == "migrate" and verb in ("migrate convert", "migrate plan"):
        option, values = draw(st.sampled_from(
            [("--share-memory", SHARE_MEMORY)]
            + ([("--duration", DURATIONS)] if verb == "migrate plan" else [])))
        args += [option, draw(st.sampled_from(values))]
    elif op == "dask" and verb.startswith("sweep"):
        args += ["--dask", draw(st.sampled_from(["not a url", "", "tcp://", "x://y",
                                                 "tcp://host:99999999", "\x1b[31m"]))]
    return Case(f"argv:{verb}:{op}", tuple(args), files)


# --- hostile files in every input slot ------------------------------------------------------

# Verb -> how a hostile file reaches it: the argv with {file} (or "-" for stdin) and the
# valid files beside it.
def slots() -> dict[str, tuple[tuple[str, ...], dict[str, Content]]]:
    inv = valid_invocations()
    cluster: dict[str, Content] = {f"cluster/{n}": d for n, d in seeds.cluster_files().items()}
    return {
        "validate": (("validate", "-f", "{file}"), {}),
        "import": (("import", "-f", "{file}"), {}),
        "allocate": (("allocate", "-f", "{in}/cluster", "-f", "{file}", "--node",
                      "h100-node-01"), cluster),
        "schedule": (("schedule", "-f", "{in}/cluster", "-f", "{file}"), cluster),
        "explain pod": (("explain", "pod", "ml/pair", "-f", "{in}/cluster", "-f", "{file}"),
                        cluster),
        "explain claim": (("explain", "claim", "ml/c", "-f", "{in}/cluster", "-f", "{file}"),
                          cluster),
        "explain workload": (("explain", "workload", "default/big-train", "-f", "{in}/cluster",
                              "-f", "{file}"), cluster),
        "schedule --config": (("schedule", "-f", "{in}/cluster", "-f", "{in}/m",
                               "--config", "{file}"), inv["schedule"][1]),
        "explain --config": (("explain", "pod", "ml/pair", "-f", "{in}/cluster", "-f", "{in}/m",
                              "--config", "{file}"), inv["schedule"][1]),
        "fleet": (("fleet", "-f", "{file}"), {}),
        "admit": (("admit", "-f", "{file}"), {}),
        "admit+cluster": (("admit", "-f", "{in}/cluster", "-f", "{file}"), cluster),
        "autoscale": (("autoscale", "-f", "{file}", "-f", "{in}/as/pending.yaml"),
                      inv["autoscale"][1]),
        "autoscale pods": (("autoscale", "-f", "{in}/as/fleet.yaml", "-f", "{file}"),
                           inv["autoscale"][1]),
        "migrate inventory": (("migrate", "inventory", "-f", "{file}"), {}),
        "migrate convert": (("migrate", "convert", "-f", "{file}", "-o", "{out}"), {}),
        "migrate check": (("migrate", "check", "-f", "{file}"), {}),
        "migrate plan": (("migrate", "plan", "-f", "{file}", "--out", "{out}"), {}),
        "simulate": (("simulate", "--scenario", "{file}", "--quiet", "--out", "{out}"), {}),
        "sweep scenarios": (("sweep", "scenarios", "-f", "{file}", "--seeds", "1", "--workers",
                             "1"), {}),
    }


TRACE_VERBS: dict[str, tuple[str, ...]] = {
    "replay": ("replay", "alibaba-2023", "--policy", "FGD", "--trace-dir", "{in}/trace",
               "--seeds", "1", "--workers", "1"),
    "sweep alibaba-2023": ("sweep", "alibaba-2023", "--policies", "BestFit,FGD", "--trace-dir",
                           "{in}/trace", "--seeds", "1", "--workers", "1"),
}
STDIN_SLOTS = ("validate", "import", "allocate", "schedule", "explain pod", "explain claim",
               "explain workload", "fleet", "admit", "autoscale pods", "migrate inventory",
               "migrate convert", "migrate check")


def hostile_case(generator: str, slot: str, content: Content, *, how: str = "file") -> Case:
    """``content`` in ``slot``: a file (``how="file"``), stdin, or inside a directory."""
    args, files = slots()[slot]
    files = dict(files)
    stdin: bytes | None = None
    if how == "stdin":
        assert isinstance(content, bytes)
        target, stdin = "-", content
    elif how == "dir":
        files["h/input.yaml"] = content
        target = "{in}/h"
    else:
        files["input.yaml"] = content
        target = "{in}/input.yaml"
    return Case(f"hostile:{generator}:{how}", tuple(a.replace("{file}", target) for a in args),
                files, stdin)


def hostile_trace_case(generator: str, verb: str, which: str, content: Content) -> Case:
    """``content`` as the node list or the default workload's pod list of a trace slice."""
    slices = seeds.trace_slices()
    names = {"nodes": seeds.NODE_FILE, "pods": "openb_pod_list_default.csv"}
    files: dict[str, Content] = {f"trace/{n}": slices[n].encode() for n in names.values()}
    files[f"trace/{names[which]}"] = content
    return Case(f"hostile:{generator}:{which}", TRACE_VERBS[verb], files)
