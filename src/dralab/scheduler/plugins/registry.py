"""The in-tree plugin registry: every plugin dralab models, by its kube-scheduler name.

``default_registry()`` returns a new ``Registry`` (``dralab.scheduler.framework``) on
each call; callers may add their own plugins before building profiles.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..framework import Handle, Plugin, PluginFactory, Registry
from . import (
    defaultbinder,
    defaultpreemption,
    dynamicresources,
    gangscheduling,
    imagelocality,
    interpodaffinity,
    nodeaffinity,
    nodename,
    nodeports,
    noderesources,
    nodeunschedulable,
    nodevolumelimits,
    nvlinkgang,
    podtopologyspread,
    prioritysort,
    schedulinggates,
    tainttoleration,
    volumebinding,
    volumerestrictions,
    volumezone,
)

__all__ = ["DYNAMIC_RESOURCES", "POLICY_SCORES", "default_registry"]

DYNAMIC_RESOURCES = dynamicresources.NAME

# The FGD paper's policies as Score plugins (plugins/fgdscore.py), disabled by default.
POLICY_SCORES = ("Random", "DotProd", "GpuClustering", "GpuPacking", "BestFit", "FGD",
                 "FGD-FS")


def _policy_score(name: str) -> PluginFactory:
    def create(args: Mapping[str, Any], handle: Handle) -> Plugin:
        # Imported on first use: profiles without these need no numpy policy kernels.
        from .fgdscore import PolicyScore

        return PolicyScore(name, args, handle)

    return create


def default_registry() -> Registry:
    """Every in-tree plugin (a new Registry on each call)."""
    return Registry({
        schedulinggates.NAME: schedulinggates.SchedulingGates.create,
        prioritysort.NAME: prioritysort.PrioritySort.create,
        nodeunschedulable.NAME: nodeunschedulable.NodeUnschedulable.create,
        nodename.NAME: nodename.NodeName.create,
        tainttoleration.NAME: tainttoleration.TaintToleration.create,
        nodeaffinity.NAME: nodeaffinity.NodeAffinityPlugin.create,
        nodeports.NAME: nodeports.NodePorts.create,
        noderesources.FIT: noderesources.Fit.create,
        volumerestrictions.NAME: volumerestrictions.VolumeRestrictions.create,
        nodevolumelimits.NAME: nodevolumelimits.NodeVolumeLimits.create,
        volumebinding.NAME: volumebinding.VolumeBinding.create,
        volumezone.NAME: volumezone.VolumeZone.create,
        podtopologyspread.NAME: podtopologyspread.PodTopologySpread.create,
        interpodaffinity.NAME: interpodaffinity.InterPodAffinity.create,
        noderesources.BALANCED_ALLOCATION: noderesources.BalancedAllocation.create,
        imagelocality.NAME: imagelocality.ImageLocality.create,
        DYNAMIC_RESOURCES: dynamicresources.DynamicResources.create,
        defaultpreemption.NAME: defaultpreemption.DefaultPreemption.create,
        defaultbinder.NAME: defaultbinder.DefaultBinder.create,
        # Opt-in (not in the default profile): see plugins/gangscheduling.py.
        gangscheduling.NAME: gangscheduling.GangScheduling.create,
        # Opt-in, beyond upstream (issue 36): see plugins/nvlinkgang.py.
        nvlinkgang.NAME: nvlinkgang.NVLinkDomainGang.create,
        **{name: _policy_score(name) for name in POLICY_SCORES},
    })
