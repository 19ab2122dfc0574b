"""Queueing in a scenario (``spec.queueing``): Kueue objects from a file, job kinds sent
to LocalQueues, admission by Kueue's rules before scheduling. Expected outcomes follow
Kueue's documented cohort behaviour (site/content/en/docs/concepts/cluster_queue.md:
borrowing unused quota of the cohort; reclaimWithinCohort preempts borrowers)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import dralab

DATA = Path(__file__).parent.parent / "data" / "sim" / "queueing"


def _scenario(kueue: str, mode: str = "dra") -> dralab.Scenario:
    kind: dict[str, Any] = {"cpu": "8", "memory": "64Gi",
                            "duration": {"distribution": "fixed", "mean": "1h"},
                            "devices": {"type": "gpu", "count": 8}}
    return dralab.scenario({
        "duration": "4h", "compare": [mode], "sampleInterval": "10m",
        "queueing": {"kueue": kueue},
        "fleet": {"spec": {"pools": [{"name": "h100", "count": 2, "cpu": "64",
                                      "memory": "512Gi",
                                      "gpu": {"model": "h100-80gb-sxm", "count": 8}}]}},
        "workload": [{"name": "team-a", "arrivals": ["0s", "0s", "0s"],
                      "queue": "team-a/training", **kind},
                     {"name": "team-b", "arrivals": ["30m"], "queue": "team-b/training",
                      **kind}]}, base_dir=DATA)


def _starts(result: dralab.SimulationResult) -> list[tuple[str, float | None, bool]]:
    [mode] = result.modes
    return sorted((p.job, p.start, p.preempted) for p in mode.pods)


@pytest.mark.parametrize("mode", ["dra", "device-plugin"])
def test_borrowing_without_reclaim(mode: str) -> None:
    result = dralab.simulate(_scenario("kueue-no-reclaim.yaml", mode))
    # team-a takes its 8 GPUs and borrows team-b's idle 8; its third job waits.
    # team-b's job (30 min) finds its quota lent out and waits for the borrower to end.
    assert _starts(result) == [("team-a-00000", 0.0, False), ("team-a-00001", 0.0, False),
                               ("team-a-00002", 3600.0, False),
                               ("team-b-00000", 3600.0, False)]
    queues = result.modes[0].queues
    assert queues["team-a"].admitted == 3 and queues["team-b"].admitted == 1
    assert sorted(queues["team-b"].waits) == [1800.0]


def test_reclaim_within_cohort_preempts_the_borrower() -> None:
    result = dralab.simulate(_scenario("kueue.yaml"))
    runs = _starts(result)
    # At 30 min team-b reclaims its quota: team-a's most recently admitted job (the
    # borrowing one) is evicted and requeued; it is admitted again when team-a's own
    # job ends at 1 h, and the third borrows again once team-b's job ends at 1.5 h.
    assert runs == [("team-a-00000", 0.0, False), ("team-a-00001", 0.0, True),
                    ("team-a-00001", 3600.0, False), ("team-a-00002", 5400.0, False),
                    ("team-b-00000", 1800.0, False)]
    assert result.modes[0].queues["team-a"].preempted == 1


def test_queue_errors_name_the_field() -> None:
    with pytest.raises(dralab.DralabError, match=r"spec\.workload\[0\]\.queue: no LocalQueue"):
        dralab.scenario({"duration": "1h", "queueing": {"kueue": "kueue.yaml"},
                         "fleet": {"default": True},
                         "workload": [{"name": "x", "arrivals": ["0s"],
                                       "queue": "team-c/training"}]}, base_dir=DATA)
    with pytest.raises(dralab.DralabError, match=r"spec\.workload\[0\]\.queue: a queue needs"):
        dralab.scenario({"duration": "1h", "fleet": {"default": True},
                         "workload": [{"name": "x", "arrivals": ["0s"],
                                       "queue": "team-a/training"}]}, base_dir=DATA)


@pytest.mark.parametrize(("kueue", "big_starts"), [("kueue-no-reclaim.yaml", 1),
                                                   ("kueue-feasibility.yaml", 0)])
def test_feasibility_gate_admits_only_what_can_be_placed(kueue: str, big_starts: int) -> None:
    """One 8-GPU node; team-a's quota (8 + 8 borrowed) admits a 2 x 8-GPU job, which
    can never run whole. Without the gate Kueue admits it: its pods hold the node one
    after the other and the small job (admitted too, by its own quota) waits 2 h; with
    KueueDRADeviceFeasibility the big job stays pending and the small one starts at once."""
    kind: dict[str, Any] = {"cpu": "8", "memory": "64Gi",
                            "duration": {"distribution": "fixed", "mean": "1h"},
                            "devices": {"type": "gpu", "count": 8}}
    s = dralab.scenario({
        "duration": "3h", "compare": ["dra"], "sampleInterval": "10m",
        "queueing": {"kueue": kueue},
        "fleet": {"spec": {"pools": [{"name": "h100", "count": 1, "cpu": "64",
                                      "memory": "512Gi",
                                      "gpu": {"model": "h100-80gb-sxm", "count": 8}}]}},
        "workload": [{"name": "big", "arrivals": ["0s"], "podsPerJob": 2,
                      "queue": "team-a/training", **kind},
                     {"name": "small", "arrivals": ["1s"], "queue": "team-b/training",
                      **kind}]}, base_dir=DATA)
    [mode] = dralab.simulate(s).modes
    started = {p.key: p.start for p in mode.pods}
    assert sum(1 for k, t in started.items() if "big" in k and t == 0.0) == big_starts
    small = [t for k, t in started.items() if "small" in k]
    assert small == ([1.0] if big_starts == 0 else [7200.0])


def test_feasibility_preemption_frees_the_victims_devices_where_the_preemptor_lands() -> None:
    """Two 8-GPU nodes, 16 GPUs of quota. Four low-priority 4-GPU jobs fill both nodes;
    an urgent 8-GPU job needs one whole node. With the gate, its victims are the two
    low jobs on one node (not two by quota order, one per node); their pods go and
    their claims' devices are freed, and the urgent job starts at once."""
    low: dict[str, Any] = {"cpu": "4", "memory": "32Gi", "priority": 10,
                           "duration": {"distribution": "fixed", "mean": "2h"},
                           "devices": {"type": "gpu", "count": 4}}
    s = dralab.scenario({
        "duration": "3h", "compare": ["dra"], "sampleInterval": "10m",
        "queueing": {"kueue": "kueue-feasibility-preemption.yaml"},
        "fleet": {"spec": {"pools": [{"name": "h100", "count": 2, "cpu": "64",
                                      "memory": "512Gi",
                                      "gpu": {"model": "h100-80gb-sxm", "count": 8}}]}},
        "workload": [{"name": "low", "arrivals": ["0s", "0s", "0s", "0s"],
                      "queue": "team-a/training", **low},
                     {"name": "urgent", "arrivals": ["10m"], "queue": "team-a/training",
                      **(low | {"priority": 1000, "cpu": "8",
                                "devices": {"type": "gpu", "count": 8}})}]}, base_dir=DATA)
    [mode] = dralab.simulate(s).modes
    urgent = [p for p in mode.pods if "urgent" in p.key]
    assert [p.start for p in urgent] == [600.0]
    evicted = [p for p in mode.pods if "low" in p.key and p.end == 600.0]
    assert len(evicted) == 2
    assert len({p.node for p in evicted}) == 1 and evicted[0].node == urgent[0].node


def test_a_kind_kueue_would_never_admit_is_an_input_error() -> None:
    # The Configuration maps only gpu.nvidia.com; a MIG claim's class is unmapped, which
    # Kueue answers by keeping the workload inadmissible (dra.charge's message). Every job
    # of the kind would wait the whole run: the scenario names the kind instead of a crash.
    scenario = dralab.scenario({
        "duration": "2h", "compare": ["dra"], "queueing": {"kueue": "kueue.yaml"},
        "fleet": {"spec": {"pools": [{"name": "a100", "count": 1, "cpu": "64",
                                      "memory": "512Gi",
                                      "gpu": {"model": "a100-80gb", "count": 8,
                                              "mig": {"mode": "dynamic"}}}]}},
        "workload": [{"name": "team-b", "arrivals": ["0s"], "queue": "team-b/training",
                      "cpu": "8", "memory": "64Gi",
                      "duration": {"distribution": "fixed", "mean": "30m"},
                      "devices": {"type": "mig", "profile": "3g.20gb"}}]}, base_dir=DATA)
    with pytest.raises(dralab.InputError, match=(
            r"spec\.workload\[0\]\.queue: Kueue would admit none of its jobs in dra mode: "
            r".*DeviceClass mig\.nvidia\.com is not mapped in DRA configuration")):
        dralab.simulate(scenario)
