"""``dralab explain podgroup``: why a KAI pod group (or a pod of KAI's) waits, in KAI's terms.

One KAI Scheduler session runs over the snapshot as ``dralab admit --policy kai`` runs
it (``admit_kai``); then, for the target's pod group: its queue, priority,
preemptibility and gang (minMember), what the session did with each of its pods (bound,
pipelined, evicted by which action and for whom, or pending), KAI's unschedulable
message for it as KAI writes it on the PodGroup (JobFitErrorsToDetailedMessage), and
the fair share of its queue and of every parent up the tree (deserved, fair share,
allocated and limit, GPU in devices, CPU in millicores, memory in MB).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dralab.api.io import Document
from dralab.queueing.kai.model import UNLIMITED
from dralab.queueing.kai.reader import KaiSnapshot, load_kai_snapshot, read_kai_snapshot

from .admit_kai import ADMIT_KAI, kai_report
from .kinds import VerbKinds

__all__ = ["EXPLAIN_PODGROUP", "KaiExplanation", "explain_kai"]

# what `admit --policy kai` reads, under this verb's name in warnings
EXPLAIN_PODGROUP = VerbKinds("explain podgroup", ADMIT_KAI.uses, ADMIT_KAI.fleet)

_PLACED = ("bound", "pipelined", "unchanged")
_RESOURCES = (("gpu", "GPU"), ("cpu", "CPU (m)"), ("memory", "memory (MB)"))


@dataclass(frozen=True, slots=True)
class KaiExplanation:
    text: str
    placed: bool           # every pod of the group bound or running after the session
    problems: tuple[str, ...] = ()
    unknown: str = ""      # the target names nothing: one line saying what there is


def _group_of(snapshot: KaiSnapshot, rows: Sequence[dict[str, Any]], target: str,
              namespace: str) -> tuple[str | None, list[dict[str, Any]]]:
    """(the pod group's name, its pod rows) for a PodGroup NAMESPACE/NAME or a pod's."""
    key = target if "/" in target else f"{namespace}/{target}"
    ns, _, name = key.partition("/")
    for job in snapshot.state.jobs.values():
        if job.name == name and job.namespace == ns:
            return job.name, [r for r in rows if r.get("podGroup") == job.name]
    for row in rows:
        if row["pod"] == key:
            group = row.get("podGroup")
            if group is None:
                return None, [row]
            return group, [r for r in rows if r.get("podGroup") == group]
    return None, []


def _shown(value: Any) -> str:
    return "unlimited" if value == UNLIMITED else str(value)


def _queue_lines(report: dict[str, Any], queue: str) -> list[str]:
    by_name = {q["queue"]: q for q in report["queues"]}
    lines = []
    seen: set[str] = set()
    name: str | None = queue
    while name is not None and name in by_name and name not in seen:
        seen.add(name)
        q = by_name[name]
        parent = q.get("parent")
        title = f"queue {name}" + (f" (parent {parent})" if parent else "")
        parts = [f"{label} deserved {_shown(q[r]['deserved'])}, fair share "
                 f"{_shown(q[r]['fairShare'])}, allocated {_shown(q[r]['allocated'])}, "
                 f"limit {_shown(q[r]['limit'])}" for r, label in _RESOURCES]
        lines.append(f"{title}:\n" + "".join(f"  {p}\n" for p in parts))
        name = parent
    return lines


def explain_kai(docs: list[Document], target: str, namespace: str = "default"
                ) -> KaiExplanation:
    """Load the snapshot, run one KAI session and explain ``target``'s pod group."""
    objects, problems = load_kai_snapshot(docs)
    if problems:
        return KaiExplanation("", False, tuple(problems))
    snapshot = read_kai_snapshot(objects)
    # kai-actions' session module; imported here so that the other explain paths never need it
    from dralab.queueing.kai.session import run_session

    result = run_session(snapshot.state)
    report = kai_report(snapshot, result)
    group, rows = _group_of(snapshot, report["pods"], target, namespace)
    if not rows:
        known = sorted({f"{j.namespace}/{j.name}" for j in snapshot.state.jobs.values()}
                       | {r["pod"] for r in report["pods"]})
        return KaiExplanation("", False, (), f"no pod group or pod of KAI's {target} "
                                             f"(known: {', '.join(known) or 'none'})")
    lines: list[str] = []
    job = snapshot.state.jobs.get(group) if group is not None else None
    if job is not None:
        preemptible = "preemptible" if job.is_preemptible() else "not preemptible"
        lines.append(f"pod group {job.namespace}/{job.name}: queue {job.queue}, priority "
                     f"{job.priority}{f' ({job.priority_class})' if job.priority_class else ''}"
                     f", {preemptible}, minMember {job.min_member}\n")
    lines.append(f"KAI Scheduler session, shard {report['shard']}: "
                 f"{', '.join(report['actions'])}\n")
    for row in rows:
        detail = [f"on {row['node']}" if row.get("node") else "",
                  f"by {row['action']}" if row.get("action") else "",
                  f"for {row['for']}" if row.get("for") else "",
                  row.get("reason", ""), row.get("status", "")]
        lines.append(f"  {row['pod']}: {row['result']}"
                     + "".join(f", {d}" for d in detail if d) + "\n")
    message = result.unschedulable.get(group, "").strip() if group is not None else ""
    if not message and len(rows) == 1 and rows[0].get("message"):
        message = rows[0]["message"]
    if message:
        lines.append("why it waits (KAI's message):\n"
                     + "".join(f"  {line.strip()}\n" for line in message.splitlines()
                               if line.strip()))
    if job is not None:
        lines += _queue_lines(report, job.queue)
    placed = all(r["result"] in _PLACED and (r["result"] != "unchanged" or r.get("node"))
                 and r["result"] != "pipelined" for r in rows)
    return KaiExplanation("".join(lines), placed)
