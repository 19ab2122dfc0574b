"""``dralab admit``: run Kueue's admission over a snapshot until nothing changes."""

from __future__ import annotations

from datetime import datetime

import click

from dralab.api.base import KubeObject
from dralab.api.errors import one_line
from dralab.api.io import dumps, to_list
from dralab.live import KUEUE_GROUP
from dralab.queueing.configured import kueue_policy
from dralab.queueing.feasibility import placement_check
from dralab.queueing.load import load_snapshot
from dralab.queueing.model import Decision, TopologyAssignment
from dralab.queueing.reader import KueueSnapshot, read_snapshot
from dralab.queueing.tas_cache import build_tas_provider, tas_on, topology_by_index
from dralab.queueing.writer import SLICE_REPLACED, write_jobs, write_workloads

from .admit_kai import ADMIT_KAI, KAI_GROUPS, run_kai
from .common import (
    EXIT_INPUT,
    EXIT_OK,
    EXIT_UNSCHEDULABLE,
    one_line_errors,
)
from .kinds import ADMIT, use_kinds, warn_unused
from .sources import LIVE_HELP, source_options, sources

_EPOCH = "1970-01-01T00:00:00Z"


def _latest_timestamp(objects: list[KubeObject]) -> str:
    """The snapshot's moment: its newest creationTimestamp (the conditions' transition
    time), so that the same input gives the same output on every run."""
    stamps = [o.metadata.creation_timestamp for o in objects if o.metadata.creation_timestamp]
    return max(stamps) if stamps else _EPOCH


def admission_moment(objects: list[KubeObject]) -> float:
    """When admission runs: the snapshot's newest creationTimestamp in seconds, so that
    admissions made now are newer than those the snapshot holds (0 without timestamps)."""
    moment = _latest_timestamp(objects)
    return _seconds(moment) if moment != _EPOCH else 0.0


def _seconds(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def run_admission(snapshot: KueueSnapshot, now: float,
                  objects: list[KubeObject] | None = None,
                  cycles: int | None = None) -> list[Decision]:
    """Admission cycles until nothing changes (or at most ``cycles`` of them): every
    decision made, in order, then the last pending message of each workload still
    waiting (the conditions show it)."""
    return admit_snapshot(snapshot, now, objects, cycles)[0]


def admit_snapshot(snapshot: KueueSnapshot, now: float,
                   objects: list[KubeObject] | None = None,
                   cycles: int | None = None
                   ) -> tuple[list[Decision], dict[str, tuple[TopologyAssignment | None, ...]]]:
    """``run_admission``, and the topologyAssignments of the workloads admitted with a
    topology: Kueue's TAS (TopologyAwareScheduling, on by default) places TAS pod sets
    by node capacity; with the KueueDRADeviceFeasibility gate dralab's placement check
    places them through the scheduler instead (``queueing.feasibility``)."""
    from dralab.queueing.kueue import admit_cycles

    policy = kueue_policy(snapshot.config)
    policy.afs = snapshot.afs  # Admission Fair Sharing, when configured
    placement = placement_check(snapshot, objects) if objects is not None else None
    # featureGates.KueueDRADeviceFeasibility: the whole pod set must fit the nodes.
    policy.placement = placement
    if placement is None and objects is not None and tas_on(snapshot.config):
        # Kueue's own TAS cache over the snapshot's nodes and pods (beta gate, on)
        policy.tas = build_tas_provider(snapshot, objects)
    decisions = admit_cycles(policy, snapshot.state, now, cycles)
    waiting = [Decision(key, pending=message, pending_reason=policy.pending_reasons.get(key, ""))
               for key, message in sorted(policy.pending_messages.items())
               if key not in snapshot.state.admitted]
    if placement is not None:
        topology = dict(placement.topology_assignments)
    else:
        topology = topology_by_index(snapshot, policy.tas) if policy.tas is not None else {}
    return [*decisions, *waiting], topology


@click.command("admit", epilog=LIVE_HELP)
@source_options
@click.option("-o", "--output", type=click.Choice(["yaml", "json", "text"]), default=None,
              help="Output format: yaml (the default) or json; text (tables) with "
                   "--policy kai only.")
@click.option("--cycles", type=click.IntRange(min=1), default=None, metavar="N",
              help="Run at most N admission cycles (one is one pass of Kueue's scheduler: "
                   "one head per ClusterQueue). Default: until nothing changes.")
@click.option("--policy", type=click.Choice(["kueue", "kai"]), default="kueue",
              show_default=True,
              help="kueue: Kueue's admission (below). kai: one KAI Scheduler session "
                   "(scheduling.run.ai Queue and PodGroup, kai.scheduler SchedulingShard, "
                   "Config and Topology, pods of kai-scheduler, Nodes): which pods bind, "
                   "pipeline, are evicted or wait (exit 1), and the queues' fair shares.")
@one_line_errors
def admit_cmd(filenames: tuple[str, ...], kubeconfig: str | None, context: str | None,
              output: str | None, cycles: int | None, policy: str) -> None:
    """Admit queued workloads as Kueue would, until nothing changes (or N cycles).

    Inputs: Kueue objects (kueue.x-k8s.io v1beta1 or v1beta2: ResourceFlavor,
    ClusterQueue, Cohort, LocalQueue, WorkloadPriorityClass, Topology, Workload),
    the Kueue Configuration (config.kueue.x-k8s.io: deviceClassMappings, fair
    sharing), Jobs and pods labelled kueue.x-k8s.io/queue-name, Nodes and DRA
    objects (DeviceClass, ResourceClaimTemplate, ResourceSlice), LimitRanges (their
    defaults fill the pod templates; a template outside them, or asking more than its
    limits, stays pending: Misconfigured). Workloads with
    status.admission hold their quota. Prints a v1 List of the Workloads
    (kueue.x-k8s.io/v1beta1, with status.admission and status.conditions as
    Kueue sets them; with the placement check, a TAS pod set's topologyAssignment)
    and the Jobs with spec.suspend updated. Exit 0 when every
    workload is admitted, 1 when some stay pending, 2 on invalid input or a live
    cluster that cannot be read (without -f, one that does not serve Kueue's API).
    """
    if policy == "kai":
        _admit_kai(filenames, kubeconfig, context, output or "yaml", cycles)
    if output == "text":
        raise click.BadParameter("text is for --policy kai; Kueue's admission prints "
                                 "yaml or json", param_hint="-o")
    output = output or "yaml"
    docs = use_kinds(sources(filenames, kubeconfig, context).read((KUEUE_GROUP,)), ADMIT)
    objects, problems = load_snapshot(docs)
    if problems:
        for problem in problems:
            click.echo(f"error: {one_line(problem)}", err=True)
        raise SystemExit(EXIT_INPUT)
    warn_unused(docs, ADMIT)
    snapshot = read_snapshot(objects)
    moment = _latest_timestamp(objects)
    decisions, topology = admit_snapshot(snapshot, admission_moment(objects), objects, cycles)
    workloads = write_workloads(snapshot, decisions, moment, topology)
    jobs = write_jobs(snapshot, topology)
    click.echo(dumps(to_list([*workloads, *jobs]), output), nl=False)
    # a workload slice replaced by a scaled-up one has finished: not pending
    finished = {d.workload for d in decisions if d.preempted and d.reason == SLICE_REPLACED}
    pending = len(snapshot.sources) - len(
        [k for k in snapshot.sources if k in snapshot.state.admitted or k in finished])
    raise SystemExit(EXIT_UNSCHEDULABLE if pending else EXIT_OK)


def _admit_kai(filenames: tuple[str, ...], kubeconfig: str | None, context: str | None,
               output: str, cycles: int | None) -> None:
    """``--policy kai``: exit 0 when no pod of KAI's is left pending, 1 when some is,
    2 on invalid input."""
    if cycles is not None:
        raise click.BadParameter("counts Kueue's admission cycles; --policy kai runs one "
                                 "KAI session", param_hint="--cycles")
    docs = use_kinds(sources(filenames, kubeconfig, context).read(KAI_GROUPS), ADMIT_KAI)
    text, pending, problems, warnings = run_kai(docs, output)
    if problems:
        for problem in problems:
            click.echo(f"error: {one_line(problem)}", err=True)
        raise SystemExit(EXIT_INPUT)
    warn_unused(docs, ADMIT_KAI)
    for warning in warnings:
        click.echo(f"warning: {one_line(warning)}", err=True)
    click.echo(text, nl=False)
    raise SystemExit(EXIT_UNSCHEDULABLE if pending else EXIT_OK)
