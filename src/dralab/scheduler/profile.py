"""Scheduler profiles from a KubeSchedulerConfiguration-shaped document.

``parse_config`` checks and normalises the document (``apiVersion:
kubescheduler.config.k8s.io/v1``, ``profiles[].schedulerName``,
``plugins.<point>.enabled/disabled``, ``multiPoint``, ``pluginConfig[].args``,
``percentageOfNodesToScore``); ``build_frameworks`` instantiates the plugins.
Both raise ``ConfigError`` (an InputError) with one line naming the field, e.g.
``profiles[0].plugins.score.enabled[1].name: Invalid value: "Foo": plugin does not exist``.

Merging follows kube-scheduler: the default profile enables its plugins through
``multiPoint``; a profile's point-specific ``enabled`` entries override or extend
it, ``disabled`` removes (``*`` = all defaults of that point); a plugin configured
at a specific point comes first there, then multiPoint plugins, then the rest.
Score weights: the Score point's entry, else multiPoint's, else 1.

Upstream plugins dralab does not model (Volume*, ...) are accepted and left out
with a warning.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dralab.api.errors import ErrorType, FieldError, InputError
from dralab.api.features import FeatureGates, Gate
from dralab.cluster import ClusterState

from .cycle import DEFAULT_SCHEDULER_NAME
from .framework import Handle, Plugin, PluginArgsError, Registry
from .plugins.registry import DYNAMIC_RESOURCES, default_registry
from .runtime import EXTENSION_POINTS, Framework, implements

__all__ = [
    "API_VERSION",
    "KIND",
    "UNMODELLED_PLUGINS",
    "ConfigError",
    "PluginRef",
    "PluginSet",
    "ProfileConfig",
    "SchedulerConfig",
    "build_frameworks",
    "default_plugins",
    "parse_config",
]

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
MULTI_POINT = "multiPoint"
POINT_KEYS = (MULTI_POINT, *EXTENSION_POINTS, "postBind")
# Score weights are bounded so the weighted sum cannot overflow upstream's int64.
MAX_WEIGHT = 100

UNMODELLED_PLUGINS = frozenset({
    "EBSLimits", "GCEPDLimits", "AzureDiskLimits", "CinderLimits",
    "TopologyAwareWorkloadScheduling",
})
# The fields of the in-tree plugins' args (kube-scheduler config/v1 types_pluginargs.go,
# v1.36.2): kube-scheduler decodes them strictly, so any other field is an error.
_TYPE_META = frozenset({"apiVersion", "kind"})
_ARGS_FIELDS: dict[str, frozenset[str]] = {
    "DefaultPreemption": _TYPE_META | {"minCandidateNodesPercentage",
                                       "minCandidateNodesAbsolute"},
    "NodeResourcesFit": _TYPE_META | {"ignoredResources", "ignoredResourceGroups",
                                      "scoringStrategy"},
    "NodeResourcesBalancedAllocation": _TYPE_META | {"resources"},
    "NodeAffinity": _TYPE_META | {"addedAffinity"},
    "PodTopologySpread": _TYPE_META | {"defaultConstraints", "defaultingType"},
    "InterPodAffinity": _TYPE_META | {"hardPodAffinityWeight",
                                      "ignorePreferredTermsOfExistingPods"},
    # Read and ignored: dralab binds nothing and VolumeBinding does not score.
    "VolumeBinding": _TYPE_META | {"bindTimeoutSeconds", "shape"},
}
_TOP_LEVEL = frozenset({
    "apiVersion", "kind", "profiles", "percentageOfNodesToScore", "parallelism",
    "leaderElection", "clientConnection", "healthzBindAddress", "metricsBindAddress",
    "enableProfiling", "enableContentionProfiling", "podInitialBackoffSeconds",
    "podMaxBackoffSeconds", "extenders", "delayCacheUntilActive", "featureGates",
})
_PROFILE_KEYS = frozenset({"schedulerName", "percentageOfNodesToScore", "plugins",
                           "pluginConfig"})


class ConfigError(InputError):
    """An invalid scheduler configuration; the message names the field."""


def _error(path: str, type_: ErrorType, value: Any = None, detail: str = "",
           show: bool = True) -> ConfigError:
    err = (FieldError(path=path, type=type_, value=value, detail=detail) if show
           else FieldError(path=path, type=type_, detail=detail))
    return ConfigError(str(err))


@dataclass(frozen=True, slots=True)
class PluginRef:
    name: str
    weight: int = 0  # 0: not set


@dataclass(frozen=True, slots=True)
class PluginSet:
    enabled: tuple[PluginRef, ...] = ()
    disabled: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ProfileConfig:
    """One profile as written (before merging with the defaults). ``path`` is where
    it sits in the document, for error messages."""

    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    plugins: Mapping[str, PluginSet] = field(default_factory=dict)
    plugin_args: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    args_index: Mapping[str, int] = field(default_factory=dict)
    percentage_of_nodes_to_score: int | None = None
    path: str = "profiles[0]"


@dataclass(frozen=True, slots=True)
class SchedulerConfig:
    profiles: tuple[ProfileConfig, ...] = (ProfileConfig(),)
    percentage_of_nodes_to_score: int | None = None
    # The scheduling queue's back-off after a failed attempt (upstream's defaults).
    pod_initial_backoff_seconds: int = 1
    pod_max_backoff_seconds: int = 10


def default_plugins(features: FeatureGates) -> tuple[PluginRef, ...]:
    """The default profile's multiPoint list, in upstream order, with its weights.
    DynamicResources is included when its feature gate is on, GangScheduling when
    GenericWorkload is."""
    plugins = [
        PluginRef("SchedulingGates"), PluginRef("PrioritySort"),
        PluginRef("NodeUnschedulable"), PluginRef("NodeName"),
        PluginRef("TaintToleration", 3), PluginRef("NodeAffinity", 2),
        PluginRef("NodePorts"), PluginRef("NodeResourcesFit", 1),
        PluginRef("VolumeRestrictions"), PluginRef("NodeVolumeLimits"),
        PluginRef("VolumeBinding"), PluginRef("VolumeZone"),
        # Weight 2 (v1.36.2 default_plugins.go getDefaultPlugins).
        PluginRef("PodTopologySpread", 2), PluginRef("InterPodAffinity", 2),
    ]
    if features.is_enabled(Gate.DYNAMIC_RESOURCE_ALLOCATION):
        # Before DefaultPreemption: deallocating an idle claim beats evicting a pod.
        # Weight 2 (v1.36.2 pkg/scheduler/apis/config/v1/default_plugins.go,
        # applyDynamicResources): its prioritized-list Score counts double.
        plugins.append(PluginRef(DYNAMIC_RESOURCES, 2))
    plugins += [PluginRef("DefaultPreemption"), PluginRef("NodeResourcesBalancedAllocation", 1),
                PluginRef("ImageLocality", 1)]
    if features.is_enabled(Gate.GENERIC_WORKLOAD):
        # Gang scheduling of PodGroups is part of the Workload API's gate.
        plugins.append(PluginRef("GangScheduling"))
    plugins.append(PluginRef("DefaultBinder"))
    return tuple(plugins)


# --- parsing ------------------------------------------------------------------------

def _percentage(value: Any, path: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise _error(path, ErrorType.TYPE_INVALID, value, "must be an integer")
    if not 0 <= value <= 100:
        raise _error(path, ErrorType.INVALID, value, "not in valid range [0-100]")
    return value


def _as_list(value: Any, path: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _error(path, ErrorType.TYPE_INVALID, value, "must be a list")
    return value


def _as_map(value: Any, path: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _error(path, ErrorType.TYPE_INVALID, value, "must be an object")
    return value


def _name(entry: Mapping[str, Any], path: str) -> str:
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise _error(f"{path}.name", ErrorType.REQUIRED, show=False)
    return name


def _plugin_set(raw: Any, path: str) -> PluginSet:
    data = _as_map(raw, path)
    for key in data:
        if key not in ("enabled", "disabled"):
            raise ConfigError(f"{path}.{key}: unknown field")
    enabled: list[PluginRef] = []
    for i, item in enumerate(_as_list(data.get("enabled"), f"{path}.enabled")):
        item_path = f"{path}.enabled[{i}]"
        entry = _as_map(item, item_path)
        weight = entry.get("weight", 0)
        if weight is None:
            weight = 0
        if isinstance(weight, bool) or not isinstance(weight, int):
            raise _error(f"{item_path}.weight", ErrorType.TYPE_INVALID, weight,
                         "must be an integer")
        if weight < 0 or weight > MAX_WEIGHT:
            raise _error(f"{item_path}.weight", ErrorType.INVALID, weight,
                         f"not in valid range [0, {MAX_WEIGHT}]")
        enabled.append(PluginRef(_name(entry, item_path), weight))
    disabled = [_name(_as_map(item, f"{path}.disabled[{i}]"), f"{path}.disabled[{i}]")
                for i, item in enumerate(_as_list(data.get("disabled"), f"{path}.disabled"))]
    return PluginSet(tuple(enabled), tuple(disabled))


def _profile(raw: Any, path: str, only: bool) -> ProfileConfig:
    data = _as_map(raw, path)
    for key in data:
        if key not in _PROFILE_KEYS:
            raise ConfigError(f"{path}.{key}: unknown field")
    name = data.get("schedulerName")
    if name is None and only:
        name = DEFAULT_SCHEDULER_NAME
    if not isinstance(name, str) or not name:
        raise _error(f"{path}.schedulerName", ErrorType.REQUIRED, show=False)
    plugins_raw = _as_map(data.get("plugins"), f"{path}.plugins")
    plugins: dict[str, PluginSet] = {}
    for key, value in plugins_raw.items():
        if key not in POINT_KEYS:
            raise ConfigError(f"{path}.plugins.{key}: unknown field")
        plugins[key] = _plugin_set(value, f"{path}.plugins.{key}")
    args: dict[str, Mapping[str, Any]] = {}
    index: dict[str, int] = {}
    for i, item in enumerate(_as_list(data.get("pluginConfig"), f"{path}.pluginConfig")):
        item_path = f"{path}.pluginConfig[{i}]"
        entry = _as_map(item, item_path)
        plugin = _name(entry, item_path)
        if plugin in args:
            raise _error(f"{item_path}.name", ErrorType.DUPLICATE, plugin)
        args[plugin] = _as_map(entry.get("args"), f"{item_path}.args")
        index[plugin] = i
    return ProfileConfig(name, plugins, args, index,
                         _percentage(data.get("percentageOfNodesToScore"),
                                     f"{path}.percentageOfNodesToScore"), path)


def parse_config(data: Mapping[str, Any] | None) -> SchedulerConfig:
    """Check a KubeSchedulerConfiguration document; None gives the default profile."""
    if data is None:
        return SchedulerConfig()
    if not isinstance(data, Mapping):
        raise ConfigError("<document>: a scheduler configuration must be a mapping")
    api_version = data.get("apiVersion")
    if api_version != API_VERSION:
        raise _error("apiVersion", ErrorType.NOT_SUPPORTED, api_version,
                     f'supported values: "{API_VERSION}"')
    if data.get("kind") != KIND:
        raise _error("kind", ErrorType.NOT_SUPPORTED, data.get("kind"),
                     f'supported values: "{KIND}"')
    for key in data:
        if key not in _TOP_LEVEL:
            raise ConfigError(f"{key}: unknown field")
    if _as_list(data.get("extenders"), "extenders"):
        raise _error("extenders", ErrorType.FORBIDDEN, show=False,
                     detail="scheduler extenders are not supported by dralab")
    raw_profiles = _as_list(data.get("profiles"), "profiles") or [{}]
    profiles = [_profile(p, f"profiles[{i}]", len(raw_profiles) == 1)
                for i, p in enumerate(raw_profiles)]
    seen: set[str] = set()
    for profile in profiles:
        if profile.scheduler_name in seen:
            raise _error(f"{profile.path}.schedulerName", ErrorType.DUPLICATE,
                         profile.scheduler_name)
        seen.add(profile.scheduler_name)
    initial, longest = _backoff(data)
    return SchedulerConfig(tuple(profiles), _percentage(data.get("percentageOfNodesToScore"),
                                                        "percentageOfNodesToScore"),
                           initial, longest)


def _seconds(value: Any, path: str, default: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise _error(path, ErrorType.TYPE_INVALID, value, "must be an integer")
    return value


def _backoff(data: Mapping[str, Any]) -> tuple[int, int]:
    """podInitialBackoffSeconds (default 1) and podMaxBackoffSeconds (default 10), checked
    as kube-scheduler's ValidateKubeSchedulerConfiguration checks them."""
    initial = _seconds(data.get("podInitialBackoffSeconds"), "podInitialBackoffSeconds", 1)
    longest = _seconds(data.get("podMaxBackoffSeconds"), "podMaxBackoffSeconds", 10)
    if initial <= 0:
        raise _error("podInitialBackoffSeconds", ErrorType.INVALID, initial,
                     "must be greater than 0")
    if longest < initial:
        raise _error("podMaxBackoffSeconds", ErrorType.INVALID, longest,
                     "must be greater than or equal to PodInitialBackoffSeconds")
    return initial, longest


# --- merging and building -----------------------------------------------------------

def _merge_set(default: PluginSet, custom: PluginSet | None) -> PluginSet:
    """Upstream's mergePluginSet: custom entries replace defaults in place, the rest of
    the custom entries follow, disabled ones (or all with "*") are dropped."""
    if custom is None:
        return default
    disabled = set(custom.disabled) | set(default.disabled)
    custom_by_name = {p.name: (i, p) for i, p in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[PluginRef] = []
    if "*" not in disabled:
        for plugin in default.enabled:
            if plugin.name in disabled:
                continue
            hit = custom_by_name.get(plugin.name)
            if hit is not None:
                replaced.add(hit[0])
                plugin = hit[1]
            enabled.append(plugin)
    enabled += [p for i, p in enumerate(custom.enabled) if i not in replaced]
    return PluginSet(tuple(enabled), tuple(custom.disabled) + tuple(default.disabled))


@dataclass(slots=True)
class _Resolved:
    points: dict[str, list[str]]
    weights: dict[str, int]
    warnings: list[str]


def _where(profile: ProfileConfig, point: str, plugins: PluginSet, name: str) -> str:
    for i, ref in enumerate(plugins.enabled):
        if ref.name == name:
            return f"{profile.path}.plugins.{point}.enabled[{i}].name"
    return f"{profile.path}.plugins.{point}"


def _resolve(profile: ProfileConfig, defaults: Sequence[PluginRef],
             instances: Mapping[str, Plugin], custom_points: Mapping[str, PluginSet]
             ) -> _Resolved:
    merged = {key: _merge_set(PluginSet(tuple(defaults)) if key == MULTI_POINT else PluginSet(),
                              custom_points.get(key))
              for key in POINT_KEYS}
    points: dict[str, list[str]] = {}
    for point in EXTENSION_POINTS:
        plugin_set = merged[point]
        specific: list[str] = []
        for ref in plugin_set.enabled:
            if ref.name not in instances:
                continue  # unmodelled upstream plugin, already warned about
            if not implements(instances[ref.name], point):
                raise _error(_where(profile, point, plugin_set, ref.name), ErrorType.INVALID,
                             ref.name, f"plugin does not extend {point}")
            if ref.name in specific:
                raise _error(_where(profile, point, plugin_set, ref.name), ErrorType.DUPLICATE,
                             ref.name)
            specific.append(ref.name)
        disabled = set(plugin_set.disabled)
        if "*" in disabled:
            points[point] = specific
            continue
        overrides: list[str] = []
        multi: list[str] = []
        for ref in merged[MULTI_POINT].enabled:
            plugin = instances.get(ref.name)
            if plugin is None or not implements(plugin, point) or ref.name in disabled:
                continue
            if ref.name in specific:
                overrides.append(ref.name)
                continue
            if ref.name in multi:
                raise _error(_where(profile, MULTI_POINT, merged[MULTI_POINT], ref.name),
                             ErrorType.DUPLICATE, ref.name)
            multi.append(ref.name)
        ordered = [n for n in specific if n in overrides] + multi + \
            [n for n in specific if n not in overrides]
        points[point] = ordered
    weights: dict[str, int] = {}
    for ref in (*merged["score"].enabled, *merged[MULTI_POINT].enabled):
        if ref.name in instances and ref.name not in weights \
                and implements(instances[ref.name], "score"):
            weights[ref.name] = ref.weight or 1
    return _Resolved(points, weights, [])


def _needed(defaults: Sequence[PluginRef], custom: Mapping[str, PluginSet]) -> list[tuple[str,
                                                                                          str]]:
    """(plugin, path of its first mention) for every plugin enabled anywhere."""
    out: dict[str, str] = {}
    for ref in defaults:
        out.setdefault(ref.name, "")
    for point in POINT_KEYS:
        plugin_set = custom.get(point)
        if plugin_set is None:
            continue
        disabled = set(plugin_set.disabled)
        if point == MULTI_POINT and ("*" in disabled):
            for ref in defaults:
                if out.get(ref.name) == "":
                    out.pop(ref.name, None)
        elif point == MULTI_POINT:
            for name in disabled:
                if out.get(name) == "":
                    out.pop(name, None)
        for i, ref in enumerate(plugin_set.enabled):
            out.setdefault(ref.name, f"plugins.{point}.enabled[{i}].name")
    return list(out.items())


def build_framework(profile: ProfileConfig, cluster: ClusterState, rng: random.Random,
                    registry: Registry | None = None,
                    percentage_of_nodes_to_score: int | None = None,
                    warnings: list[str] | None = None) -> Framework:
    """Instantiate and order one profile's plugins. ConfigError on any problem."""
    registry = registry if registry is not None else default_registry()
    defaults = default_plugins(cluster.features)
    handle = Handle(cluster, cluster.features, rng, profile.scheduler_name)
    instances: dict[str, Plugin] = {}
    for name, mention in _needed(defaults, profile.plugins):
        factory = registry.get(name)
        if factory is None:
            if name in UNMODELLED_PLUGINS:
                if warnings is not None:
                    warnings.append(f"{profile.path}: plugin {name} is not modelled; ignored")
                continue
            path = f"{profile.path}.{mention}" if mention else f"{profile.path}.plugins"
            raise _error(path, ErrorType.INVALID, name, "plugin does not exist")
        args = profile.plugin_args.get(name, {})
        fields = _ARGS_FIELDS.get(name)
        if fields is not None and (unknown := sorted(set(args) - fields)):
            index = profile.args_index.get(name)
            raise ConfigError(f"{profile.path}.pluginConfig[{index}].args.{unknown[0]}: "
                              "unknown field")
        try:
            instances[name] = factory(args, handle)
        except PluginArgsError as exc:
            index = profile.args_index.get(name)
            base = (f"{profile.path}.pluginConfig[{index}].args" if index is not None
                    else f"{profile.path}.pluginConfig")
            field_path = f"{base}.{exc.field}" if exc.field else base
            raise ConfigError(f"{field_path}: {exc.detail}") from None
        except (InputError, ValueError) as exc:
            raise ConfigError(f"{profile.path}: plugin {name}: {exc}") from None
    resolved = _resolve(profile, defaults, instances, profile.plugins)
    sorts = resolved.points["queueSort"]
    if not sorts:
        raise _error(f"{profile.path}.plugins.queueSort", ErrorType.REQUIRED, show=False,
                     detail="no queue sort plugin is enabled")
    if len(sorts) > 1:
        raise _error(f"{profile.path}.plugins.queueSort", ErrorType.INVALID,
                     sorts, "only one queue sort plugin can be enabled")
    if not resolved.points["bind"]:
        raise _error(f"{profile.path}.plugins.bind", ErrorType.REQUIRED, show=False,
                     detail="at least one bind plugin is needed")
    used = {n for names in resolved.points.values() for n in names}
    framework = Framework(
        profile.scheduler_name, {n: p for n, p in instances.items() if n in used},
        resolved.points, resolved.weights,
        profile.percentage_of_nodes_to_score
        if profile.percentage_of_nodes_to_score is not None else percentage_of_nodes_to_score)
    framework.cluster = cluster
    handle.bind(framework)
    return framework


def build_frameworks(config: SchedulerConfig, cluster: ClusterState, rng: random.Random,
                     registry: Registry | None = None,
                     warnings: list[str] | None = None) -> dict[str, Framework]:
    """One Framework per profile, by schedulerName. All profiles must share the queue
    sort plugin (one queue serves them all)."""
    registry = registry if registry is not None else default_registry()
    frameworks: dict[str, Framework] = {}
    first_sort: tuple[str, Any] | None = None
    for profile in config.profiles:
        framework = build_framework(profile, cluster, rng, registry,
                                    config.percentage_of_nodes_to_score, warnings)
        sort = framework.points["queueSort"][0]
        signature = (sort, dict(profile.plugin_args.get(sort, {})))
        if first_sort is None:
            first_sort = signature
        elif signature != first_sort:
            raise _error(f"{profile.path}.plugins.queueSort", ErrorType.INVALID, sort,
                         "queueSort must be the same for all profiles")
        frameworks[profile.scheduler_name] = framework
    return frameworks
