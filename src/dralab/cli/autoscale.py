"""``dralab autoscale``: one Cluster Autoscaler (or Karpenter) loop over a snapshot."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypeVar

import click

from dralab.api.durations import parse_go_duration
from dralab.api.errors import InputError
from dralab.api.features import FeatureGates
from dralab.api.io import dumps
from dralab.autoscale import EXPANDERS, MODELS, read_input, run_once
from dralab.autoscale.capacityquota import is_capacity_quota, read_capacity_quotas
from dralab.autoscale.expanders import expander_error
from dralab.autoscale.karpenter_preferences import PREFERENCE_POLICIES
from dralab.autoscale.limits import parse_min_max
from dralab.autoscale.options import ca_options
from dralab.autoscale.priority_config import is_priority_configmap, read_priorities

from .common import EXIT_OK, EXIT_UNSCHEDULABLE, one_line_errors
from .kinds import AUTOSCALE, is_fleet, use_kinds, warn_unused
from .sources import LIVE_HELP, source_options, sources

# The Karpenter model reads karpenter.sh NodePools and NodeClaims too.
AUTOSCALE_KARPENTER = replace(AUTOSCALE, uses=(AUTOSCALE.uses or frozenset()) | {
    ("karpenter.sh", "NodePool"), ("karpenter.sh", "NodeClaim")})


def render_table(doc: dict[str, Any]) -> str:
    """One line per decision: ACTION, TARGET (pool, pod or node), COUNT, DETAIL."""
    rows = [("ACTION", "TARGET", "COUNT", "DETAIL")]
    for up in doc["scaleUp"]:
        rows.append(("scale-up", up["pool"], f"+{up['add']}", ",".join(up["pods"])))
    for item in doc["pending"]:
        rows.append(("pending", item["pod"], "-", item["reason"]))
    for down in doc["scaleDown"]:
        rows.append(("scale-down", down["node"], "-1",
                     f"pool {down['pool']}, utilization {down['utilization']:.2f}"))
    for kept in doc.get("unremovable", []):
        detail = f"{kept['reason']}: {kept['detail']}" if kept["detail"] else kept["reason"]
        rows.append(("keep", kept["node"], "-", detail))
    if len(rows) == 1:
        rows.append(("none", "-", "-", "no pending pods and no node to remove"))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    return "".join("   ".join(cell.ljust(widths[i]) if i < 3 else cell
                              for i, cell in enumerate(row)) + "\n" for row in rows)


class GoDuration(click.ParamType[float]):
    """A duration as Cluster Autoscaler's flags take it (Go's time.ParseDuration:
    "10m", "1h30m", "90s", "0"), in seconds; not negative."""

    name = "duration"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> float:
        if isinstance(value, int | float):
            return float(value)
        text = str(value).strip()
        try:
            seconds = parse_go_duration(text)
        except ValueError:
            seconds = -1.0
        if seconds < 0 or text.startswith("-"):
            self.fail(f"invalid duration {text!r} (use e.g. 10m, 1h30m, 90s)", param, ctx)
        return seconds


class MinMax(click.ParamType[tuple[int, int]]):
    """CA's "<min>:<max>" integer pair (--cores-total, --memory-total)."""

    name = "min:max"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> tuple[int, int]:
        if isinstance(value, tuple):
            return value
        try:
            return parse_min_max(value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


class ExpanderChain(click.ParamType[str]):
    """CA's --expander: one expander or a comma-separated chain (``priority,least-waste``),
    each filter applied to what the previous kept."""

    name = "expander[,expander...]"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> str:
        text = str(value)
        problem = expander_error(text)
        if problem is not None:
            self.fail(problem, param, ctx)
        return ",".join(part.strip() for part in text.split(","))


FC = TypeVar("FC", bound=Callable[..., Any])


def _ca_bool(name: str, default: bool, text: str) -> Callable[[FC], FC]:
    """A Go-style boolean flag: ``--name`` alone is true, ``--name=false`` false."""
    return click.option(f"--{name}", type=click.BOOL, default=default, is_flag=False,
                        flag_value=True, show_default=True, help=text)


@click.command("autoscale", epilog=LIVE_HELP)
@source_options
@click.option("--model", type=click.Choice(list(MODELS)), default="cluster-autoscaler",
              show_default=True, help="The autoscaler to model.")
@click.option("--expander", type=ExpanderChain(), default="least-waste",
              show_default=True, help="How Cluster Autoscaler picks among node groups: "
              f"one of {', '.join(EXPANDERS)}, or several separated by commas, applied in "
              "turn until one option is left (priority,least-waste). The priority "
              "expander reads the ConfigMap cluster-autoscaler-priority-expander among the "
              "inputs (data.priorities: priority -> regular expressions on pool names), "
              "else the pools' autoscaling.priority.")
@click.option("--scale-down-utilization-threshold", type=click.FloatRange(0, 1), default=0.5,
              show_default=True, help="Cluster Autoscaler: a node whose utilisation (CPU or "
              "memory requests, or its most used DRA pool) is above this is kept.")
@click.option("--scale-down-gpu-utilization-threshold", type=click.FloatRange(0, 1),
              default=0.5, show_default=True,
              help="The same for GPU nodes (a GPU label or GPU extended resource).")
@click.option("--scale-down-unneeded-time", type=GoDuration(), default="10m",
              show_default=True, help="How long a node must be unneeded before it goes.")
@click.option("--scale-down-unready-time", type=GoDuration(), default="20m",
              show_default=True, help="The same for a node that is not Ready.")
@click.option("--scale-down-delay-after-add", type=GoDuration(), default="10m",
              show_default=True, help="No scale-down this long after a scale-up.")
@_ca_bool("scale-down-unready-enabled", True, "Whether nodes that are not Ready may go.")
@_ca_bool("ignore-daemonsets-utilization", False,
          "Leave DaemonSet pods out of the utilisation of a node.")
@_ca_bool("ignore-mirror-pods-utilization", False,
          "Leave mirror (static) pods out of the utilisation of a node.")
@_ca_bool("skip-nodes-with-system-pods", True, "Keep nodes running kube-system pods (not "
          "DaemonSet or mirror pods) until --blocking-system-pod-distruption-timeout.")
@_ca_bool("skip-nodes-with-local-storage", True,
          "Keep nodes running pods with emptyDir or hostPath volumes.")
@_ca_bool("skip-nodes-with-custom-controller-pods", True,
          "Keep nodes running pods whose controller is not a ReplicationController, Job, "
          "ReplicaSet or StatefulSet.")
@click.option("--blocking-system-pod-distruption-timeout", type=GoDuration(), default="1h",
              show_default=True, help="After this, kube-system pods no longer keep their "
              "node (CA's flag name, spelling included).")
@click.option("--max-scale-down-parallelism", type=click.IntRange(min=0), default=10,
              show_default=True, help="Most nodes deleted at once (empty ones first); "
              "also bounds how many unneeded nodes a loop looks for.")
@click.option("--max-drain-parallelism", type=click.IntRange(min=0), default=1,
              show_default=True, help="Of those, most nodes that need a drain.")
@click.option("--max-nodes-per-scaleup", "max_nodes_per_scaleup", type=click.IntRange(min=0),
              default=1000, show_default=True,
              help="Most nodes one scale-up adds (the estimator's limit; 0: none).")
@_ca_bool("enforce-node-group-min-size", False,
          "Scale node groups below their min size up to it.")
@_ca_bool("balance-similar-node-groups", False,
          "Detect similar node groups and balance the number of nodes between them.")
@click.option("--balancing-ignore-label", "balancing_ignore_labels", multiple=True,
              metavar="LABEL", help="A label to ignore, beside CA's own set, when comparing "
              "node groups for --balance-similar-node-groups. Repeatable.")
@_ca_bool("capacity-quotas-enabled", False,
          "Read the CapacityQuota objects (autoscaling.x-k8s.io/v1beta1) among the inputs: "
          "per node selector caps on the cpu, memory, nodes and GPUs scale-up may add.")
@_ca_bool("fastpath-binpacking-enabled", False,
          "Estimate one group of equivalent pods per node group by arithmetic after "
          "simulating one node (CA's fastpath binpacking; a speed path).")
@click.option("--expendable-pods-priority-cutoff", type=int, default=-10, show_default=True,
              help="Pending pods with a priority below this cause no scale-up.")
@click.option("--max-nodes-total", type=click.IntRange(min=0), default=0, show_default=True,
              help="Most nodes in all node groups together (0: no limit).")
@click.option("--cores-total", type=MinMax(), default="0:320000", show_default=True,
              help="Fewest and most cores in the cluster, <min>:<max>.")
@click.option("--memory-total", type=MinMax(), default="0:6400000", show_default=True,
              help="Fewest and most gigabytes (GiB) of memory in the cluster, <min>:<max>.")
@_ca_bool("ignore-dra-requests", True, "Karpenter: ignore pods' DRA requests, as "
          "Karpenter's flag of that name (its default): pods with resource claims get no "
          "launch. With false, dralab places their claims on the template nodes' "
          "ResourceSlices, as Karpenter's DRA scheduling does.")
@click.option("--preference-policy", type=click.Choice(list(PREFERENCE_POLICIES)),
              default="Respect", show_default=True, help="Karpenter: Respect tries a pod's "
              "preferred node affinity as a requirement first (relaxed when no type takes "
              "the pod); Ignore leaves preferences out.")
@click.option("-o", "--output", type=click.Choice(["table", "json", "yaml"]),
              default="table", show_default=True, help="Output format.")
@one_line_errors
def autoscale_cmd(filenames: tuple[str, ...], kubeconfig: str | None, context: str | None,
                  model: str, expander: str, scale_down_utilization_threshold: float,
                  scale_down_gpu_utilization_threshold: float, scale_down_unneeded_time: float,
                  scale_down_unready_time: float, scale_down_delay_after_add: float,
                  scale_down_unready_enabled: bool, ignore_daemonsets_utilization: bool,
                  ignore_mirror_pods_utilization: bool, skip_nodes_with_system_pods: bool,
                  skip_nodes_with_local_storage: bool,
                  skip_nodes_with_custom_controller_pods: bool,
                  blocking_system_pod_distruption_timeout: float,
                  max_scale_down_parallelism: int, max_drain_parallelism: int,
                  max_nodes_per_scaleup: int, enforce_node_group_min_size: bool,
                  balance_similar_node_groups: bool, balancing_ignore_labels: tuple[str, ...],
                  expendable_pods_priority_cutoff: int, capacity_quotas_enabled: bool,
                  fastpath_binpacking_enabled: bool,
                  max_nodes_total: int,
                  cores_total: tuple[int, int], memory_total: tuple[int, int],
                  ignore_dra_requests: bool, preference_policy: str, output: str) -> None:
    """One autoscaler loop: which node pools would fix the pending pods, and which
    nodes could go.

    Input: one Fleet (dralab.dev/v1alpha1) whose pools carry `autoscaling: {min, max,
    pricePerHour, provisioningDelay, priority}`, plus pods/workloads, claims,
    templates and classes; the Fleet's current nodes are generated as `dralab fleet`
    would, or are the input's Nodes labelled dralab.dev/pool: NAME. Pending pods are
    first scheduled on the existing nodes; those still pending are tried on each
    pool's template nodes (scale-up); when none needed a scale-up, the nodes at or
    under the utilisation threshold whose pods can all move are listed (scale-down),
    and the other nodes of the autoscaled pools are kept with Cluster Autoscaler's
    reason (NotUnderutilized, NoPlaceToMovePods, ScaleDownDisabledAnnotation, ...).
    The Cluster Autoscaler flags are CA's, with CA's defaults. With --model karpenter
    the karpenter.sh/v1 NodePools among the inputs give their disruption block, limits,
    weight and template (labels, taints, requirements picking the pools that are their
    types); with several, each autoscaled pool is copied per NodePool (NODEPOOL-POOL).
    Its karpenter.sh/v1 NodeClaims without a node yet are capacity in flight, and a
    node whose NodeClaim is not Initialized is in flight. JSON/YAML: {scaleUp: [{pool,
    add, pods}], pending: [{pod, reason}], scaleDown: [{node, pool, utilization}],
    unremovable (when any): [{node, pool, reason, detail}], nodeClaims (karpenter: a
    karpenter.sh/v1 NodeClaim per launched node, as Karpenter writes it)}. Exit 0 when
    every pending pod is placed or helped, 1 when some are not, 2 on invalid input or
    a live cluster that cannot be read.
    With a live cluster the Fleet comes from -f (`-f fleet.yaml --context NAME`): the
    cluster has the pods and the Nodes labelled dralab.dev/pool.
    """
    inputs = sources(filenames, kubeconfig, context)
    docs = use_kinds(inputs.read(), AUTOSCALE)
    if inputs.cluster is not None and not any(is_fleet(d) for d in docs):
        # a cluster has pods and nodes, never dralab's Fleet: say where the pools come from
        raise InputError(f"dralab autoscale reads its node pools from a Fleet "
                         f"(dralab.dev/v1alpha1), which cluster {inputs.cluster.context} "
                         "cannot hold: give one with -f FLEET alongside the cluster")
    data = read_input(docs, FeatureGates(), karpenter=model == "karpenter")
    priorities = read_priorities(docs)
    # As CA, the CapacityQuotas are read only with --capacity-quotas-enabled (else the
    # kind is named among the unused).
    quotas = read_capacity_quotas(docs) if capacity_quotas_enabled else ()
    warn_unused([d for d in docs if not is_priority_configmap(d)
                 and not (capacity_quotas_enabled and is_capacity_quota(d))],
                AUTOSCALE_KARPENTER if model == "karpenter" else AUTOSCALE)
    options = ca_options({
        "expander": expander,
        "scale_down_utilization_threshold": scale_down_utilization_threshold,
        "scale_down_gpu_utilization_threshold": scale_down_gpu_utilization_threshold,
        "scale_down_unneeded_time": scale_down_unneeded_time,
        "scale_down_unready_time": scale_down_unready_time,
        "scale_down_delay_after_add": scale_down_delay_after_add,
        "scale_down_unready_enabled": scale_down_unready_enabled,
        "ignore_daemonsets_utilization": ignore_daemonsets_utilization,
        "ignore_mirror_pods_utilization": ignore_mirror_pods_utilization,
        "skip_nodes_with_system_pods": skip_nodes_with_system_pods,
        "skip_nodes_with_local_storage": skip_nodes_with_local_storage,
        "skip_nodes_with_custom_controller_pods": skip_nodes_with_custom_controller_pods,
        "blocking_system_pod_distruption_timeout": blocking_system_pod_distruption_timeout,
        "max_scale_down_parallelism": max_scale_down_parallelism,
        "max_drain_parallelism": max_drain_parallelism,
        "max_nodes_per_scaleup": max_nodes_per_scaleup,
        "enforce_node_group_min_size": enforce_node_group_min_size,
        "balance_similar_node_groups": balance_similar_node_groups,
        "balancing_ignore_label": balancing_ignore_labels,
        "expendable_pods_priority_cutoff": expendable_pods_priority_cutoff,
        "fastpath_binpacking_enabled": fastpath_binpacking_enabled,
        "capacity_quotas_enabled": capacity_quotas_enabled,
        "max_nodes_total": max_nodes_total, "cores_total": cores_total,
        "memory_total": memory_total,
    }, expander_priorities=priorities, capacity_quotas=quotas)
    decisions = run_once(data, model, expander, options=options,
                         ignore_dra_requests=ignore_dra_requests,
                         preference_policy=preference_policy)
    doc = decisions.to_dict()
    if output == "table":
        click.echo(render_table(doc), nl=False)
    else:
        click.echo(dumps(doc, output), nl=False)
    raise SystemExit(EXIT_OK if decisions.all_helped else EXIT_UNSCHEDULABLE)
