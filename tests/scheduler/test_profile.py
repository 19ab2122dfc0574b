"""Scheduler configuration: defaults, merging, plugin args and one-line errors."""

from __future__ import annotations

import random
from typing import Any

import pytest

from dralab.api.errors import InputError
from dralab.cluster import ClusterState
from dralab.scheduler import ConfigError, parse_config, schedule
from dralab.scheduler.plugins.noderesources import Fit
from dralab.scheduler.profile import build_frameworks
from dralab.scheduler.runtime import Framework

from .builders import config, fit_args, node, placements, pod

DRA = ["DynamicResources"]


def frameworks(doc: dict[str, Any] | None, warnings: list[str] | None = None
               ) -> dict[str, Framework]:
    return build_frameworks(parse_config(doc), ClusterState(), random.Random(0),
                            warnings=warnings)


def default() -> Framework:
    return frameworks(None)["default-scheduler"]


def test_default_profile_matches_upstream_order_and_weights() -> None:
    fw = default()
    assert fw.points["queueSort"] == ("PrioritySort",)
    assert fw.points["filter"] == ("NodeUnschedulable", "NodeName", "TaintToleration",
                                   "NodeAffinity", "NodePorts", "NodeResourcesFit",
                                   "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding",
                                   "VolumeZone", "PodTopologySpread", "InterPodAffinity", *DRA)
    assert fw.points["postFilter"] == (*DRA, "DefaultPreemption")
    assert fw.points["bind"] == ("DefaultBinder",)
    assert fw.points["preEnqueue"][0] == "SchedulingGates"
    # kubernetes v1.36.2 pkg/scheduler/apis/config/v1/default_plugins.go,
    # getDefaultPlugins and applyDynamicResources: DynamicResources has weight 2.
    # PodTopologySpread and InterPodAffinity have weight 2 as well, ImageLocality 1.
    assert fw.weights == {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1,
                          "PodTopologySpread": 2, "InterPodAffinity": 2, **{d: 2 for d in DRA},
                          "NodeResourcesBalancedAllocation": 1, "ImageLocality": 1}
    fit = fw.plugins["NodeResourcesFit"]
    assert isinstance(fit, Fit)
    assert (fit.strategy, fit.resources) == ("LeastAllocated", (("cpu", 1), ("memory", 1)))


def test_empty_document_is_the_default_profile() -> None:
    assert parse_config(config()).profiles[0].scheduler_name == "default-scheduler"


def test_disable_and_reweight() -> None:
    fw = frameworks(config({"schedulerName": "default-scheduler", "plugins": {
        "score": {"disabled": [{"name": "NodeResourcesBalancedAllocation"}],
                  "enabled": [{"name": "NodeAffinity", "weight": 7}]},
        "filter": {"disabled": [{"name": "TaintToleration"}]}}}))["default-scheduler"]
    assert "NodeResourcesBalancedAllocation" not in fw.points["score"]
    assert fw.points["score"][0] == "NodeAffinity"  # explicitly configured: first
    assert fw.weights["NodeAffinity"] == 7
    assert "TaintToleration" not in fw.points["filter"]
    assert "TaintToleration" in fw.points["score"]


def test_disable_all_multipoint_and_build_from_scratch() -> None:
    fw = frameworks(config({"schedulerName": "minimal", "plugins": {"multiPoint": {
        "disabled": [{"name": "*"}],
        "enabled": [{"name": "PrioritySort"}, {"name": "NodeResourcesFit", "weight": 2},
                    {"name": "DefaultBinder"}]}}}))["minimal"]
    assert fw.points["filter"] == ("NodeResourcesFit",)
    assert fw.points["postFilter"] == ()
    assert fw.weights == {"NodeResourcesFit": 2}


def test_two_profiles_and_scheduler_name() -> None:
    doc = config({"schedulerName": "default-scheduler"},
                 {"schedulerName": "packer", "pluginConfig": [fit_args("MostAllocated")]})
    result = schedule([node("a", "4"), node("b", "4"),
                       pod("p1", "1", scheduler_name="packer"),
                       pod("p2", "1", scheduler_name="packer"),
                       pod("p3", "1", scheduler_name="packer")], doc)
    assert len(set(placements(result).values())) == 1


def test_percentage_of_nodes_to_score_profile_overrides_global() -> None:
    fws = frameworks(config({"schedulerName": "a", "percentageOfNodesToScore": 30},
                            {"schedulerName": "b"}, percentageOfNodesToScore=70))
    assert fws["a"].percentage_of_nodes_to_score == 30
    assert fws["b"].percentage_of_nodes_to_score == 70


def test_plugin_args_strategies() -> None:
    fw = frameworks(config({"schedulerName": "x", "pluginConfig": [fit_args(
        "RequestedToCapacityRatio", [("cpu", 3), ("nvidia.com/gpu", 5)],
        [(0, 0), (100, 10)])]}))["x"]
    fit = fw.plugins["NodeResourcesFit"]
    assert isinstance(fit, Fit)
    assert fit.resources == (("cpu", 3), ("nvidia.com/gpu", 5))


def test_unmodelled_upstream_plugins_are_ignored_with_a_warning() -> None:
    warnings: list[str] = []
    fw = frameworks(config({"schedulerName": "x", "plugins": {
        "filter": {"enabled": [{"name": "EBSLimits"}],
                   "disabled": [{"name": "GCEPDLimits"}]}}}), warnings)["x"]
    assert "EBSLimits" not in fw.plugins
    assert warnings == ["profiles[0]: plugin EBSLimits is not modelled; ignored"]


ERRORS = [
    ({"apiVersion": "kubescheduler.config.k8s.io/v1beta3", "kind": "KubeSchedulerConfiguration"},
     'apiVersion: Unsupported value: "kubescheduler.config.k8s.io/v1beta3": supported values: '
     '"kubescheduler.config.k8s.io/v1"'),
    (config(profilez=[]), "profilez: unknown field"),
    (config(percentageOfNodesToScore=120),
     "percentageOfNodesToScore: Invalid value: 120: not in valid range [0-100]"),
    (config({"schedulerName": "a"}, {}), "profiles[1].schedulerName: Required value"),
    (config({"schedulerName": "a"}, {"schedulerName": "a"}),
     'profiles[1].schedulerName: Duplicate value: "a"'),
    (config({"plugins": {"filter": {"enabled": [{"name": "Nope"}]}}}),
     'profiles[0].plugins.filter.enabled[0].name: Invalid value: "Nope": plugin does not exist'),
    (config({"plugins": {"score": {"enabled": [{"name": "NodeName"}]}}}),
     'profiles[0].plugins.score.enabled[0].name: Invalid value: "NodeName": '
     "plugin does not extend score"),
    (config({"plugins": {"score": {"enabled": [{"name": "NodeAffinity", "weight": 101}]}}}),
     "profiles[0].plugins.score.enabled[0].weight: Invalid value: 101: "
     "not in valid range [0, 100]"),
    (config({"plugins": {"preScore": {"enabled": [{}]}}}),
     "profiles[0].plugins.preScore.enabled[0].name: Required value"),
    (config({"plugins": {"sort": {}}}), "profiles[0].plugins.sort: unknown field"),
    (config({"plugins": {"bind": {"disabled": [{"name": "DefaultBinder"}]}}}),
     "profiles[0].plugins.bind: Required value: at least one bind plugin is needed"),
    (config({"plugins": {"queueSort": {"disabled": [{"name": "*"}]}}}),
     "profiles[0].plugins.queueSort: Required value: no queue sort plugin is enabled"),
    (config({"pluginConfig": [fit_args("Fastest")]}),
     'profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value: "Fastest": '
     'supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'),
    (config({"pluginConfig": [fit_args("LeastAllocated", [("cpu", 200)])]}),
     "profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: Invalid value: "
     "200: resource weight of cpu not in valid range (0, 100]"),
    (config({"pluginConfig": [fit_args("RequestedToCapacityRatio")]}),
     "profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape: "
     "Required value: at least one point must be specified"),
    (config({"pluginConfig": [fit_args("RequestedToCapacityRatio", shape=[(50, 1), (40, 2)])]}),
     "profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape[1]"
     ".utilization: Invalid value: 40: utilization values must be sorted in increasing order"),
    (config({"pluginConfig": [fit_args("RequestedToCapacityRatio", shape=[(0, 11)])]}),
     "profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape[0]"
     ".score: Invalid value: 11: not in valid range [0, 10]"),
    (config({"pluginConfig": [{"name": "NodeResourcesFit"}, {"name": "NodeResourcesFit"}]}),
     'profiles[0].pluginConfig[1].name: Duplicate value: "NodeResourcesFit"'),
    (config({"pluginConfig": [{"name": "DefaultPreemption",
                                "args": {"minCandidateNodesPercentage": 101}}]}),
     "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 101: "
     "not in valid range [0, 100]"),
    (config({"pluginConfig": [{"name": "NodeResourcesBalancedAllocation",
                                "args": {"resources": [{"name": "cpu", "weight": 2}]}}]}),
     "profiles[0].pluginConfig[0].args.resources[0].weight: Invalid value: 2: must be 1"),
    (config({"schedulerName": "a"}, {"schedulerName": "b", "plugins": {"queueSort": {
        "disabled": [{"name": "*"}], "enabled": [{"name": "Custom"}]}}}),
     'profiles[1].plugins.queueSort.enabled[0].name: Invalid value: "Custom": '
     "plugin does not exist"),
    (config(extenders=[{"urlPrefix": "http://x"}]),
     "extenders: Forbidden: scheduler extenders are not supported by dralab"),
]


@pytest.mark.parametrize(("doc", "message"), ERRORS, ids=[m.split(":")[0] for _, m in ERRORS])
def test_config_errors_name_the_field(doc: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        frameworks(doc)
    assert str(info.value) == message
    assert isinstance(info.value, InputError)
    assert "\n" not in str(info.value)


def test_queue_backoff_comes_from_the_configuration() -> None:
    # kube-scheduler v1.36.2 pkg/scheduler/apis/config/v1/defaults.go (1 s and 10 s) and
    # validation.go ValidateKubeSchedulerConfiguration; the queue doubles the back-off
    # per attempt up to the maximum (backend/queue calculateBackoffDuration).
    from dralab.scheduler import Scheduler
    from dralab.scheduler.queue import QueuedPod

    assert (parse_config(None).pod_initial_backoff_seconds,
            parse_config(None).pod_max_backoff_seconds) == (1, 10)
    doc = config(podInitialBackoffSeconds=5, podMaxBackoffSeconds=12)
    scheduler = Scheduler.build(ClusterState(), doc)
    assert scheduler.queue.backoff == (5.0, 12.0)
    queued = QueuedPod(None, 0, 0, backoff=scheduler.queue.backoff)  # type: ignore[arg-type]
    expiries = []
    for attempts in (1, 2, 3):
        queued.attempts, queued.failed_at = attempts, 100.0
        expiries.append(queued.backoff_expiry())
    assert expiries == [105.0, 110.0, 112.0]
    for top, message in (
            ({"podInitialBackoffSeconds": 0},
             "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0"),
            ({"podInitialBackoffSeconds": 3, "podMaxBackoffSeconds": 2},
             "podMaxBackoffSeconds: Invalid value: 2: must be greater than or equal to "
             "PodInitialBackoffSeconds")):
        with pytest.raises(ConfigError) as info:
            parse_config(config(**top))
        assert str(info.value) == message


def test_dynamic_resources_args_are_checked() -> None:
    # DynamicResourcesArgs (v1.36.2 pkg/scheduler/apis/config/types_pluginargs.go) has
    # filterTimeout and bindingTimeout: accepted. A field nobody defines is refused, as
    # kube-scheduler's strict decoding refuses it, instead of being ignored.
    args = {"filterTimeout": "10s", "bindingTimeout": "600s", "devicePolicy": "first-fit"}
    doc = config({"pluginConfig": [{"name": "DynamicResources", "args": args}]})
    assert "DynamicResources" in frameworks(doc)["default-scheduler"].plugins
    typo = {"devicePolicyy": "pack"}
    doc = config({"pluginConfig": [{"name": "DynamicResources", "args": typo}]})
    with pytest.raises(ConfigError) as info:
        frameworks(doc)
    assert str(info.value) == "profiles[0].pluginConfig[0].args.devicePolicyy: unknown field"


@pytest.mark.parametrize("plugin", ["DefaultPreemption", "NodeResourcesFit",
                                    "NodeResourcesBalancedAllocation", "NodeAffinity"])
def test_unknown_args_of_upstream_plugins_are_refused(plugin: str) -> None:
    # Strict decoding of the plugin's Args type (kube-scheduler config/v1
    # types_pluginargs.go): a misspelt field is an error, not a silent default.
    doc = config({"pluginConfig": [{"name": plugin, "args": {"kind": plugin + "Args",
                                                              "bogus": 1}}]})
    with pytest.raises(ConfigError) as info:
        frameworks(doc)
    assert str(info.value) == "profiles[0].pluginConfig[0].args.bogus: unknown field"
