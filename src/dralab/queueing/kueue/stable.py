"""Admission cycles until nothing changes, as ``dralab admit`` and a simulator step run them."""

from __future__ import annotations

from dralab.queueing.model import AdmissionPolicy, Decision, QueueingState

__all__ = ["MAX_ADMISSION_CYCLES", "AdmissionDidNotSettle", "admit_cycles", "admit_until_stable"]

# Kueue takes one workload per ClusterQueue per cycle, so a queue N deep needs about
# N cycles (more with preemption); this bound only stops a policy that never settles.
MAX_ADMISSION_CYCLES = 1_000_000


class AdmissionDidNotSettle(RuntimeError):
    """Cycles kept changing the state up to the limit; ``decisions`` are those made."""

    def __init__(self, cycles: int, decisions: list[Decision]) -> None:
        super().__init__(f"admission still changing after {cycles} cycles")
        self.decisions = decisions


def admit_until_stable(policy: AdmissionPolicy, state: QueueingState, now: float,
                       max_cycles: int = MAX_ADMISSION_CYCLES) -> list[Decision]:
    """Run ``policy.cycle`` until a cycle changes nothing; every decision, in order.

    A policy that sets ``progressed`` after each cycle (``KueuePolicy`` does) says
    itself whether another cycle may change anything; for any other, a cycle that
    admits or evicts nothing ends the run.
    """
    decisions: list[Decision] = []
    # Between these cycles only the policy changes the state: a KueuePolicy may then
    # skip comparing every workload with its last view.
    from dralab.queueing.kueue.policy import KueuePolicy

    own = isinstance(policy, KueuePolicy)
    for cycle in range(max_cycles):
        if own and cycle:
            assert isinstance(policy, KueuePolicy)
            made = policy.cycle(state, now, state_unchanged=True)
        else:
            made = policy.cycle(state, now)
        decisions.extend(made)
        progressed = getattr(policy, "progressed", None)
        if progressed is None:
            progressed = any(d.admitted is not None or d.preempted for d in made)
        if not progressed:
            return decisions
    raise AdmissionDidNotSettle(max_cycles, decisions)


def admit_cycles(policy: AdmissionPolicy, state: QueueingState, now: float,
                 cycles: int | None = None) -> list[Decision]:
    """At most ``cycles`` admission cycles (one is one pass of Kueue's scheduler, as
    Kueue's TestSchedule runs it), fewer if one changes nothing; ``None``: until
    nothing changes (``admit_until_stable``). Every decision, in order."""
    if cycles is None:
        return admit_until_stable(policy, state, now)
    if cycles < 1:
        raise ValueError(f"cycles must be at least 1, not {cycles}")
    decisions: list[Decision] = []
    for _ in range(cycles):
        made = policy.cycle(state, now)
        decisions.extend(made)
        progressed = getattr(policy, "progressed", None)
        if progressed is None:
            progressed = any(d.admitted is not None or d.preempted for d in made)
        if not progressed:
            break
    return decisions
