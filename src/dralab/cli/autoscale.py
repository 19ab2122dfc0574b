"""``dralab autoscale``: one Cluster Autoscaler (or Karpenter) loop over a snapshot."""

from __future__ import annotations

from typing import Any

import click

from dralab.api.errors import InputError
from dralab.api.features import FeatureGates
from dralab.api.io import dumps
from dralab.autoscale import EXPANDERS, MODELS, read_input, run_once

from .common import EXIT_OK, EXIT_UNSCHEDULABLE, one_line_errors
from .kinds import AUTOSCALE, is_fleet, use_kinds, warn_unused
from .sources import LIVE_HELP, source_options, sources


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
    if len(rows) == 1:
        rows.append(("none", "-", "-", "no pending pods and no node to remove"))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    return "".join("   ".join(cell.ljust(widths[i]) if i < 3 else cell
                              for i, cell in enumerate(row)) + "\n" for row in rows)


@click.command("autoscale", epilog=LIVE_HELP)
@source_options
@click.option("--model", type=click.Choice(list(MODELS)), default="cluster-autoscaler",
              show_default=True, help="The autoscaler to model.")
@click.option("--expander", type=click.Choice(list(EXPANDERS)), default="least-waste",
              show_default=True, help="How Cluster Autoscaler picks among node groups.")
@click.option("-o", "--output", type=click.Choice(["table", "json", "yaml"]),
              default="table", show_default=True, help="Output format.")
@one_line_errors
def autoscale_cmd(filenames: tuple[str, ...], kubeconfig: str | None, context: str | None,
                  model: str, expander: str, output: str) -> None:
    """One autoscaler loop: which node pools would fix the pending pods, and which
    nodes could go.

    Input: one Fleet (dralab.dev/v1alpha1) whose pools carry `autoscaling: {min, max,
    pricePerHour, provisioningDelay, priority}`, plus pods/workloads, claims,
    templates and classes; the Fleet's current nodes are generated as `dralab fleet`
    would, or are the input's Nodes labelled dralab.dev/pool: NAME. Pending pods are
    first scheduled on the existing nodes; those still pending are tried on each
    pool's template nodes (scale-up); when none needed a scale-up, the nodes under
    the utilisation threshold whose pods can all move are listed (scale-down).
    JSON/YAML: {scaleUp: [{pool, add, pods}], pending: [{pod, reason}], scaleDown:
    [{node, pool, utilization}]}. Exit 0 when every pending pod is placed or helped,
    1 when some are not, 2 on invalid input or a live cluster that cannot be read.
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
    data = read_input(docs, FeatureGates())
    warn_unused(docs, AUTOSCALE)
    decisions = run_once(data, model, expander)
    doc = decisions.to_dict()
    if output == "table":
        click.echo(render_table(doc), nl=False)
    else:
        click.echo(dumps(doc, output), nl=False)
    raise SystemExit(EXIT_OK if decisions.all_helped else EXIT_UNSCHEDULABLE)
