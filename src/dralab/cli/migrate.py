"""``dralab migrate``: move GPU workloads from the device plugin to DRA, one safe step at a time.

Verbs (kubectl-like: ``-f FILE|DIR|-`` repeatable, ``-o`` output format or directory):
``inventory``, ``convert``, ``check``, ``plan``. Exit codes: 0 done; 1 the verb
found what it looks for (double advertising, pods whose feasibility changed);
2 invalid input or usage (one line).
"""

from __future__ import annotations

import os

import click

from dralab.api.errors import InputError
from dralab.api.io import read_documents
from dralab.api.quantity import parse_quantity
from dralab.migrate import inventory, render
from dralab.migrate.check import check_dump, render_check
from dralab.migrate.clusterdump import read_dump
from dralab.migrate.convert import Conversion, convert_files, write_conversion
from dralab.migrate.plan import make_plan
from dralab.migrate.planreport import render_plan, write_plan
from dralab.migrate.verify import render_verification, verify
from dralab.sim.spec import parse_duration

from .common import (
    EXIT_UNSCHEDULABLE,
    check_output_location,
    filename_option,
    one_line_errors,
    signals_deferred,
)


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


def _convert_table(conversion: Conversion) -> str:
    lines = [("INPUT", "WORKLOAD", "RESULT", "DETAIL")]
    for item in conversion.summary()["files"]:
        for w in item["workloads"]:
            if w["result"] == "converted":
                detail = " ".join(f"{c['claim']}={c['template']}" for p in w["podSets"]
                                  for c in p["claims"])
            else:
                detail = "; ".join(w.get("why", []))
            lines.append((item["input"], f"{w['kind']} {w['name']}", w["result"], detail))
    widths = [max(len(line[i]) for line in lines) for i in range(3)]
    return "".join("   ".join(c.ljust(widths[i]) if i < 3 else c for i, c in enumerate(line))
                   .rstrip() + "\n" for line in lines)


@migrate_cmd.command("convert")
@filename_option
@click.option("-o", "--output-dir", "out_dir", required=True, metavar="DIR",
              help="Where to write the converted files (one per input), "
                   "resourceclaimtemplates.yaml, deviceclasses.yaml and "
                   "migration-summary.txt. Never an input.")
@click.option("--share-memory", default="8Gi", show_default=True, metavar="QUANTITY",
              help="GPU memory a time-sliced (shared) pod gets as a DRA share of a GPU that "
                   "allows multiple allocations.")
@click.option("--verify", "verify_with", default=None, metavar="FLEET_OR_DUMP",
              help="Also schedule the workloads before (device plugin) and after (DRA) on "
                   "this Fleet spec or cluster dump, and report every pod whose feasibility "
                   "changed (exit 1 if any).")
@one_line_errors
def convert_cmd(filenames: tuple[str, ...], out_dir: str, share_memory: str,
                verify_with: str | None) -> None:
    """Rewrite GPU workloads to DRA ResourceClaimTemplates and claims.

    Pods, Jobs, CronJobs, Deployments, StatefulSets, ReplicaSets, DaemonSets and the
    pod templates of JobSet, LeaderWorkerSet, Kubeflow training jobs and KServe
    InferenceService: nvidia.com/gpu and nvidia.com/mig-* requests and limits become
    claims; GPU-label node selectors and affinities become CEL selectors on device
    attributes; CPU, memory, comments and key order are kept. Prints one line per
    workload; the summary file says what changed and what could not be converted.
    """
    _check_quantity(share_memory, "--share-memory")
    check_output_location("-o/--output-dir", out_dir,
                          [*filenames, *([verify_with] if verify_with else [])])
    conversion = convert_files(filenames, share_memory)
    report = verify(conversion, verify_with) if verify_with is not None else None
    with signals_deferred():
        write_conversion(conversion, out_dir, filenames)
    click.echo(_convert_table(conversion), nl=False)
    click.echo(f"wrote {len(conversion.files)} file(s), {len(conversion.templates)} claim "
               f"template(s) and {len(conversion.classes)} device class(es) to {out_dir}")
    if report is not None:
        click.echo(render_verification(report), nl=False)
        if report.changed:
            raise SystemExit(EXIT_UNSCHEDULABLE)


def _check_quantity(text: str, option: str) -> None:
    try:
        parse_quantity(text)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint=option) from None


@migrate_cmd.command("check")
@filename_option
@click.option("-o", "--output", type=click.Choice(["table", "json"]), default="table",
              show_default=True, help="Output format.")
@one_line_errors
def check_cmd(filenames: tuple[str, ...], output: str) -> None:
    """Find GPUs advertised twice: by the device plugin and by DRA ResourceSlices.

    Reads a cluster dump (`kubectl get nodes,pods,resourceslices,resourceclaims,
    deviceclasses,deployments,jobs,... -A -o yaml`). Lists every node whose
    allocatable nvidia.com/gpu (or nvidia.com/mig-*) and gpu.nvidia.com ResourceSlices
    both show GPUs, what is allocated through each path (OVERCOMMITTED when together
    more than the GPUs present), the pods holding GPUs there and the workloads that
    can land there. Exit 1 when such a node exists, 0 when none.
    """
    result = check_dump(read_dump(read_documents(filenames)))
    click.echo(render_check(result, output), nl=False)
    if result.found:
        raise SystemExit(EXIT_UNSCHEDULABLE)


@migrate_cmd.command("plan")
@filename_option
@click.option("--out", "out_dir", default=None, metavar="DIR",
              help="Write the pilot's files here: device classes, claim templates, the "
                   "smoke-test Job, the converted manifests in order, pilot-report.md and "
                   "the simulation inputs.")
@click.option("--share-memory", default="8Gi", show_default=True, metavar="QUANTITY",
              help="GPU memory a time-sliced pod gets as a DRA share.")
@click.option("--duration", default="2h", show_default=True, metavar="DURATION",
              help="Simulated time of the predicted effect (e.g. 30m, 2h).")
@one_line_errors
def plan_cmd(filenames: tuple[str, ...], out_dir: str | None, share_memory: str,
             duration: str) -> None:
    """Plan the pilot: which pool first, its DeviceClasses, order and predicted effect.

    Reads a cluster dump (nodes, pods, ResourceSlices, DeviceClasses and the
    workloads). Picks the lowest-risk GPU pool with work to move (then the
    smallest), proposes DeviceClasses named by use (h100-training, l4-inference,
    mig-small) with their CEL, orders the moves (a smoke-test Job first, then the
    safest workloads), converts them, and simulates the pool on both models
    (pods started, wait, GPU capacity allocated vs requested).
    """
    _check_quantity(share_memory, "--share-memory")
    if out_dir is not None:
        check_output_location("--out", out_dir, filenames)
    try:
        parse_duration(duration)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--duration") from None
    docs = read_documents(filenames)
    try:
        plan = make_plan(docs, ",".join(filenames), share_memory, duration)
    except ValueError as exc:
        raise InputError(f"{','.join(filenames)}: {exc}") from None
    click.echo(render_plan(plan), nl=False)
    if out_dir is not None:
        with signals_deferred():
            written = write_plan(plan, out_dir, list(filenames))
        click.echo(f"wrote {len(written)} file(s) to {out_dir} (start with "
                   f"{os.path.join(out_dir, 'pilot-report.md')})")
