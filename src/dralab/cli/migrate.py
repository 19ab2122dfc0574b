"""``dralab migrate``: move GPU workloads from the device plugin to DRA, one safe step at a time.

Verbs (kubectl-like: ``-f FILE|DIR|-`` repeatable, ``-o`` output format or directory):
``inventory``, ``convert``, ``check``, ``plan``. Exit codes: 0 done; 1 the verb
found what it looks for (a workload convert could not convert, double advertising,
pods whose feasibility changed) or skipped an unrendered Helm template (one
``skipped:`` line per file on stderr; the other files processed); 2 invalid input
or usage: one ``error:`` line, or, for workloads the API server would refuse, one
per problem (file, document, object, field path) and a last one counting them.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any, TypeVar

import click

from dralab.api.errors import InputError, ValidationFailed, one_line
from dralab.api.io import Document
from dralab.migrate import inventory, not_workloads, render
from dralab.migrate.check import check_dump, render_check
from dralab.migrate.clusterdump import read_dump
from dralab.migrate.convert import Conversion, convert_files, write_conversion
from dralab.migrate.models import models_from_documents
from dralab.migrate.plan import make_plan
from dralab.migrate.planreport import render_plan, write_plan
from dralab.migrate.refusals import share_memory_amount
from dralab.migrate.unrendered import SkippedFile, read_rendered
from dralab.migrate.verify import render_verification, verify, verify_models
from dralab.sim.spec import parse_duration

from .common import (
    EXIT_INPUT,
    EXIT_UNSCHEDULABLE,
    check_output_dir,
    filename_option,
    one_line_errors,
    remember_inputs,
    signals_deferred,
)
from .kinds import migrate_verb, use_kinds
from .sources import LIVE_HELP, Sources, cluster_options, source_options, sources

F = TypeVar("F", bound=Callable[..., Any])

def _refusals_as_lines(func: F) -> F:
    """Every problem of the workloads the API server would refuse as its own ``error:``
    line (as ``dralab validate`` and ``dralab schedule`` list them), then a count; exit 2."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except ValidationFailed as exc:
            for problem in exc.errors:
                click.echo(f"error: {one_line(str(problem))}", err=True)
            objects = len({getattr(p, "where", "") for p in exc.errors})
            click.echo(f"error: {len(exc.errors)} problem(s) in {objects} workload(s) the API "
                       "server would refuse; fix them first", err=True)
            raise SystemExit(EXIT_INPUT) from None

    return wrapper  # type: ignore[return-value]


def _read(inputs: Sources) -> tuple[list[Document], list[SkippedFile]]:
    """The inputs' documents, unrendered templates skipped (``dralab.migrate.unrendered``)."""
    skipped: list[SkippedFile] = []

    def reader(paths: tuple[str, ...]) -> list[Document]:
        docs, skips = read_rendered(paths)
        remember_inputs(docs)
        skipped.extend(skips)
        return docs

    return inputs.read(reader=reader), skipped


def _report_skipped(skipped: list[SkippedFile]) -> None:
    """One ``skipped:`` line per file not read, and exit 1: the others were processed."""
    for skip in skipped:
        click.echo(skip.line(), err=True)
    if skipped:
        raise SystemExit(EXIT_UNSCHEDULABLE)


@click.group("migrate")
def migrate_cmd() -> None:
    """Migrate GPU workloads from the NVIDIA device plugin to DRA.

    Start with `inventory`, convert one workload at a time with `convert`
    (`--verify` to compare scheduling before and after), run `check` on the
    cluster before turning DRA on, and `plan` for the pilot.
    """


@migrate_cmd.command("inventory", epilog=LIVE_HELP)
@source_options
@click.option("-o", "--output", type=click.Choice(["table", "json", "csv"]), default="table",
              show_default=True, help="Output format: one line (table, csv) or object (json) "
                                      "per pod set of each workload.")
@one_line_errors
@_refusals_as_lines
def inventory_cmd(filenames: tuple[str, ...], kubeconfig: str | None, context: str | None,
                  output: str) -> None:
    """List every workload and what it asks of GPUs.

    Reads plain YAML, Helm-rendered output and `kubectl get -o yaml` dumps. For each
    workload (Pod, Job, CronJob, Deployment, StatefulSet, ReplicaSet, DaemonSet,
    JobSet, LeaderWorkerSet, Kubeflow training jobs, KServe InferenceService) and
    each of its pod sets: pods, containers, GPUs per pod, MIG profiles, GPU-label
    node selectors and affinities, and the class: multi-node, mig, shared,
    multi-gpu-one-node, whole-gpu, cpu-only or unsupported (another kind with a
    container asking for NVIDIA resources). Nodes, Namespaces, ResourceSlices and the
    other objects of a dump are no workloads: the table counts them in a last line.

    \b
    Exit codes: 0 listed (unsupported workloads included); 1 listed, but an input file
    is an unrendered Helm template (`{{ }}`), skipped with a `skipped:` line saying to
    render it first; 2 invalid input or usage,
    a live cluster that cannot be read, and workloads the API server would refuse
    (one `error:` line per problem, naming file, document, object and field path).
    """
    docs, skipped = _read(sources(filenames, kubeconfig, context))
    entries = inventory(docs)
    click.echo(render(entries, output, not_workloads(docs)), nl=False)
    _report_skipped(skipped)


def _convert_table(conversion: Conversion) -> str:
    lines = [("INPUT", "WORKLOAD", "RESULT", "DETAIL")]
    for item in conversion.summary()["files"]:
        if "skipped" in item:
            lines.append((item["input"], "-", "skipped", item["skipped"]))
        for w in item.get("workloads", []):
            if w["result"] == "converted":
                detail = " ".join(f"{c['claim']}={c['template']}" for p in w["podSets"]
                                  for c in p["claims"])
            else:
                detail = "; ".join(w.get("why", []))
            lines.append((item["input"], f"{w['kind']} {w['name']}", w["result"], detail))
    widths = [max(len(line[i]) for line in lines) for i in range(3)]
    return "".join("   ".join(c.ljust(widths[i]) if i < 3 else c for i, c in enumerate(line))
                   .rstrip() + "\n" for line in lines)


@migrate_cmd.command("convert", epilog=(
    "Live cluster: --kubeconfig or --context make the cluster the --verify model (its "
    "Nodes, ResourceSlices and DeviceClasses, read with get and list only); the workloads "
    "to convert are always the -f files. Exit 2 when the cluster cannot be read, in one "
    "line."))
@filename_option
@click.option("-o", "--output-dir", "out_dir", required=True, metavar="DIR",
              help="Where to write the converted files (one per input), "
                   "resourceclaimtemplates.yaml, deviceclasses.yaml and "
                   "migration-summary.txt. Never an input.")
@click.option("--share-memory", default="8Gi", show_default=True, metavar="QUANTITY",
              help="GPU memory a time-sliced (shared) pod gets as a DRA share of a GPU that "
                   "allows multiple allocations: a positive, whole number of bytes.")
@click.option("--verify", "verify_with", default=None, metavar="FLEET_OR_DUMP",
              help="Also schedule the workloads before (device plugin) and after (DRA) on "
                   "this Fleet spec or cluster dump, and report every pod whose feasibility "
                   "changed (exit 1 if any).")
@cluster_options
@one_line_errors
@_refusals_as_lines
def convert_cmd(filenames: tuple[str, ...], out_dir: str, share_memory: str,
                verify_with: str | None, kubeconfig: str | None, context: str | None) -> None:
    """Rewrite GPU workloads to DRA ResourceClaimTemplates and claims.

    Pods, Jobs, CronJobs, Deployments, StatefulSets, ReplicaSets, DaemonSets and the
    pod templates of JobSet, LeaderWorkerSet, Kubeflow training jobs and KServe
    InferenceService: nvidia.com/gpu and nvidia.com/mig-* requests and limits become
    claims; GPU-label node selectors and affinities become CEL selectors on device
    attributes; CPU, memory, comments and key order are kept. Prints one line per
    workload; the summary file says what changed and what could not be converted.

    \b
    Exit codes: 0 every workload converted or unchanged (no GPU resources); 1 a
    workload was not converted (its line and the summary say why; the other
    outputs are written), an input file is an unrendered Helm template (skipped,
    with a `skipped:` line), or, with --verify, a pod changed feasibility; 2 invalid
    input or usage, and workloads the API server would refuse (one `error:` line
    per problem, naming file, document, object and field path; nothing written), or
    a live cluster (the --verify model) that cannot be read.
    """
    share_memory = _check_share(share_memory)
    if verify_with is not None and (kubeconfig is not None or context is not None):
        raise click.UsageError("--verify FILE and --kubeconfig/--context each name the "
                               "verification model; give one")
    model = sources((), kubeconfig, context, cluster_without_files=False)
    check_output_dir("-o/--output-dir", out_dir,
                     [*filenames, *([verify_with] if verify_with else []), *model.paths])
    conversion = convert_files(filenames, share_memory)
    report = verify(conversion, verify_with) if verify_with is not None else None
    if model.cluster is not None:
        report = verify_models(conversion, models_from_documents(model.read(), model.name))
    with signals_deferred():
        write_conversion(conversion, out_dir, filenames)
    click.echo(_convert_table(conversion), nl=False)
    click.echo(f"wrote {len(conversion.files)} file(s), {len(conversion.templates)} claim "
               f"template(s) and {len(conversion.classes)} device class(es) to {out_dir}")
    if report is not None:
        click.echo(render_verification(report), nl=False)
    for skip in conversion.skipped:
        click.echo(skip.line(), err=True)
    not_converted = [w for f in conversion.summary()["files"] for w in f.get("workloads", [])
                     if w["result"] == "not converted"]
    if not_converted or conversion.skipped or (report is not None and report.changed):
        raise SystemExit(EXIT_UNSCHEDULABLE)


def _check_share(text: str) -> str:
    """``--share-memory`` canonical; a usage error unless a positive, whole number of bytes."""
    try:
        return share_memory_amount(text)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--share-memory") from None


@migrate_cmd.command("check", epilog=LIVE_HELP)
@source_options
@click.option("-o", "--output", type=click.Choice(["table", "json"]), default="table",
              show_default=True, help="Output format.")
@one_line_errors
@_refusals_as_lines
def check_cmd(filenames: tuple[str, ...], kubeconfig: str | None, context: str | None,
              output: str) -> None:
    """Find GPUs advertised twice: by the device plugin and by DRA ResourceSlices.

    Reads a cluster dump (`kubectl get nodes,pods,resourceslices,resourceclaims,
    deviceclasses,deployments,jobs,... -A -o yaml`). Lists every node whose
    allocatable nvidia.com/gpu (or nvidia.com/mig-*) and gpu.nvidia.com ResourceSlices
    both show GPUs, what is allocated through each path (OVERCOMMITTED when together
    more than the GPUs present), the pods holding GPUs there and the workloads that
    can land there.

    \b
    Exit codes: 0 no node advertised twice; 1 such a node exists, or an input file is
    an unrendered Helm template (skipped: `skipped:` line); 2 invalid input
    or usage, a live cluster that cannot be read, and workloads the API server would
    refuse (one `error:` line per problem, naming file, document, object and field
    path).
    """
    docs, skipped = _read(sources(filenames, kubeconfig, context))
    result = check_dump(read_dump(use_kinds(docs, migrate_verb("check"))))
    click.echo(render_check(result, output), nl=False)
    _report_skipped(skipped)
    if result.found:
        raise SystemExit(EXIT_UNSCHEDULABLE)


@migrate_cmd.command("plan", epilog=LIVE_HELP)
@source_options
@click.option("--out", "out_dir", default=None, metavar="DIR",
              help="Write the pilot's files here: device classes, claim templates, the "
                   "smoke-test Job, the converted manifests in order, pilot-report.md and "
                   "the simulation inputs.")
@click.option("--share-memory", default="8Gi", show_default=True, metavar="QUANTITY",
              help="GPU memory a time-sliced pod gets as a DRA share: a positive, whole "
                   "number of bytes.")
@click.option("--duration", default="2h", show_default=True, metavar="DURATION",
              help="Simulated time of the predicted effect (e.g. 30m, 2h).")
@one_line_errors
@_refusals_as_lines
def plan_cmd(filenames: tuple[str, ...], kubeconfig: str | None, context: str | None,
             out_dir: str | None, share_memory: str, duration: str) -> None:
    """Plan the pilot: which pool first, its DeviceClasses, order and predicted effect.

    Reads a cluster dump (nodes, pods, ResourceSlices, DeviceClasses and the
    workloads). Picks the lowest-risk GPU pool with work to move (then the
    smallest), proposes DeviceClasses named by use (h100-training, l4-inference,
    mig-small) with their CEL, orders the moves (a smoke-test Job first, then the
    safest workloads), converts them, and simulates the pool on both models
    (pods started, wait, GPU capacity allocated vs requested).

    \b
    Exit codes: 0 planned; 1 planned without an input file that is an unrendered Helm
    template (skipped: `skipped:` line); 2 invalid input or usage, a live cluster that
    cannot be read, and workloads the API server would refuse (one `error:` line per problem,
    naming file, document, object and field path).
    """
    share_memory = _check_share(share_memory)
    inputs = sources(filenames, kubeconfig, context)
    if out_dir is not None:
        check_output_dir("--out", out_dir, inputs.paths)
    try:
        parse_duration(duration)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--duration") from None
    docs, skipped = _read(inputs)
    docs = use_kinds(docs, migrate_verb("plan"))
    try:
        plan = make_plan(docs, inputs.name, share_memory, duration)
    except ValueError as exc:
        raise InputError(f"{inputs.name}: {exc}") from None
    click.echo(render_plan(plan), nl=False)
    if out_dir is not None:
        with signals_deferred():
            written = write_plan(plan, out_dir, inputs.paths)
        click.echo(f"wrote {len(written)} file(s) to {out_dir} (start with "
                   f"{os.path.join(out_dir, 'pilot-report.md')})")
    _report_skipped(skipped)
