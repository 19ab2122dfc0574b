"""``dralab migrate``: move GPU workloads from the device plugin to DRA, one safe step at a time.

Verbs (kubectl-like: ``-f FILE|DIR|-`` repeatable, ``-o`` output format or directory):
``inventory``, ``convert``, ``check``, ``plan``. Exit codes: 0 done; 1 the verb
found what it looks for (double advertising, pods whose feasibility changed);
2 invalid input or usage (one line).
"""

from __future__ import annotations

import click

from dralab.api.io import read_documents
from dralab.migrate import inventory, render

from .common import filename_option, one_line_errors


@click.group("migrate")
def migrate_cmd() -> None:
    """Migrate GPU workloads from the NVIDIA device plugin to DRA.

    Start with `inventory`, convert one workload at a time with `convert`
    (`--verify` to compare scheduling before and after), run `check` on the
    cluster before turning DRA on, and `plan` for the pilot.
    """


@migrate_cmd.command("inventory")
@filename_option
@click.option("-o", "--output", type=click.Choice(["table", "json", "csv"]), default="table",
              show_default=True, help="Output format: one line (table, csv) or object (json) "
                                      "per pod set of each workload.")
@one_line_errors
def inventory_cmd(filenames: tuple[str, ...], output: str) -> None:
    """List every workload and what it asks of GPUs.

    Reads plain YAML, Helm-rendered output and `kubectl get -o yaml` dumps. For each
    workload (Pod, Job, CronJob, Deployment, StatefulSet, ReplicaSet, DaemonSet,
    JobSet, LeaderWorkerSet, Kubeflow training jobs, KServe InferenceService) and
    each of its pod sets: pods, containers, GPUs per pod, MIG profiles, GPU-label
    node selectors and affinities, and the class: multi-node, mig, shared,
    multi-gpu-one-node, whole-gpu or cpu-only.
    """
    entries = inventory(read_documents(filenames))
    click.echo(render(entries, output), nl=False)
