"""Hostile files: what lies in a repository or a dump and should make dralab say "no" in one
line, quickly, with bounded memory (issue 16's reproducers among them).

Each generator takes a size knob (``scale``: 1 is the issue's size, the property tests
draw others) and returns the bytes of a file, or a ``Special`` (a FIFO, a dangling link,
a directory where a file is expected). ``GENERIC`` ones fit any input slot (a manifest, a
Fleet spec, a scenario, a scheduler configuration, a trace CSV); the others are shaped for
one kind of input, so that they get past the reader into the code behind it.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable

try:
    from kueueinputs import cohort_chain, one_queue
except ImportError:  # ``python -m tests.fuzz.rerun``: tests/ is a package, not on sys.path
    from ..kueueinputs import cohort_chain, one_queue  # type: ignore[no-redef]

from . import seeds
from .harness import Content, Special

Generator = Callable[[int], Content]


def alias_bomb(scale: int) -> bytes:
    """The "billion laughs": ``levels`` levels of 9 aliases (issue 16: 9 levels, 1 KB)."""
    levels = 5 + 4 * scale
    lines = ["a0: &a0 [lol,lol,lol,lol,lol,lol,lol,lol,lol]"]
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return ("\n".join(lines) + "\n").encode()


def alias_bomb_manifest(scale: int) -> bytes:
    """The bomb inside a ConfigMap that is otherwise valid, keys of one map by merge keys."""
    levels = 5 + 4 * scale
    anchors = "".join(
        f"  l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 9) + "]\n" for i in range(1, levels))
    return (f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: bomb}}\ndata:\n"
            f"  l0: &l0 [x,x,x,x,x,x,x,x,x]\n{anchors}"
            f"  big: *l{levels - 1}\n").encode()


def recursive_alias(scale: int) -> bytes:
    """A node that contains itself (PyYAML builds a cyclic list)."""
    return b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: loop}\ndata: &a {k: *a}\n"


def merge_key_fan(scale: int) -> bytes:
    """Merge keys fanned out: every level merges the previous one nine times."""
    levels = 4 + 3 * scale
    out = ["m0: &m0 {a: 1, b: 2}"]
    out += [f"m{i}: &m{i} {{<<: [{', '.join([f'*m{i - 1}'] * 9)}], k{i}: {i}}}"
            for i in range(1, levels)]
    return ("\n".join(out) + "\n").encode()


def deep_yaml_flow(scale: int) -> bytes:
    """A ConfigMap value nested 400 levels in flow style (issue 16: crashes writing it out)."""
    depth = 100 * (3 * scale + 1)
    return ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {k: "
            + "[" * depth + "]" * depth + "}\n").encode()


def deep_yaml_block(scale: int) -> bytes:
    """Block mappings nested by indentation."""
    depth = 150 * scale
    return "".join(f"{' ' * i}k{i}:\n" for i in range(depth)).encode() + b" " * depth + b"v\n"


def deep_json(scale: int) -> bytes:
    """A JSON document nested 1,500 levels (issue 16: over 1,000 gives exit 70)."""
    depth = 1500 * scale
    return ('{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": '
            + '{"k": ' * depth + "1" + "}" * depth + "}").encode()


def huge_int(scale: int) -> bytes:
    """A bare integer of 5,000 digits (over Python's int-str limit)."""
    return ("a: " + "9" * (5000 * scale) + "\n").encode()


def huge_int_json(scale: int) -> bytes:
    return ('{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, '
            '"status": {"capacity": {"pods": ' + "9" * (5000 * scale) + "}}}").encode()


def huge_float(scale: int) -> bytes:
    return ("a: 1" + "0" * (400 * scale) + ".5e99999\nb: -1e400\nc: .nan\n").encode()


def binary_garbage(scale: int) -> bytes:
    return random.Random(scale).randbytes(4096 * scale)


def non_utf8(scale: int) -> bytes:
    """Valid YAML but for one byte (issue 16: exit 70 on stdin, 2 from a file)."""
    return b"apiVersion: v1\nkind: Node\xff\nmetadata: {name: n}\n"


def utf16(scale: int) -> bytes:
    return "apiVersion: v1\nkind: Node\nmetadata: {name: n}\n".encode("utf-16")


def control_chars(scale: int) -> bytes:
    """Names, keys and values holding terminal escapes, a right-to-left override, NUL."""
    return (b'apiVersion: v1\nkind: "Node\\e[2J"\nmetadata:\n  name: "n\\u202e\\e[31m"\n'
            b'  labels: {"\\e]0;pwned\\a": "\\0"}\nstatus:\n  capacity: {cpu: "1\\e[0m"}\n'
            )


def raw_control_chars(scale: int) -> bytes:
    """The same bytes raw in the file (YAML refuses most of them)."""
    return b"apiVersion: v1\nkind: Node\nmetadata:\n  name: n\x1b[31m\x07\n  x: \x00\n"


def huge_value(scale: int) -> bytes:
    """A 10 MB label value (issue 16: echoed whole in one error line)."""
    return (b"apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  labels:\n    a: "
            + b"b" * (10_000_000 * scale // 4) + b"\n")


def long_line(scale: int) -> bytes:
    """Five megabytes on one line and no newline."""
    return b"x" * (5_000_000 * scale // 4)


def many_documents(scale: int) -> bytes:
    return b"---\n" * (50_000 * scale)


def many_keys(scale: int) -> bytes:
    return ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n"
            + "".join(f"  k{i}: v\n" for i in range(50_000 * scale))).encode()


def duplicate_keys(scale: int) -> bytes:
    return (b"apiVersion: v1\nkind: Node\nmetadata: {name: a, name: b}\nmetadata: {name: c}\n"
            b"kind: Pod\n")


def python_tags(scale: int) -> bytes:
    return (b"apiVersion: v1\nkind: !!python/object/apply:os.system ['true']\n"
            b"metadata: !!python/name:os.system {name: x}\ndata: !!binary AAAA\n")


def odd_tags(scale: int) -> bytes:
    return (b"apiVersion: !!int v1\nkind: !!bool Node\nmetadata: !!set {name}\n"
            b"spec: !!timestamp 2001-12-14\nx: !!float nan\ny: !foo {}\n")


def empty(scale: int) -> bytes:
    return b""


def whitespace(scale: int) -> bytes:
    return b"\n \n\t\n---\n...\n"


def only_null(scale: int) -> bytes:
    return b"null\n---\n~\n---\n[]\n---\n7\n"


def fifo(scale: int) -> Content:
    """A named pipe with no writer (issue 16: `-f` blocks)."""
    return Special("fifo")


def dangling_link(scale: int) -> Content:
    return Special("dangling")


def directory(scale: int) -> Content:
    """A directory where a file is expected."""
    return Special("dir")


def dev_zero(scale: int) -> Content:
    """A symbolic link to /dev/zero: endless input."""
    return Special("abslink", "/dev/zero")


GENERIC: dict[str, Generator] = {f.__name__: f for f in (
    alias_bomb, alias_bomb_manifest, recursive_alias, merge_key_fan, deep_yaml_flow,
    deep_yaml_block, deep_json, huge_int, huge_int_json, huge_float, binary_garbage, non_utf8,
    utf16, control_chars, raw_control_chars, huge_value, long_line, many_documents, many_keys,
    duplicate_keys, python_tags, odd_tags, empty, whitespace, only_null, fifo, dangling_link,
    directory, dev_zero)}


# --- shaped for one kind of input -----------------------------------------------------------

def _node(capacity: str) -> bytes:
    return (f"apiVersion: v1\nkind: Node\nmetadata: {{name: h100-node-01}}\n"
            f"status: {{capacity: {{cpu: {capacity}}}, allocatable: {{cpu: {capacity}}}}}\n"
            ).encode()


def manifest_hostile() -> dict[str, Generator]:
    claim = ("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {{name: c, "
             "namespace: ml}}\nspec:\n  devices:\n    requests:\n    - name: gpus\n      "
             "exactly:\n        deviceClassName: gpu.nvidia.com\n        count: {count}\n"
             "        selectors: [{{cel: {{expression: {expr}}}}}]\n")
    return {
        "quantity_huge_exponent": lambda s: _node('"1e99999999"'),
        "quantity_huge_digits": lambda s: _node('"' + "9" * 5000 + 'Gi"'),
        "quantity_tiny": lambda s: _node('"1e-99999999"'),
        "quantity_long_fraction": lambda s: _node('"0.' + "0" * 4000 + '1"'),
        "slice_spec_list": lambda s: (b"apiVersion: resource.k8s.io/v1beta1\nkind: ResourceSlice"
                                      b"\nmetadata: {name: s}\nspec: [x]\n"),
        "claim_count_huge": lambda s: claim.format(count=2**63, expr="'true'").encode(),
        "claim_regex_bomb": lambda s: claim.format(
            count=1, expr=json.dumps('"' + "a" * 40 + '!".find("(a+)+$") == ""')).encode(),
        "claim_list_doubling": lambda s: claim.format(count=1, expr=json.dumps(
            "cel.bind(v0, [1,2,3,4,5,6,7,8,9,10], " + "".join(
                f"cel.bind(v{i}, v{i - 1} + v{i - 1}, " for i in range(1, 26))
            + "size(v25) > 0" + ")" * 26)).encode(),
        "list_of_many_pods": lambda s: json.dumps({"apiVersion": "v1", "kind": "List", "items": [
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}"},
             "spec": {"containers": [{"name": "c", "image": "i"}]}}
            for i in range(3000 * s)]}).encode(),
        "job_huge_parallelism": lambda s: (
            b"apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  parallelism: "
            b"2000000000\n  completions: 2000000000\n  template:\n    spec:\n      "
            b"restartPolicy: Never\n      containers: [{name: c, image: i}]\n"),
    }


def _scenario(spec: str) -> bytes:
    return ("apiVersion: dralab.dev/v1alpha1\nkind: Scenario\nmetadata: {name: s}\nspec:\n"
            + spec).encode()


_POOL = ("  fleet:\n    spec:\n      pools:\n      - {{name: a, count: {count}, cpu: '64', "
         "memory: 256Gi, gpu: {{model: a100-80gb, count: 8}}}}\n")
_KIND = "  workload:\n  - {{name: k, arrivalRate: {rate}, duration: {duration}, cpu: '1'{extra}}}\n"


def scenario_hostile() -> dict[str, Generator]:
    def scenario(duration: str = "1h", rate: str = "2/h", count: str = "1",
                 kind_duration: str = "{distribution: fixed, mean: 10m}", extra: str = "",
                 top: str = "") -> Generator:
        return lambda s: _scenario(
            f"  duration: {duration}\n{top}" + _POOL.format(count=count)
            + _KIND.format(rate=rate, duration=kind_duration, extra=extra))

    return {
        "duration_nan": scenario(duration=".nan"),
        "duration_inf": scenario(duration=".inf"),
        "rate_inf": scenario(rate="inf/h"),
        "rate_nan": scenario(rate="nan/h"),
        "rate_huge": scenario(rate="1e9/s"),
        "rate_2_64": scenario(rate=f"{2**64}/s"),
        "sample_interval_tiny": scenario(top="  sampleInterval: 0.000000001\n"),
        "pods_per_job_huge": scenario(extra=", podsPerJob: 1e9"),
        "pool_count_huge": scenario(count="1000000"),
        "mean_nan": scenario(kind_duration="{distribution: fixed, mean: .nan}"),
        "sigma_nan": scenario(kind_duration="{distribution: lognormal, mean: 1h, sigma: .nan}"),
        "event_at_nan": scenario(top="  events: [{at: .nan, node: a-0, action: remove}]\n"),
        "pools_nested_list": lambda s: _scenario("  fleet: {spec: {pools: [[1]]}}\n"
                                                 "  workload: []\n"),
        "template_absolute": scenario(extra=", template: /etc"),
        "template_parent": scenario(extra=", template: ../../.."),
        "product_name_quote": scenario(
            extra=', devices: {type: gpu, count: 1, productName: \'NVIDIA L4" || "a" == "a\'}'),
        "fleet_file_outside": lambda s: _scenario(
            "  duration: 1h\n  fleet: {file: /etc/hostname}\n  workload: []\n"),
    }


def fleet_hostile() -> dict[str, Generator]:
    def fleet(pool: str) -> Generator:
        return lambda s: (f"apiVersion: dralab.dev/v1alpha1\nkind: Fleet\nmetadata: {{name: f}}\n"
                          f"spec:\n  pools:\n  - {pool}\n").encode()

    return {
        "fleet_count_huge": fleet("{name: a, count: 1000000, gpu: {model: l4, count: 1}}"),
        "fleet_count_2_64": fleet(f"{{name: a, count: {2**64}, gpu: {{model: l4, count: 1}}}}"),
        "fleet_gpus_huge": fleet("{name: a, count: 1, gpu: {model: l4, count: 100000}}"),
        "fleet_nested_list": lambda s: b"apiVersion: dralab.dev/v1alpha1\nkind: Fleet\n"
                                       b"metadata: {name: f}\nspec: {pools: [[1]]}\n",
        "fleet_memory_huge": fleet("{name: a, count: 1, memory: 1e99999999, cpu: '1e400'}"),
    }


def config_hostile() -> dict[str, Generator]:
    def config(profile: str) -> Generator:
        return lambda s: ("apiVersion: kubescheduler.config.k8s.io/v1\n"
                          f"kind: KubeSchedulerConfiguration\nprofiles:\n- {profile}\n").encode()

    return {
        "config_weight_huge": config("{schedulerName: default-scheduler, plugins: {score: "
                                     "{enabled: [{name: NodeResourcesFit, weight: "
                                     + "9" * 30 + "}]}}}"),
        "config_percentage_nan": config("{schedulerName: default-scheduler, "
                                        "percentageOfNodesToScore: .nan}"),
        # Linear but not cheap: each profile's framework is built (about 2.5 ms a profile).
        "config_many_profiles": lambda s: json.dumps({
            "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": f"s{i}"} for i in range(500 * s)]}).encode(),
        "config_fgd_shapes_huge": config(
            "{schedulerName: default-scheduler, pluginConfig: [{name: FGD, args: {shapes: "
            "[{cpu: '1e99999999', gpus: 1e9, share: -5, weight: .inf}]}}]}"),
    }


NODE_HEADER = "sn,cpu_milli,memory_mib,gpu,model\n"
POD_HEADER = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
              "creation_time,deletion_time,scheduled_time\n")


def csv_hostile() -> dict[str, tuple[str, Generator]]:
    """Name -> (which file: nodes or pods, generator)."""
    def nodes(row: str) -> tuple[str, Generator]:
        return "nodes", lambda s: (NODE_HEADER + "n0,64000,262144,2,V100M16\n" + row).encode()

    def pods(row: str) -> tuple[str, Generator]:
        return "pods", lambda s: (POD_HEADER + "p0,1000,1024,1,1000,,LS,Running,0,1,0\n"
                                  + row).encode()

    return {
        "csv_no_gpu_pod": ("pods", lambda s: (POD_HEADER + "p0,1000,1024,0,0,,LS,Running,0,1,0\n"
                                              ).encode()),
        "csv_nine_gpus": nodes("n1,64000,262144,9,V100M16\n"),
        "csv_int_over_int64": nodes(f"n1,{2**64},262144,2,V100M16\n"),
        "csv_int_huge": pods(f"p1,{'9' * 5000},1024,1,1000,,LS,Running,0,1,0\n"),
        "csv_field_huge": nodes("n1,64000,262144,2," + "V" * 200_000 + "\n"),
        "csv_non_utf8": ("nodes", lambda s: NODE_HEADER.encode() + b"n\xff,64000,262144,2,T4\n"),
        "csv_nul": pods("p\x001,1000,1024,1,1000,,LS,Running,0,1,0\n"),
        "csv_formula": pods("=cmd|' /C calc'!A0,1000,1024,1,1000,@SUM(A1),LS,Running,0,1,0\n"),
        "csv_many_rows": ("pods", lambda s: (POD_HEADER + "".join(
            f"p{i},1000,1024,1,1000,,LS,Running,0,1,0\n" for i in range(300_000 * s))).encode()),
        "csv_zero_resources": nodes("n1,0,0,0,T4\n"),
        "csv_unicode_digits": pods("p1,١٢,1024,1,1000,,LS,Running,0,1,0\n"),
        "csv_quoted_newline": pods('"p\n1",1000,1024,1,1000,,LS,Running,0,1,0\n'),
        "csv_header_only": ("nodes", lambda s: NODE_HEADER.encode()),
        "csv_missing_columns": ("pods", lambda s: b"name,cpu_milli\np0,1\n"),
    }


# --- Kueue objects, autoscaled fleets and migrate inputs (issue 29) -------------------------

# A queue with one flavor and a workload "default/big-train" (the target of the explain
# workload slot) asking for COUNT pods of one CPU each.
_KUEUE = one_queue(cohort="c0").replace("{", "{{").replace("}", "}}") + """---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {{name: big-train, namespace: default}}
spec:
  queueName: lq
  podSets:
  - name: main
    count: {count}
    template:
      spec:
        containers:
        - name: c
          image: x
          resources: {{requests: {{cpu: "1"}}}}
"""
_NODE = ("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
         "status: {allocatable: {cpu: '100', memory: 1Ti, pods: '110'}}\n")


def _kueue(*extra: str, count: int | str = 1) -> bytes:
    return "---\n".join([_KUEUE.format(count=count), *extra]).encode()


_cohorts = cohort_chain


def _big_job(parallelism: int) -> bytes:
    """tests/data/queueing/big-gang.yaml's Job (default/big-train, 8 GPUs a pod by claim)
    with ``parallelism`` pods, under KueueDRADeviceFeasibility (the placement check)."""
    text = (seeds.TEST_DATA / "queueing" / "big-gang.yaml").read_text()
    text = text.replace("parallelism: 5", f"parallelism: {parallelism}").replace(
        "completions: 5", f"completions: {parallelism}")
    assert f"parallelism: {parallelism}" in text
    return (text + "\n---\napiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"
            "featureGates: {KueueDRADeviceFeasibility: true}\n").encode()


def kueue_hostile() -> dict[str, Generator]:
    """Kueue objects at or past the limits of Kueue's CRDs (issue 29), for admit and
    explain workload (the workload is default/big-train)."""
    levels = "".join(f"  - {{nodeLabel: l{i}}}\n" for i in range(1001))
    flavors = "".join(f"    - name: f{i}\n      resources:\n"
                      f"      - {{name: cpu, nominalQuota: '1'}}\n" for i in range(3000))
    return {
        "cohort_chain": lambda s: _kueue(_cohorts(3000 * s, cycle=False)),
        "cohort_cycle": lambda s: _kueue(_cohorts(1500 * s, cycle=True)),
        "cohort_self_parent": lambda s: _kueue(_cohorts(1, cycle=True)),
        "podsets_count_int32_max": lambda s: _kueue(_NODE, count=2**31 - 1),
        "podsets_count_2_31": lambda s: _kueue(count=2**31),
        "podsets_count_int32_max_no_nodes": lambda s: _kueue(count=2**31 - 1),
        "job_parallelism_feasibility": lambda s: _big_job(10**6 * s),
        "priority_class_2_63": lambda s: _kueue(
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\n"
            f"metadata: {{name: p}}\nvalue: {2**63}\n"),
        "preemption_strategy_bogus": lambda s: _kueue(
            "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"
            "fairSharing:\n  enable: true\n  preemptionStrategies: [Bogus]\n"),
        "topology_1001_levels": lambda s: _kueue(
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Topology\nmetadata: {name: t}\n"
            f"spec:\n  levels:\n{levels}"),
        "cluster_queue_3000_flavors": lambda s: (
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: q}\n"
            "spec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [cpu]\n"
            f"    flavors:\n{flavors}").encode(),
    }


# Every one of these is invalid input for Kueue (int32/int64 ranges, enums, the CRDs'
# maxItems): the verbs must refuse it with exit 2 and the field path, not admit on.
KUEUE_INVALID = ("podsets_count_2_31", "priority_class_2_63", "preemption_strategy_bogus",
                 "topology_1001_levels", "cluster_queue_3000_flavors")


def _autoscaled_fleet(autoscaling: str) -> Generator:
    return lambda s: ("apiVersion: dralab.dev/v1alpha1\nkind: Fleet\nmetadata: {name: f}\n"
                      "spec:\n  pools:\n  - {name: cpu, count: 1, cpu: '32', memory: 128Gi}\n"
                      "  - {name: h100, count: 0, cpu: '192', memory: 2Ti, gpu: {model: "
                      f"h100-80gb-sxm, count: 8}}, autoscaling: {{{autoscaling}}}}}\n").encode()


def autoscale_hostile() -> dict[str, Generator]:
    """Fleet specs whose pools' ``autoscaling`` is out of range (for autoscale and fleet)."""
    fine = "pricePerHour: 32.0, provisioningDelay: 5m, priority: 1"
    return {
        "autoscaling_max_1e9": _autoscaled_fleet(f"min: 0, max: 1000000000, {fine}"),
        "autoscaling_max_2_64": _autoscaled_fleet(f"min: 0, max: {2**64}, {fine}"),
        "autoscaling_negative": _autoscaled_fleet(f"min: -5, max: -1, {fine}"),
        "autoscaling_min_over_max": _autoscaled_fleet(f"min: 9, max: 2, {fine}"),
        "autoscaling_price_nan": _autoscaled_fleet(
            "min: 0, max: 3, pricePerHour: .nan, provisioningDelay: 5m"),
        "autoscaling_price_negative_inf": _autoscaled_fleet(
            "min: 0, max: 3, pricePerHour: -.inf, provisioningDelay: 5m"),
        "autoscaling_delay_huge": _autoscaled_fleet(
            "min: 0, max: 3, pricePerHour: 1, provisioningDelay: 1e300h"),
        "autoscaling_delay_unicode": _autoscaled_fleet(
            "min: 0, max: 3, pricePerHour: 1, provisioningDelay: '３m'"),
        "autoscaling_priority_2_63": _autoscaled_fleet(
            f"min: 0, max: 3, pricePerHour: 1, provisioningDelay: 5m, priority: {2**63}"),
    }


AUTOSCALE_INVALID = ("autoscaling_max_2_64", "autoscaling_negative", "autoscaling_min_over_max",
                     "autoscaling_price_nan", "autoscaling_price_negative_inf",
                     "autoscaling_delay_unicode")


def _gpu_pod(gpus: str) -> bytes:
    return ("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n"
            "  containers:\n  - name: c\n    image: x\n    resources: {limits: "
            f"{{nvidia.com/gpu: {gpus}}}}}\n").encode()


def workload_hostile() -> dict[str, Generator]:
    """Workloads as migrate, autoscale and the schedulers read them: GPU counts the API
    server rejects, a Helm template nobody rendered, a duration in other digits."""
    return {
        "pod_gpu_negative": lambda s: _gpu_pod("-1"),
        "pod_gpu_half": lambda s: _gpu_pod("0.5"),
        "pod_gpu_huge": lambda s: _gpu_pod(str(2**63)),
        "helm_template_raw": lambda s: (
            b"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ include \"x.fullname\""
            b" . }}\n  labels: {{- include \"x.labels\" . | nindent 4 }}\nspec:\n  replicas: "
            b"{{ .Values.replicas }}\n  template:\n    spec:\n      containers:\n      - name: "
            b"c\n        resources:\n          limits:\n            nvidia.com/gpu: "
            b"{{ .Values.gpus }}\n{{- if .Values.extra }}\n        env: []\n{{- end }}\n"),
    }


# Not pod_gpu_huge: the API server takes 2^63 GPUs (its integer check, MilliValue() % 1000,
# reads the amount's low 64 bits, which are 0); migrate lists it and cannot convert it (exit 1).
WORKLOAD_INVALID = ("pod_gpu_negative", "pod_gpu_half")


def scenario_duration_hostile() -> dict[str, Generator]:
    """Scenario durations in digits other than ASCII (``\\d`` matches them all)."""
    return {
        "duration_arabic_indic": lambda s: _scenario(
            "  duration: '٣s'\n" + _POOL.format(count=1)
            + _KIND.format(rate="2/h", duration="{distribution: fixed, mean: 10m}", extra="")),
        "duration_fullwidth": lambda s: _scenario(
            "  duration: 1h\n" + _POOL.format(count=1)
            + _KIND.format(rate="2/h", duration="{distribution: fixed, mean: '３m'}", extra="")),
    }


SCENARIO_INVALID = ("duration_arabic_indic", "duration_fullwidth")
