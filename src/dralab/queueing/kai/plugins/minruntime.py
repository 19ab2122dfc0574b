"""KAI's minruntime plugin: a job that started less than its queue's minimum runtime ago
is protected from preempt and reclaim.

A queue's ``preemptMinRuntime`` / ``reclaimMinRuntime`` is inherited from the nearest
ancestor that sets one, else the plugin's default (its arguments
``defaultPreemptMinRuntime`` / ``defaultReclaimMinRuntime``, 0 s unless given). For
reclaim, ``reclaimResolveMethod`` picks whose value counts: ``lca`` (the default) reads
the victim's side of the two queues' tree -- the victim's top-level queue when the
queues sit under different top-level queues, else from the victim's child of their
lowest common ancestor upwards; ``queue`` reads the victim's queue and its ancestors.
A victim job is protected while now < its PodGroup's last-start-timestamp + that
runtime; a job without that timestamp never is.

A protected victim that is not elastic is filtered out of the victims; an elastic one
(some pod set with more pods than its minimum) may still lose pods, but a scenario is
refused if it takes any of its pod sets below its minimum.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dralab.api.durations import parse_go_duration
from dralab.queueing.kai.framework import Session, SessionJob, SessionTask
from dralab.queueing.kai.model import KaiQueue
from dralab.queueing.kai.placement import ACTIVE_USED
from dralab.queueing.kai.plugins.config import plugin_set

__all__ = [
    "LCA",
    "QUEUE",
    "MinRuntimeArguments",
    "is_protected",
    "keeps_min_available",
    "parse_str2duration",
    "plugin_arguments",
    "preempt_min_runtime",
    "queue_path",
    "reclaim_min_runtime",
    "scenario_valid",
    "victim_allowed",
]

LCA = "lca"
QUEUE = "queue"

def parse_str2duration(text: str) -> float:
    """Seconds; ValueError when xhit/go-str2duration's ParseDuration refuses the text
    (Go's time.ParseDuration with days and weeks)."""
    return parse_go_duration(text, str2duration=True)


@dataclass(frozen=True, slots=True)
class MinRuntimeArguments:
    default_preempt: float = 0.0   # seconds
    default_reclaim: float = 0.0
    reclaim_resolve_method: str = LCA


def _runtime(arguments: Mapping[str, str], key: str) -> float:
    # parseMinRuntime: absent 0; unparsable or negative: 0 (logged by KAI)
    if key not in arguments:
        return 0.0
    try:
        value = parse_str2duration(arguments[key])
    except ValueError:
        return 0.0
    return max(value, 0.0)


def plugin_arguments(arguments: Mapping[str, str]) -> MinRuntimeArguments:
    """New(): the two defaults and the resolve method (lca unless "queue")."""
    method = arguments.get("reclaimResolveMethod", "")
    return MinRuntimeArguments(
        default_preempt=_runtime(arguments, "defaultPreemptMinRuntime"),
        default_reclaim=_runtime(arguments, "defaultReclaimMinRuntime"),
        reclaim_resolve_method=QUEUE if method == QUEUE else LCA)


def queue_path(queues: Mapping[str, KaiQueue], queue: KaiQueue) -> list[KaiQueue]:
    """getQueueHierarchyPath: the queue's ancestors that exist, top first, then it."""
    path = [queue]
    at = queues.get(queue.parent) if queue.parent else None
    while at is not None:
        path.insert(0, at)
        at = queues.get(at.parent) if at.parent else None
    return path


def preempt_min_runtime(queues: Mapping[str, KaiQueue], queue: KaiQueue | None,
                        default: float) -> float:
    """The victim queue's or its nearest ancestor's preemptMinRuntime, else ``default``
    (a missing queue: the default, as KAI falls back on the resolver's error)."""
    for q in reversed(queue_path(queues, queue)) if queue is not None else ():
        if q.preempt_min_runtime is not None:
            return q.preempt_min_runtime
    return default


def reclaim_min_runtime(queues: Mapping[str, KaiQueue], method: str,
                        preemptor: KaiQueue | None, victim: KaiQueue | None,
                        default: float) -> float:
    """getReclaimMinRuntime by ``method`` (lca or queue)."""
    if preemptor is None or victim is None:
        return default
    victim_path = queue_path(queues, victim)
    if method == QUEUE:
        for q in reversed(victim_path):
            if q.reclaim_min_runtime is not None:
                return q.reclaim_min_runtime
        return default
    preemptor_path = queue_path(queues, preemptor)
    if preemptor_path[0].name != victim_path[0].name:
        top = victim_path[0].reclaim_min_runtime
        return default if top is None else top
    lca = 0
    for i in range(min(len(preemptor_path), len(victim_path))):
        if preemptor_path[i].name != victim_path[i].name:
            break
        lca = i
    if lca + 1 < len(victim_path):
        lca += 1
    for i in range(lca, -1, -1):
        value = victim_path[i].reclaim_min_runtime
        if value is not None:
            return value
    return default


def is_protected(last_start: float | None, min_runtime: float, now: float) -> bool:
    """time.Now().Before(lastStart + minRuntime); no start time: never protected."""
    return last_start is not None and now < last_start + min_runtime


def keeps_min_available(minima: Mapping[str, int], active_used: Mapping[str, int],
                        victims: Sequence[str]) -> bool:
    """validVictimForMinAvailable: every pod set the scenario takes pods from (``victims``:
    the pod set of each victim pod) keeps at least its minimum of active pods."""
    taken: dict[str, int] = {}
    for podset in victims:
        taken[podset] = taken.get(podset, 0) + 1
    return all(minima.get(podset, 0) <= active_used.get(podset, 0) - count
               for podset, count in taken.items())


# --- the session's hooks ----------------------------------------------------------------------

def _arguments(session: Session) -> MinRuntimeArguments | None:
    plugins = plugin_set(session.config)
    if not plugins.on("minruntime"):
        return None
    return plugin_arguments(plugins.args("minruntime"))


def _is_elastic(job: SessionJob) -> bool:
    # PodGroupInfo.IsElastic: some pod set has more pods than its minimum
    return any(minimum < len(job.pods_of(podset)) for podset, minimum in job.podsets().items())


def _protected(session: Session, args: MinRuntimeArguments, action: str,
               preemptor: SessionJob, victim: SessionJob) -> bool:
    queues = session.state.queues
    if action == "preempt":
        runtime = preempt_min_runtime(queues, queues.get(victim.queue), args.default_preempt)
    else:
        runtime = reclaim_min_runtime(queues, args.reclaim_resolve_method,
                                      queues.get(preemptor.queue), queues.get(victim.queue),
                                      args.default_reclaim)
    return is_protected(victim.spec.last_start, runtime, session.state.now)


def victim_allowed(session: Session, action: str, preemptor: SessionJob,
                   victim: SessionJob) -> bool:
    """The preempt/reclaim victim filter: a protected job that is not elastic is no
    victim (minruntime off: every job may be)."""
    args = _arguments(session)
    if args is None or _is_elastic(victim):
        return True
    return not _protected(session, args, action, preemptor, victim)


def scenario_valid(session: Session, action: str, preemptor: SessionJob,
                   victims: Mapping[str, list[SessionTask]]) -> bool:
    """The scenario validator: a protected elastic victim keeps every pod set it loses
    pods from at its minimum."""
    args = _arguments(session)
    if args is None:
        return True
    for name in sorted(victims):
        job = session.jobs[name]
        if not _is_elastic(job) or not _protected(session, args, action, preemptor, job):
            continue
        minima = job.podsets()
        used = {s: job.count(ACTIVE_USED, s) for s in minima}
        if not keeps_min_available(minima, used, [t.podset for t in victims[name]]):
            return False
    return True
