"""``dralab explain``: why a pod (a workload's pods, a claim's pods) landed where it did,
or did not."""

from __future__ import annotations

from typing import Any

import click

from dralab.api.errors import one_line
from dralab.api.features import FeatureGates
from dralab.api.io import Document
from dralab.autoscale import AutoscaleInput, cluster_objects, read_input, run_once
from dralab.fleet.spec import API_VERSION as FLEET_API
from dralab.fleet.spec import KIND as FLEET_KIND
from dralab.live import KUEUE_GROUP
from dralab.scheduler import ConfigError, explain_claim
from dralab.scheduler.targets import PodsExplanation, explain_pods, parse_pod_target

from .common import (
    EXIT_INPUT,
    EXIT_UNSCHEDULABLE,
    errors_naming,
    fail,
    feature_gates_option,
    one_line_errors,
    parse_gates,
)
from .kinds import EXPLAIN_CLAIM, EXPLAIN_POD, EXPLAIN_WORKLOAD, use_kinds, warn_unused
from .schedule import config_option, load_config, load_inputs, seed_option
from .sources import LIVE_HELP, source_options, sources


def namespace_option(func: Any) -> Any:
    return click.option(
        "-n", "--namespace", default=None, metavar="NAMESPACE",
        help="Namespace of the target, as with kubectl -n (default: default; with a live "
             "cluster, a bare NAME is looked up in the context's namespace when it names "
             "one).")(func)


@click.group("explain")
def explain_cmd() -> None:
    """Explain scheduling decisions, node by node."""


@explain_cmd.command("pod", epilog=LIVE_HELP)
@click.argument("target", metavar="TARGET")
@namespace_option
@source_options
@config_option
@feature_gates_option
@seed_option
@one_line_errors
def explain_pod_cmd(target: str, namespace: str | None, filenames: tuple[str, ...],
                    kubeconfig: str | None, context: str | None, config_path: str | None,
                    feature_gates: str, seed: int) -> None:
    """Schedule everything as `dralab schedule` does, then show for a pod which plugin
    rejected it on each node and why, and the nearest node with what blocks it there;
    for a placed pod, the feasible nodes and their scores.

    TARGET is a pod (NAME, or NAMESPACE/NAME) or, as with kubectl, TYPE/NAME of a
    workload whose pods are all explained: job/, cronjob/, deployment/ (deploy/),
    replicaset/ (rs/), statefulset/ (sts/), daemonset/ (ds/), or pod/. Without -n, a
    pod NAME in a namespace called TYPE is preferred when it exists.

    With a Fleet (dralab.dev/v1alpha1) among the inputs, its nodes are generated as
    `dralab fleet` would (as `dralab autoscale` reads them) and, for a pod left
    pending, one Cluster Autoscaler loop says which autoscaled pool would fix it
    ("would fit on pool X after a scale-up of N nodes") or why none would.

    Exit 0 if every explained pod is on a node, 1 if not, 2 on invalid input, an
    unknown target or a live cluster that cannot be read."""
    gates = parse_gates(feature_gates)
    inputs = sources(filenames, kubeconfig, context)
    namespace = inputs.namespace(target, namespace)
    docs = use_kinds(inputs.read(), EXPLAIN_POD)
    autoscaling = _autoscale_input(docs, gates)
    if autoscaling is not None:
        warn_unused(docs, EXPLAIN_POD)
    objects = cluster_objects(autoscaling) if autoscaling is not None \
        else load_inputs(filenames, gates, docs, EXPLAIN_POD)
    with errors_naming(config_path, ConfigError):
        explanation = explain_pods(objects, parse_pod_target(target, namespace),
                                   load_config(config_path), gates, seed)
    click.echo(explanation.render(), nl=False)
    if autoscaling is not None and not explanation.all_placed:
        click.echo(_pools_that_help(autoscaling, explanation, gates, seed), nl=False)
    if not explanation.all_placed:
        raise SystemExit(EXIT_UNSCHEDULABLE)


def _autoscale_input(docs: list[Document], gates: FeatureGates) -> AutoscaleInput | None:
    """The Fleet and the objects when a Fleet is among the inputs (else None)."""
    if not any(isinstance(d.data, dict) and d.data.get("kind") == FLEET_KIND
               and d.data.get("apiVersion") == FLEET_API for d in docs):
        return None
    return read_input(docs, gates)


def _pools_that_help(data: AutoscaleInput, explanation: PodsExplanation,
                     gates: FeatureGates, seed: int) -> str:
    """Per pending explained pod: the pool a Cluster Autoscaler loop would grow for it,
    or why no pool helps."""
    decisions = run_once(data, features=gates, seed=seed)
    helped = {pod: up for up in decisions.scale_ups for pod in up.pods}
    reasons = {p.pod: p.reason for p in decisions.pending}
    lines = []
    for pod in explanation.pods:
        if pod.node is not None or not pod.found:
            continue
        if pod.pod in helped:
            up = helped[pod.pod]
            nodes = "1 node" if up.add == 1 else f"{up.add} nodes"
            lines.append(f"{pod.pod}: would fit on pool {up.pool} after a scale-up of {nodes}\n")
        elif pod.pod in reasons:
            lines.append(f"{pod.pod}: no autoscaled pool helps: {reasons[pod.pod]}\n")
    return ("\nautoscaling (one Cluster Autoscaler loop):\n" + "".join(lines)) if lines else ""


@explain_cmd.command("claim", epilog=LIVE_HELP)
@click.argument("target", metavar="TARGET")
@namespace_option
@source_options
@config_option
@feature_gates_option
@seed_option
@one_line_errors
def explain_claim_cmd(target: str, namespace: str | None, filenames: tuple[str, ...],
                      kubeconfig: str | None, context: str | None, config_path: str | None,
                      feature_gates: str, seed: int) -> None:
    """Show a ResourceClaim after scheduling (allocation, reservedFor) and explain
    each pod that uses it.

    TARGET is a claim (NAME, or NAMESPACE/NAME) or a pod's claim: POD/CLAIM with -n,
    or NAMESPACE/POD/CLAIM, where CLAIM is the name in the pod's spec.resourceClaims
    (the claim generated from its template has a random name). Without -n,
    NAMESPACE/NAME that names no claim is tried as POD/CLAIM in namespace default.

    Exit 0 if the claim is allocated, 1 if not, 2 on invalid input, an unknown claim
    or a live cluster that cannot be read."""
    gates = parse_gates(feature_gates)
    inputs = sources(filenames, kubeconfig, context)
    namespace = inputs.namespace(target, namespace)
    objects = load_inputs(filenames, gates, use_kinds(inputs.read(), EXPLAIN_CLAIM),
                          EXPLAIN_CLAIM)
    with errors_naming(config_path, ConfigError):
        explanation = explain_claim(objects, target, load_config(config_path), gates, seed,
                                    namespace=namespace)
    click.echo(explanation.render(), nl=False)
    if explanation.allocated is None or not explanation.allocated.allocated:
        raise SystemExit(EXIT_UNSCHEDULABLE)


@explain_cmd.command("workload", epilog=LIVE_HELP)
@click.argument("target", metavar="NAMESPACE/NAME")
@source_options
@one_line_errors
def explain_workload_cmd(target: str, filenames: tuple[str, ...], kubeconfig: str | None,
                         context: str | None) -> None:
    """Why a queued workload is admitted or not, as Kueue would decide on the snapshot.

    NAMESPACE/NAME names the Workload or the Job (or pod) it stands for. Runs the
    admission of ``dralab admit`` on the inputs, then prints the workload's state:
    admitted (ClusterQueue, flavors, usage), preempted (by whom, why), inadmissible
    (why), or pending with Kueue's message and, per flavor and resource it needs, the
    ClusterQueue's nominal quota, borrowing limit and usage. With Nodes in the input,
    also whether the whole pod set fits on them now with the devices it claims.

    Exit 0 if admitted, 1 if not, 2 on invalid input, an unknown workload or a live
    cluster that cannot be read (without -f, one that does not serve Kueue's API)."""
    from dralab.queueing.explain import explain_workload, find_workload
    from dralab.queueing.load import load_snapshot
    from dralab.queueing.reader import read_snapshot

    from .admit import admission_moment, admit_snapshot

    docs = use_kinds(sources(filenames, kubeconfig, context).read((KUEUE_GROUP,)),
                     EXPLAIN_WORKLOAD)
    objects, problems = load_snapshot(docs)
    if problems:
        for problem in problems:
            click.echo(f"error: {one_line(problem)}", err=True)
        raise SystemExit(EXIT_INPUT)
    warn_unused(docs, EXPLAIN_WORKLOAD)
    snapshot = read_snapshot(objects)
    key = find_workload(snapshot, target)
    if key is None:
        # The target is the user's text and the list can be long: ``fail`` cuts and
        # escapes the line.
        known = ", ".join(sorted(snapshot.sources)) or "none"
        fail(f"no queued workload {target} (workloads: {known})")
        return
    decisions, topology = admit_snapshot(snapshot, admission_moment(objects), objects)
    explanation = explain_workload(snapshot, decisions, key, objects, topology)
    click.echo(explanation.render(), nl=False)
    if not explanation.admitted:
        raise SystemExit(EXIT_UNSCHEDULABLE)



@explain_cmd.command("podgroup", epilog=LIVE_HELP)
@click.argument("target", metavar="TARGET")
@namespace_option
@source_options
@one_line_errors
def explain_podgroup_cmd(target: str, namespace: str | None, filenames: tuple[str, ...],
                         kubeconfig: str | None, context: str | None) -> None:
    """Why a KAI Scheduler pod group (or a pod of KAI's) waits, in KAI's terms.

    TARGET is a PodGroup or a pod of kai-scheduler (NAME, or NAMESPACE/NAME; a pod without
    a PodGroup has the one KAI's pod grouper would make). Runs the KAI session of
    ``dralab admit --policy kai`` on the inputs, then prints the pod group's queue,
    priority and gang, what the session did with each of its pods (bound, pipelined,
    evicted and for whom, pending), KAI's unschedulable message for it, and the fair
    share of its queue and of each parent queue.

    Exit 0 if every pod of the group is on a node, 1 if not, 2 on invalid input, an
    unknown target or a live cluster that cannot be read."""
    from .admit_kai import KAI_GROUPS
    from .explain_kai import EXPLAIN_PODGROUP, explain_kai

    inputs = sources(filenames, kubeconfig, context)
    namespace = inputs.namespace(target, namespace)
    docs = use_kinds(inputs.read(KAI_GROUPS), EXPLAIN_PODGROUP)
    explanation = explain_kai(docs, target, namespace or "default")
    if explanation.problems:
        for problem in explanation.problems:
            click.echo(f"error: {one_line(problem)}", err=True)
        raise SystemExit(EXIT_INPUT)
    if explanation.unknown:
        fail(explanation.unknown)
        return
    warn_unused(docs, EXPLAIN_PODGROUP)
    click.echo(explanation.text, nl=False)
    if not explanation.placed:
        raise SystemExit(EXIT_UNSCHEDULABLE)
