"""KAI Scheduler in a scenario (``spec.queueing.kai``, the ``kai`` mode): KAI's session
schedules the pods in place of Kueue + kube-scheduler.

Expected outcomes follow KAI's documented behaviour (NVIDIA/KAI-Scheduler
72de64fc8eca10fa8cca26a20156178f3edbe092): docs/fairness/README.md (a queue gets its
deserved quota, the rest by over-quota weight; reclaim takes resources back from a queue
above its fair share for one below it), docs/batch (a PodGroup's minMember: all or
nothing), docs/gpu-sharing (gpu-memory shares one GPU, with the Config's gpuSharing)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import dralab
from dralab.cli.main import cli
from dralab.report import write_report
from dralab.report.terminal import render_kai_queues
from dralab.sim.results import ModeResult, SimulationResult
from dralab.sim.scenario import ScenarioError, load_scenario
from dralab.sim.simulate import run_mode

DATA = Path(__file__).parent.parent / "data" / "sim" / "kai"
EXAMPLE = Path(__file__).parent.parent.parent / "examples" / "scenarios" / "kueue-vs-kai.yaml"
FLEET = {"spec": {"pools": [{"name": "h100", "count": 2, "cpu": "64", "memory": "512Gi",
                             "gpu": {"model": "h100-80gb-sxm", "count": 8}}]}}
EIGHT = {"cpu": "8", "memory": "64Gi", "duration": {"distribution": "fixed", "mean": "1h"},
         "devices": {"type": "gpu", "count": 8}}


def _scenario(workload: list[dict[str, Any]], kai: str = "kai.yaml",
              **spec: Any) -> dralab.Scenario:
    return dralab.scenario({"duration": "4h", "compare": ["kai"], "sampleInterval": "10m",
                            "queueing": {"kai": kai}, "fleet": FLEET, "workload": workload,
                            **spec}, base_dir=DATA)


def _runs(mode: ModeResult) -> list[tuple[str, float | None, bool]]:
    return sorted((p.job, p.start, p.preempted) for p in mode.pods)


def test_reclaim_takes_back_the_over_quota_share() -> None:
    result = dralab.simulate(_scenario([
        {"name": "team-a", "arrivals": ["0s", "0s", "0s"], "kaiQueue": "team-a", **EIGHT},
        {"name": "team-b", "arrivals": ["30m"], "kaiQueue": "team-b", **EIGHT}]))
    [mode] = result.modes
    # team-a alone asks for 24 GPUs: its fair share is the whole 16 (team-b asks none),
    # so two of its jobs run. At 30 min team-b asks for its 8: team-a is above its fair
    # share (8 now), so KAI's reclaim evicts one team-a job for team-b's. The evicted
    # job (created before team-a's third) runs again when team-a's first ends at 1 h,
    # the third when team-b's ends at 1.5 h.
    assert _runs(mode) == [("team-a-00000", 0.0, False), ("team-a-00001", 0.0, True),
                           ("team-a-00001", 3600.0, False), ("team-a-00002", 5400.0, False),
                           ("team-b-00000", 1800.0, False)]
    assert mode.preemptions == 1
    queues = mode.kai_queues
    assert (queues["team-a"].started, queues["team-a"].evicted) == (4, 1)
    assert (queues["team-b"].started, queues["team-b"].evicted) == (1, 0)
    assert queues["team-a"].waits == (0.0, 0.0, 1800.0, 5400.0)
    assert queues["team-b"].waits == (0.0,)
    assert queues["team-a"].parent == "dept" and queues["dept"].parent is None
    # (t, deserved, fair share, allocated, pending jobs, running jobs) at 0 and at 30 min
    assert queues["team-a"].samples[0] == (0.0, 8.0, 16.0, 16.0, 1, 2)
    assert queues["team-a"].samples[3] == (1800.0, 8.0, 8.0, 8.0, 2, 1)
    assert queues["team-b"].samples[3] == (1800.0, 8.0, 8.0, 8.0, 0, 1)
    assert queues["dept"].samples[3] == (1800.0, 16.0, 16.0, 16.0, 2, 2)


def test_a_gang_starts_whole_or_not_at_all() -> None:
    gang = {"cpu": "8", "memory": "64Gi", "duration": {"distribution": "fixed", "mean": "1h"},
            "devices": {"type": "gpu", "count": 4}}
    result = dralab.simulate(_scenario([
        {"name": "filler", "arrivals": ["0s"], "kaiQueue": "team-b", **EIGHT,
         "podsPerJob": 1, "duration": {"distribution": "fixed", "mean": "2h"}},
        {"name": "small", "arrivals": ["0s"], "kaiQueue": "team-b", **gang},
        {"name": "gang", "arrivals": ["1m"], "kaiQueue": "team-a", **gang, "podsPerJob": 3}]))
    [mode] = result.modes
    starts = {p.key: p.start for p in mode.pods}
    # 4 GPUs are free at 1 min: one pod of the 3-pod gang would fit, but minMember is 3.
    # At 1 h the small job ends (8 free, still short of 12); at 2 h the filler ends and all
    # three start together. Reclaim cannot help: taking team-b's 12 GPUs down to the 4
    # left would put team-b below its own quota of 8.
    assert [starts[f"sim/gang-00000-{i}"] for i in range(3)] == [7200.0] * 3
    reasons = {p.unschedulable_reason for p in mode.pods if p.kind == "gang"}
    assert reasons == {None}
    # KAI's message, counted per session that left the gang waiting (at 1 min and 1 h)
    assert mode.unschedulable_reasons == {
        "Resources were found for N pods while N are required for gang scheduling": 2}


def test_min_member_lets_part_of_a_job_start() -> None:
    gang = {"cpu": "8", "memory": "64Gi", "duration": {"distribution": "fixed", "mean": "1h"},
            "devices": {"type": "gpu", "count": 4}}
    result = dralab.simulate(_scenario([
        {"name": "filler", "arrivals": ["0s"], "kaiQueue": "team-b", **EIGHT,
         "duration": {"distribution": "fixed", "mean": "2h"}},
        {"name": "small", "arrivals": ["0s"], "kaiQueue": "team-b", **gang},
        {"name": "elastic", "arrivals": ["1m"], "kaiQueue": "team-a", **gang, "podsPerJob": 3,
         "minMember": 1}]))
    [mode] = result.modes
    starts = sorted(p.start or -1 for p in mode.pods if p.kind == "elastic")
    # minMember 1: the first pod starts in the 4 GPUs left. team-a then holds 4 of its
    # quota of 8 while team-b holds 12 of its 8, so KAI reclaims team-b's small job for a
    # second pod (team-a at 8: not above its fair share). The third starts when those two
    # end, and the small job, re-created, beside it.
    assert starts == [60.0, 60.0, 3660.0]
    assert _runs(mode)[-2:] == [("small-00000", 0.0, True), ("small-00000", 3660.0, False)]


def test_gpu_memory_pods_share_one_gpu() -> None:
    share = {"cpu": "1", "memory": "8Gi", "duration": {"distribution": "fixed", "mean": "1h"},
             "devices": {"type": "share", "memory": "16Gi"}}
    result = dralab.simulate(_scenario(
        [{"name": "notebook", "arrivals": ["0s"] * 4, "kaiQueue": "team-a", **share}],
        kai="kai-sharing.yaml"))
    [mode] = result.modes
    assert all(p.start == 0.0 for p in mode.pods)
    # Four 16 GiB shares of an H100 (81,559 MiB, KAI floors it to 81,500): KAI's
    # gpu-memory, binpacked onto one GPU of one node.
    assert {p.node for p in mode.pods} == {"h100-01"}
    assert mode.samples[0].gpus_busy == 1
    assert [p.gpu_fraction for p in mode.pods] == [round(16384 / 81500, 6)] * 4


def test_gpu_fraction_pods_from_a_manifest_share_one_gpu() -> None:
    kind = {"name": "notebook", "arrivals": ["0s", "0s"], "kaiQueue": "team-a",
            "template": "half-gpu-pod.yaml",
            "duration": {"distribution": "fixed", "mean": "1h"}}
    result = dralab.simulate(_scenario([kind], kai="kai-sharing.yaml"))
    [mode] = result.modes
    # docs/gpu-sharing: gpu-fraction 0.5 twice, binpacked onto one GPU
    assert [(p.start, p.node, p.gpu_fraction) for p in mode.pods] == \
        [(0.0, "h100-01", 0.5)] * 2
    assert mode.samples[0].gpus_busy == 1
    with pytest.raises(ScenarioError) as caught:
        _scenario([kind])   # KAI's Config does not turn GPU sharing on
    assert ": spec.workload[0].template: KAI would refuse its pods: " in str(caught.value)


def test_a_build_class_job_preempts_a_train_job_of_its_queue() -> None:
    result = dralab.simulate(_scenario([
        {"name": "train", "arrivals": ["0s", "0s"], "kaiQueue": "team-a", **EIGHT,
         "priority": 50},
        {"name": "build", "arrivals": ["10m"], "kaiQueue": "team-a", "template": "build-pod.yaml",
         "duration": {"distribution": "fixed", "mean": "1h"}}]))
    [mode] = result.modes
    # docs/priority: the manifest's priorityClassName build (100) outranks train (50) in
    # the same queue: KAI's preempt evicts the train job created last.
    assert _runs(mode) == [("build-00000", 600.0, False), ("train-00000", 0.0, False),
                           ("train-00001", 0.0, True), ("train-00001", 3600.0, False)]


def test_pods_of_a_removed_node_come_back_through_kai() -> None:
    result = dralab.simulate(_scenario(
        [{"name": "team-a", "arrivals": ["0s"], "kaiQueue": "team-a", **EIGHT}],
        events=[{"at": "10m", "node": "h100-01", "action": "remove"}]))
    runs = _runs(result.modes[0])
    assert runs == [("team-a-00000", 0.0, True), ("team-a-00000", 600.0, False)]


def test_a_gang_that_loses_a_pod_is_evicted_after_the_grace_period() -> None:
    result = dralab.simulate(_scenario(
        [{"name": "gang", "arrivals": ["0s"], "kaiQueue": "team-a", "podsPerJob": 2,
          **EIGHT}],
        events=[{"at": "10m", "node": "h100-02", "action": "remove"},
                {"at": "30m", "node": "h100-02", "action": "add"}]))
    [mode] = result.modes
    # docs/batch + stalegangeviction: the gang's pod on the removed node comes back
    # pending and cannot be placed; the gang is below minMember, and once it has been
    # for the staleness grace period (60 s) KAI evicts its running pod too. Both start
    # again when the node is back.
    assert sorted((p.key, p.start, p.end, p.preempted) for p in mode.pods) == [
        ("sim/gang-00000-0", 0.0, 660.0, True), ("sim/gang-00000-0-r1", 1800.0, 5400.0, False),
        ("sim/gang-00000-1", 0.0, 600.0, True), ("sim/gang-00000-1-r1", 1800.0, 5400.0, False)]
    assert mode.preemptions == 1   # the node removal is not counted, KAI's eviction is
    assert mode.kai_queues["team-a"].waits == (0.0, 1140.0)


def test_reclaim_waits_for_the_victims_min_runtime() -> None:
    result = dralab.simulate(_scenario([
        {"name": "team-a", "arrivals": ["0s", "0s"], "kaiQueue": "team-a", **EIGHT},
        {"name": "team-b", "arrivals": ["5m"], "kaiQueue": "team-b", **EIGHT}],
        kai="kai-minruntime.yaml"))
    # docs/developer/designs/min-runtime: team-a's jobs may not be reclaimed in their
    # first 20 minutes (reclaimMinRuntime). team-b's job, arriving at 5 min, gets its
    # quota back at 20 min -- a session runs when the protection ends -- not when a
    # team-a job ends at 1 h.
    assert _runs(result.modes[0]) == [
        ("team-a-00000", 0.0, False), ("team-a-00001", 0.0, True),
        ("team-a-00001", 3600.0, False), ("team-b-00000", 1200.0, False)]


def test_the_example_compares_kueue_and_kai() -> None:
    scenario = load_scenario(str(EXAMPLE))
    assert scenario.compare == ("dra", "kai")
    result = dralab.simulate(scenario)
    dra, kai = result.modes
    assert dra.kai_queues == {} and set(dra.queues) == {"team-a", "team-b"}
    assert kai.queues == {} and set(kai.kai_queues) == {"research", "team-a", "team-b"}
    summary = kai.summary()
    assert (summary["pods_arrived"], summary["pods_started"], summary["preemptions"]) == \
        (74, 70, 6)
    a, b = kai.kai_queues["team-a"], kai.kai_queues["team-b"]
    assert (a.started, a.evicted, b.started, b.evicted) == (6, 3, 64, 0)
    assert [round(w) for w in a.waits] == [0, 1466, 4706, 886, 14559, 6185]
    # KAI's units: a 1g.10gb MIG instance counts 1 GPU, so team-b's quota holds the node's
    # 56 slices and its 8 H100s.
    assert b.samples[-1][1] == 64.0 and a.samples[-1][1] == 8.0
    assert round(a.mean(3), 2) == 8.04 and round(b.mean(3), 2) == 7.46
    assert kai.unschedulable_reasons == {
        "Resources were found for N pods while N are required for gang scheduling": 200}
    assert dra.queues["team-a"].admitted == 5 and dra.queues["team-a"].preempted == 2
    # The wait both modes share (a job's arrival to its first pod's start): three team-a
    # gangs wait in both modes, the last 17 minutes less under KAI; every other job
    # starts on arrival.
    assert len(dra.job_waits) == len(kai.job_waits) == 68
    assert sorted(round(w) for w in dra.job_waits if w) == [1466, 6185, 15573]
    assert sorted(round(w) for w in kai.job_waits if w) == [1466, 6185, 14559]


def test_deterministic_and_round_trips(tmp_path: Path) -> None:
    scenario = load_scenario(str(EXAMPLE))
    first = run_mode(scenario, "kai")
    again = run_mode(scenario, "kai")
    assert json.dumps(first.to_json()) == json.dumps(again.to_json())
    assert ModeResult.from_json(first.to_json()).kai_queues == first.kai_queues
    result = SimulationResult(scenario=scenario.name, seed=scenario.seed,
                              duration=scenario.duration, modes=(first,))
    write_report(result, tmp_path)
    page = (tmp_path / "index.html").read_text()
    assert 'id="kai-queue-table"' in page and ">team-a</th><td>research</td>" in page
    assert 'id="plot-kai-shares"' in page


def test_simulate_prints_the_kai_queues(tmp_path: Path) -> None:
    argv = ["simulate", "--scenario", str(EXAMPLE), "--seeds", "1", "--out",
            str(tmp_path / "out")]
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 0, result.output
    assert "KAI queues — seed 1: GPUs (KAI's units" in result.stdout
    row = next(line for line in result.stdout.splitlines() if line.strip().startswith("team-a"))
    assert row.split() == ["team-a", "8.0", "19.6", "8.0", "6", "3", "51.4", "min", "2.88", "h"]
    # Kueue's admission waits have no KAI counterpart: the verdict leaves them out
    # rather than calling them the same
    verdict = result.stdout.split("Verdict:")[1]
    assert "job wait p90" in verdict and "admission wait" not in verdict
    assert render_kai_queues(SimulationResult(scenario="s", seed=1, duration=1.0,
                                              modes=())) is None


def _spec(**changes: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "compare": ["kai"], "queueing": {"kai": "kai.yaml"}, "fleet": FLEET,
        "workload": [{"name": "team-a", "arrivals": ["0s"], "kaiQueue": "team-a", **EIGHT}]}
    spec.update(changes)
    return spec


def _job(**changes: Any) -> list[dict[str, Any]]:
    return [{"name": "team-a", "arrivals": ["0s"], "kaiQueue": "team-a", **EIGHT, **changes}]


@pytest.mark.parametrize(("spec", "where", "says"), [
    (_spec(workload=_job(kaiQueue="nope")), "spec.workload[0].kaiQueue",
     "no KAI Queue 'nope' in kai.yaml (Queues: dept, team-a, team-b)"),
    (_spec(workload=_job(kaiQueue="dept")), "spec.workload[0].kaiQueue",
     "'dept' is a parent queue"),
    (_spec(workload=_job(kaiQueue=None)), "spec.workload[0].kaiQueue",
     "required in the kai mode"),
    (_spec(queueing=None), "spec.workload[0].kaiQueue",
     "a KAI queue needs spec.queueing.kai"),
    (_spec(queueing={"kueue": ""}), "spec.queueing.kueue",
     "must name a file or directory of Kueue objects"),
    (_spec(workload=_job(minMember=0)), "spec.workload[0].minMember", "must be at least 1"),
    (_spec(workload=_job(minMember=2)), "spec.workload[0].minMember",
     "2 is more than podsPerJob (1)"),
    (_spec(workload=_job(devices={"type": "share", "memory": "8Gi"})),
     "spec.workload[0].devices", "spec.admission.gpuSharing: true"),
    (_spec(queueing={"kai": "missing.yaml"}), "spec.queueing.kai", "missing.yaml"),
    (_spec(compare=["kai"], queueing={"kueue": "kueue.yaml"},
           workload=[{"name": "team-a", "arrivals": ["0s"], "queue": "team-a/training",
                      **EIGHT}]),
     "spec.queueing.kai", "the kai mode needs KAI's objects"),
])
def test_bad_kai_input_names_the_field(spec: dict[str, Any], where: str, says: str) -> None:
    spec = {k: v for k, v in spec.items() if v is not None}
    spec["workload"] = [{k: v for k, v in job.items() if v is not None}
                        for job in spec["workload"]]
    with pytest.raises(ScenarioError) as caught:
        dralab.scenario(spec, base_dir=DATA)
    text = str(caught.value)
    assert f": {where}: " in text and says in text
    assert "\n" not in text


def test_the_default_comparison_leaves_kai_out() -> None:
    job = {k: v for k, v in _job()[0].items() if k != "kaiQueue"}
    scenario = dralab.scenario({"fleet": FLEET, "workload": [job]}, base_dir=DATA)
    assert scenario.compare == ("device-plugin", "dra")

