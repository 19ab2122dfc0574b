"""``dralab admit --policy kai``: one KAI Scheduler session over a snapshot, in KAI's terms.

The snapshot is read by ``dralab.queueing.kai.reader`` (Queues, PodGroups, the
SchedulingShard, KAI's Config, Topologies, pods of ``kai-scheduler`` and the workloads
that make them, Nodes, PriorityClasses); one session runs its actions
(``dralab.queueing.kai.session.run_session``). The report says, per pod of KAI's: bound
(to which node, by which action), pipelined (to a node whose resources are being
released), evicted (by which action, why, for which pod group) or pending (with KAI's
unschedulable message), and per queue its fair share as the session ends. ``-o text``
prints tables; yaml/json print the same as one ``KaiSessionReport`` document (dralab's
own kind: KAI writes BindRequests, evictions and PodGroup conditions, not one object).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dralab.api.io import Document, dumps
from dralab.queueing.kai.model import UNLIMITED
from dralab.queueing.kai.reader import KaiSnapshot, load_kai_snapshot, read_kai_snapshot

from .kinds import CLUSTER_KINDS, FleetUse, VerbKinds

__all__ = ["ADMIT_KAI", "KAI_GROUPS", "kai_report", "render_text", "run_kai"]

KAI_GROUPS = ("scheduling.run.ai", "kai.scheduler")
ADMIT_KAI = VerbKinds(
    "admit --policy kai",
    CLUSTER_KINDS | {("scheduling.run.ai", "Queue"), ("scheduling.run.ai", "PodGroup"),
                     ("kai.scheduler", "SchedulingShard"), ("kai.scheduler", "Config"),
                     ("kai.scheduler", "Topology")},
    FleetUse.EXPAND)
REPORT_API_VERSION = "dralab.dev/v1alpha1"
REPORT_KIND = "KaiSessionReport"
# what the tables call each resource, and KAI's Queue unit for it
_RESOURCES = (("gpu", "GPU (devices)"), ("cpu", "CPU (millicores)"),
              ("memory", "memory (MB)"))
_MEGABYTE = 1e6


def _amount(resource: str, value: float) -> float | int:
    """A share in KAI's Queue units (memory: the session counts bytes; the Queue MB),
    -1 (unlimited) as is; whole numbers as integers."""
    if resource == "memory" and value != UNLIMITED:
        value = value / _MEGABYTE
    value = round(value, 6)
    return int(value) if value == int(value) else value


def _pod_rows(snapshot: KaiSnapshot, result: Any) -> list[dict[str, Any]]:
    last: dict[tuple[str, str], Any] = {}
    for event in result.events:
        last[(event.job, event.task)] = event
    rows: list[dict[str, Any]] = []
    for outcome in sorted(result.tasks, key=lambda t: _pod_key(snapshot, t.job, t.name)):
        job = snapshot.state.jobs.get(outcome.job)
        row: dict[str, Any] = {"pod": _pod_key(snapshot, outcome.job, outcome.name),
                               "podGroup": outcome.job,
                               "queue": job.queue if job is not None else ""}
        event = last.get((outcome.job, outcome.name))
        if event is not None and event.kind == "evict":
            row |= {"result": "evicted", "node": event.node, "action": event.action}
            if event.for_job:
                row["for"] = event.for_job
            if event.reason:
                row["reason"] = event.reason
        elif event is not None:
            row |= {"result": "bound" if event.kind == "bind" else "pipelined",
                    "node": event.node, "action": event.action}
            if event.gpu_groups:
                row["gpuGroups"] = list(event.gpu_groups)
        elif outcome.status in ("Pending", "Gated"):
            row["result"] = "pending"
            message = result.unschedulable.get(outcome.job, "").strip()
            if message:
                row["message"] = " ".join(message.split())
        else:
            row |= {"result": "unchanged", "status": outcome.status}
            if outcome.node:
                row["node"] = outcome.node
        rows.append(row)
    for key, message in sorted(snapshot.waiting.items()):
        rows.append({"pod": key, "result": "pending", "message": message})
    return rows


def _pod_key(snapshot: KaiSnapshot, job: str, task: str) -> str:
    pod = snapshot.pods.get((job, task))
    if pod is None:
        return task
    return f"{pod.metadata.namespace or 'default'}/{pod.metadata.name}"


def _queue_rows(result: Any) -> list[dict[str, Any]]:
    rows = []
    for name in sorted(result.shares):
        share = result.shares[name]
        row: dict[str, Any] = {"queue": name}
        if share.title:
            # spec.displayName: what KAI's messages call the queue
            row["displayName"] = share.title
        if share.parent:
            row["parent"] = share.parent
        for resource, _ in _RESOURCES:
            values = share.share(resource)
            row[resource] = {"deserved": _amount(resource, values.deserved),
                             "fairShare": _amount(resource, values.fair_share),
                             "allocated": _amount(resource, values.allocated),
                             "limit": _amount(resource, values.max_allowed)}
        rows.append(row)
    return rows


def kai_report(snapshot: KaiSnapshot, result: Any) -> dict[str, Any]:
    """The session's outcome as one document."""
    report: dict[str, Any] = {
        "apiVersion": REPORT_API_VERSION, "kind": REPORT_KIND,
        "shard": snapshot.shard, "actions": list(snapshot.state.config.actions),
        "pods": _pod_rows(snapshot, result), "queues": _queue_rows(result)}
    if snapshot.not_kai:
        report["notKaiScheduler"] = list(snapshot.not_kai)
    return report


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=False)]
    return ["  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
            for row in (header, *rows)]


def render_text(report: dict[str, Any]) -> str:
    """The report as tables (pods, then queue shares in KAI's Queue units)."""
    lines = [f"KAI Scheduler session, shard {report['shard']}: "
             f"{', '.join(report['actions'])}", ""]
    pods = [[p["pod"], p.get("podGroup", ""), p.get("queue", ""), p["result"],
             p.get("node") or "", p.get("action", ""),
             "; ".join(x for x in (
                 f"for {p['for']}" if "for" in p else "", p.get("reason", ""),
                 p.get("message", ""), p.get("status", "")) if x)]
            for p in report["pods"]]
    lines += _table(("POD", "POD GROUP", "QUEUE", "RESULT", "NODE", "ACTION", "DETAIL"), pods)
    lines.append("")
    header = ["QUEUE", "PARENT"]
    for _, title in _RESOURCES:
        header += [f"{title} DESERVED", "FAIR SHARE", "ALLOCATED", "LIMIT"]
    rows = []
    for q in report["queues"]:
        shown = f'{q["queue"]} ({q["displayName"]})' if "displayName" in q else q["queue"]
        row = [shown, q.get("parent", "")]
        for resource, _ in _RESOURCES:
            values = q[resource]
            row += [_shown(values[k]) for k in ("deserved", "fairShare", "allocated", "limit")]
        rows.append(row)
    lines += _table(header, rows)
    if report.get("notKaiScheduler"):
        lines += ["", "not KAI's (another schedulerName), left alone: "
                  + ", ".join(report["notKaiScheduler"])]
    return "\n".join(lines) + "\n"


def _shown(value: float | int) -> str:
    return "unlimited" if value == UNLIMITED else str(value)


def run_kai(docs: list[Document], output: str) -> tuple[str, bool, list[str], list[str]]:
    """Load, read and run one session: (what to print, whether some KAI pod is left
    pending, problems (exit 2 when any), warnings)."""
    objects, problems = load_kai_snapshot(docs)
    if problems:
        return "", False, problems, []
    snapshot = read_kai_snapshot(objects)
    # kai-actions' session module; imported here so that the Kueue path never needs it
    from dralab.queueing.kai.session import run_session

    result = run_session(snapshot.state)
    report = kai_report(snapshot, result)
    pending = any(p["result"] == "pending" for p in report["pods"])
    text = render_text(report) if output == "text" else dumps(report, output)
    return text, pending, [], snapshot.warnings
