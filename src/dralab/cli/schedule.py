"""``dralab schedule``: schedule every pending pod as kube-scheduler would."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click

from dralab.api.base import KubeObject
from dralab.api.errors import InputError
from dralab.api.features import FeatureGates
from dralab.api.io import Document, dumps, load_documents, read_documents, to_list
from dralab.controllers.applyorder import apply_order
from dralab.scheduler import ConfigError, schedule
from dralab.scheduler.summary import PodRow, pod_rows
from dralab.validation.check import validate_documents

from .common import (
    EXIT_INPUT,
    EXIT_UNSCHEDULABLE,
    AsciiInt,
    errors_naming,
    feature_gates_option,
    one_line_errors,
    parse_gates,
    read_inputs,
)
from .kinds import SCHEDULE, VerbKinds, use_kinds, warn_unused
from .sources import LIVE_HELP, source_options, sources


def config_option(func: Any) -> Any:
    return click.option(
        "--config", "config_path", metavar="FILE", default=None,
        help="A KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) with the "
             "profiles to use; default: the default-scheduler profile.")(func)


def seed_option(func: Any) -> Any:
    return click.option(
        "--seed", type=AsciiInt(), default=0, show_default=True,
        help="Seed of every random choice (name suffixes, score ties, preemption offset).",
    )(func)


def load_inputs(filenames: tuple[str, ...], gates: FeatureGates,
                docs: list[Document] | None = None,
                verb: VerbKinds = SCHEDULE) -> list[KubeObject]:
    """Read and validate the manifests; invalid input ends the command with exit 2.

    The manifests are a cluster's stored state: fields of a gate that is off now
    are accepted, and the scheduler treats them as upstream does. An object given
    twice gets a warning naming both places (the last copy is the one used, as
    `kubectl apply` of all inputs would leave it).
    """
    if docs is None:  # given when the caller read them already (stdin reads once)
        docs = use_kinds(read_inputs(filenames), verb)
    problems = validate_documents(docs, gates, stored=True)
    if problems:
        for problem in problems:
            click.echo(f"error: {problem}", err=True)
        raise SystemExit(EXIT_INPUT)
    objects = load_documents(docs)
    warn_unused(docs, verb)
    if len(objects) == len(docs):
        for dup in apply_order(objects)[1]:
            click.echo(f"warning: {dup.ref} is given twice ({docs[dup.first].where} and "
                       f"{docs[dup.later].where}); the last one is used, as kubectl apply "
                       "would leave it", err=True)
    return objects


def load_config(path: str | None) -> Mapping[str, Any] | None:
    """The scheduler configuration document of ``path`` (exactly one), or None."""
    if path is None:
        return None
    docs = read_documents([path])
    if len(docs) != 1 or not isinstance(docs[0].data, Mapping):
        raise InputError(f"{path}: expected one KubeSchedulerConfiguration document")
    data: Mapping[str, Any] = docs[0].data
    return data


def render_table(rows: list[PodRow]) -> str:
    """kubectl-style columns: POD (namespace/name), NODE, STATUS, and DEVICES (one
    ``claim=driver/pool/device,...`` per allocated claim) or, for a pod left pending,
    the scheduler's message."""
    header = ("POD", "NODE", "STATUS", "DEVICES")
    lines = [header]
    for row in rows:
        detail = row.message or " ".join(
            f"{claim}={','.join(devices)}" for claim, devices in row.devices) or "<none>"
        lines.append((row.pod, row.node or "<none>", row.status, detail))
    widths = [max(len(line[i]) for line in lines) for i in range(3)]
    return "".join("   ".join(cell.ljust(widths[i]) if i < 3 else cell
                              for i, cell in enumerate(line)) + "\n" for line in lines)


@click.command("schedule", epilog=LIVE_HELP)
@source_options
@click.option("-o", "--output", type=click.Choice(["yaml", "json", "table"]), default="yaml",
              show_default=True,
              help="Output format: the List of pods and claims (yaml, json) or one line per "
                   "pod (table).")
@config_option
@feature_gates_option
@seed_option
@one_line_errors
def schedule_cmd(filenames: tuple[str, ...], kubeconfig: str | None, context: str | None,
                 output: str, config_path: str | None, feature_gates: str, seed: int) -> None:
    """Schedule every pending pod (no spec.nodeName) in queue order.

    Inputs: Nodes, Pods, PriorityClasses, DRA objects (DeviceClass, ResourceSlice,
    DeviceTaintRule, ResourceClaim, ResourceClaimTemplate) and workloads (Job,
    CronJob, Deployment, ReplicaSet, StatefulSet, DaemonSet), expanded into pods.
    The input is a cluster's state (a `kubectl get -o yaml` dump works): a workload
    adds only the pods its controller is missing, bound pods keep their node,
    allocated claims their devices.

    Prints a v1 List of every pod (placed ones with spec.nodeName; unplaced ones with
    a PodScheduled=False condition carrying kube-scheduler's message; preempted ones
    with a DisruptionTarget condition) and every ResourceClaim, and one line per
    unplaced or preempted pod on stderr. With -o table: one line per pod (node,
    status, devices per claim or the pending reason) and no per-pod lines on stderr.
    Exit 0 when every pod was placed, 1 when some were not (or were preempted), 2 on
    invalid input or configuration, or a live cluster that cannot be read.
    """
    gates = parse_gates(feature_gates)
    inputs = sources(filenames, kubeconfig, context)
    objects = load_inputs(filenames, gates, use_kinds(inputs.read(), SCHEDULE))
    with errors_naming(config_path, ConfigError):
        result = schedule(objects, load_config(config_path), gates, seed)
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    if output == "table":
        click.echo(render_table(pod_rows(result)), nl=False)
        if not result.all_placed:
            raise SystemExit(EXIT_UNSCHEDULABLE)
        return
    click.echo(dumps(to_list(result.objects()), output), nl=False)
    for item in result.unplaced:
        meta = item.pod.metadata
        click.echo(f"{meta.namespace}/{meta.name}: {item.reason}: {item.message}", err=True)
    for evicted in result.evicted:
        meta = evicted.pod.metadata
        click.echo(f"{meta.namespace}/{meta.name}: preempted on {evicted.node} by "
                   f"{evicted.preemptor}", err=True)
    if not result.all_placed:
        raise SystemExit(EXIT_UNSCHEDULABLE)
