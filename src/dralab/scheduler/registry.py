"""Plugin registry: plugin name -> factory, and the Handle every factory receives.

A factory has the signature ``factory(args, handle) -> plugin``:

``args``
    The plugin's ``pluginConfig[].args`` from the scheduler configuration as a
    plain mapping (camelCase keys, exactly as written; ``{}`` when absent). The
    factory applies its defaults and validates; bad args raise
    ``PluginArgsError(field, message)`` with ``field`` relative to ``args``
    (e.g. ``scoringStrategy.type``); the profile loader prefixes the path.

``handle`` (a ``Handle``)
    ``cluster``       the run's ``ClusterState`` (read it; mutate it only through its
                      methods and only from Reserve/Unreserve, PreBind, Bind, PostFilter);
    ``features``      the run's ``FeatureGates`` (resolved once, never re-read);
    ``rng``           the run's seeded ``random.Random``, the only randomness allowed;
    ``profile_name``  the profile's schedulerName;
    ``framework``     the profile's ``Framework`` (``dralab.scheduler.runtime``), bound
                      after every plugin is built: use it at run time, not in the factory.
                      It runs other plugins, e.g. ``run_filter`` and
                      ``run_pre_filter_extension_remove_pod`` during preemption.

The registry is a value (no module globals): ``default_registry()`` returns a new
one with every in-tree plugin; callers may add their own before building profiles.
The DynamicResources plugin lives in ``dralab.scheduler.plugins.dynamicresources``
and is imported only when a profile uses it.
"""

from __future__ import annotations

import importlib
import importlib.util
import random
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

from dralab.api.errors import InputError
from dralab.api.features import FeatureGates

from .framework import Plugin

if TYPE_CHECKING:
    from .cluster import ClusterState
    from .runtime import Framework

__all__ = [
    "DYNAMIC_RESOURCES",
    "Handle",
    "PluginArgsError",
    "PluginFactory",
    "Registry",
    "default_registry",
    "dynamic_resources_available",
]

PluginFactory: TypeAlias = Callable[[Mapping[str, Any], "Handle"], Plugin]

DYNAMIC_RESOURCES = "DynamicResources"
_DRA_MODULE = "dralab.scheduler.plugins.dynamicresources"


class PluginArgsError(InputError):
    """A plugin's args are invalid; ``field`` is the path below ``args``."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.detail = message


class Handle:
    """What a plugin factory gets; see the module docstring for the contract."""

    __slots__ = ("_framework", "cluster", "features", "profile_name", "rng")

    def __init__(self, cluster: ClusterState, features: FeatureGates, rng: random.Random,
                 profile_name: str) -> None:
        self.cluster = cluster
        self.features = features
        self.rng = rng
        self.profile_name = profile_name
        self._framework: Framework | None = None

    @property
    def framework(self) -> Framework:
        if self._framework is None:
            raise RuntimeError("the framework is not built yet: use handle.framework at "
                               "scheduling time, not in the plugin factory")
        return self._framework

    def bind(self, framework: Framework) -> None:
        self._framework = framework


class Registry(Mapping[str, PluginFactory]):
    """Name -> factory. Immutable once built; ``with_plugin`` returns an extended copy."""

    def __init__(self, factories: Mapping[str, PluginFactory] | None = None) -> None:
        self._factories: dict[str, PluginFactory] = dict(factories or {})

    def __getitem__(self, name: str) -> PluginFactory:
        return self._factories[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._factories)

    def __len__(self) -> int:
        return len(self._factories)

    def with_plugin(self, name: str, factory: PluginFactory) -> Registry:
        """A copy with ``name`` added; ValueError if the name is taken."""
        if name in self._factories:
            raise ValueError(f"a plugin named {name!r} already exists")
        return Registry({**self._factories, name: factory})


def dynamic_resources_available() -> bool:
    """Whether the DRA plugin module is installed (it is developed separately)."""
    try:
        return importlib.util.find_spec(_DRA_MODULE) is not None
    except ModuleNotFoundError:
        return False


def _dynamic_resources(args: Mapping[str, Any], handle: Handle) -> Plugin:
    # Imported on first use so the framework works without the DRA half.
    module = importlib.import_module(_DRA_MODULE)
    plugin: Plugin = module.DynamicResources(args, handle)
    return plugin


# The FGD paper's policies as Score plugins (plugins/fgdscore.py), disabled by default.
_POLICY_SCORES = ("Random", "DotProd", "GpuClustering", "GpuPacking", "BestFit", "FGD",
                  "FGD-FS")


def _policy_score(name: str) -> PluginFactory:
    def create(args: Mapping[str, Any], handle: Handle) -> Plugin:
        # Imported on first use: numpy kernels are not needed by profiles without them.
        from .plugins.fgdscore import PolicyScore

        return PolicyScore(name, args, handle)

    return create


def default_registry() -> Registry:
    """Every in-tree plugin (a new Registry on each call)."""
    from .plugins import (
        defaultbinder,
        defaultpreemption,
        nodeaffinity,
        nodename,
        noderesources,
        nodeunschedulable,
        prioritysort,
        schedulinggates,
        tainttoleration,
    )

    return Registry({
        schedulinggates.NAME: schedulinggates.SchedulingGates.create,
        prioritysort.NAME: prioritysort.PrioritySort.create,
        nodeunschedulable.NAME: nodeunschedulable.NodeUnschedulable.create,
        nodename.NAME: nodename.NodeName.create,
        tainttoleration.NAME: tainttoleration.TaintToleration.create,
        nodeaffinity.NAME: nodeaffinity.NodeAffinity.create,
        noderesources.FIT: noderesources.Fit.create,
        noderesources.BALANCED_ALLOCATION: noderesources.BalancedAllocation.create,
        DYNAMIC_RESOURCES: _dynamic_resources,
        defaultpreemption.NAME: defaultpreemption.DefaultPreemption.create,
        defaultbinder.NAME: defaultbinder.DefaultBinder.create,
        **{name: _policy_score(name) for name in _POLICY_SCORES},
    })
