"""The scheduler ConfigMap KAI's operator writes for a shard, read as the scheduler reads it.

KAI's operator renders each SchedulingShard into a ConfigMap named
``<schedulerName>-<shard>`` (``kai-scheduler-default`` by default) whose ``config.yaml``
is the scheduler's ``conf.SchedulerConfiguration``: ``actions`` (a comma-separated
string, run in that order) and ``tiers`` of plugins with string arguments. The
scheduler reads that file (``conf_util.ResolveConfigurationFromFile``): empty actions or
tiers fall back to its defaults, and an action it does not know fails the load. A
snapshot of a live cluster has both the shard and its ConfigMap; the ConfigMap is what
runs, so it wins when present.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from dralab.api.base import KubeObject

from .model import KaiPlugin
from .objects import SchedulingShard
from .validate import ACTIONS

__all__ = ["CONFIG_KEY", "SchedulerConf", "config_map_name", "read_scheduler_conf",
           "shard_plugins"]

# schedulingshard_types.go defaultPluginPriorities (higher runs first)
_PLUGIN_PRIORITIES: Mapping[str, int] = {
    "predicates": 1900, "proportion": 1800, "priority": 1700, "nodeavailability": 1600,
    "resourcetype": 1500, "podaffinity": 1400, "elastic": 1300, "kubeflow": 1200,
    "ray": 1100, "subgrouporder": 1000, "taskorder": 900, "nominatednode": 800,
    "dynamicresources": 700, "minruntime": 600, "topology": 500, "snapshot": 400,
    "gpupack": 300, "gpuspread": 300, "nodeplacement": 200, "gpusharingorder": 100}

CONFIG_KEY = "config.yaml"
_PATH = "data.config.yaml"


@dataclass(frozen=True, slots=True)
class SchedulerConf:
    """What a session takes from the ConfigMap: actions in order (None: the
    defaults), the tiers' plugins in order with their arguments (None: the defaults)."""

    actions: tuple[str, ...] | None
    plugins: tuple[tuple[str, Mapping[str, str]], ...] | None


def config_map_name(scheduler_name: str, shard: str) -> str:
    # pkg/operator/operands/scheduler/resources_for_shard.go configMapName
    return f"{scheduler_name}-{shard}"


def _data(obj: KubeObject) -> Mapping[str, Any]:
    data = (obj.raw or {}).get("data")
    return data if isinstance(data, dict) else {}


def is_scheduler_config_map(obj: KubeObject, name: str) -> bool:
    return obj.kind == "ConfigMap" and obj.api_version == "v1" \
        and obj.metadata.name == name and CONFIG_KEY in _data(obj)


def _plugins(tiers: Any) -> tuple[tuple[tuple[str, Mapping[str, str]], ...] | None, str]:
    if tiers is None or tiers == []:
        return None, ""
    if not isinstance(tiers, list):
        return None, "tiers: a list of tiers"
    out: list[tuple[str, Mapping[str, str]]] = []
    for ti, tier in enumerate(tiers):
        plugins = tier.get("plugins") if isinstance(tier, dict) else None
        if not isinstance(plugins, list):
            return None, f"tiers[{ti}].plugins: a list of plugins"
        for pi, plugin in enumerate(plugins):
            where = f"tiers[{ti}].plugins[{pi}]"
            if not isinstance(plugin, dict) or not isinstance(plugin.get("name"), str):
                return None, f"{where}.name: a plugin's name (a string)"
            arguments = plugin.get("arguments") or {}
            if not isinstance(arguments, dict) or not all(
                    isinstance(v, str) for v in arguments.values()):
                return None, f"{where}.arguments: a map of strings"
            out.append((plugin["name"], {str(k): v for k, v in arguments.items()}))
    return tuple(out), ""


def read_scheduler_conf(obj: KubeObject) -> tuple[SchedulerConf | None, tuple[str, str] | None]:
    """The ConfigMap's configuration, or the problem (field path, message) that makes
    KAI's scheduler fail to load it."""
    text = _data(obj).get(CONFIG_KEY)
    if not isinstance(text, str):
        return None, (_PATH, "a string holding the scheduler's configuration")
    try:
        parsed = yaml.safe_load(text) if text.strip() else {}
    except yaml.YAMLError as exc:
        return None, (_PATH, f"error converting YAML: {' '.join(str(exc).split())}")
    if not isinstance(parsed, dict):
        return None, (_PATH, "a mapping (actions, tiers)")
    actions_text = parsed.get("actions")
    actions: tuple[str, ...] | None = None
    if actions_text not in (None, ""):
        if not isinstance(actions_text, str):
            return None, (f"{_PATH}: actions", "a comma-separated string")
        actions = tuple(a.strip() for a in actions_text.split(","))
        unknown = next((a for a in actions if a not in ACTIONS), None)
        if unknown is not None:
            # conf_util.GetActionsFromConfig
            return None, (f"{_PATH}: actions",
                          f"failed to find Action {unknown} as given in the config, ignore it")
    plugins, problem = _plugins(parsed.get("tiers"))
    if problem:
        path, _, message = problem.partition(": ")
        return None, (f"{_PATH}: {path}", message)
    return SchedulerConf(actions, plugins), None


def shard_plugins(shard: SchedulingShard | None) -> tuple[KaiPlugin, ...] | None:
    """The tiers the operator writes for a shard that overrides plugins or sets
    ``minRuntime`` (setDefaultPlugins, then resolvePlugins: enabled ones, higher priority
    first, ties by name); None when it does neither (the session's default set then,
    which is the same set without the minruntime plugin's default runtimes)."""
    if shard is None or not (shard.spec.plugins or shard.spec.min_runtime):
        return None
    spec = shard.spec
    placement = spec.placement_strategy
    gpu = (placement.gpu if placement is not None else None) or "binpack"
    cpu = (placement.cpu if placement is not None else None) or "binpack"
    binpack = gpu == "binpack"
    table: dict[str, tuple[bool, int, dict[str, str]]] = {
        name: (binpack if name in ("gpupack", "gpusharingorder")
               else not binpack if name == "gpuspread" else True, priority, {})
        for name, priority in _PLUGIN_PRIORITIES.items()}
    if spec.k_value is not None:
        table["proportion"][2]["kValue"] = format(spec.k_value, "g")
    if spec.min_runtime is not None:
        if spec.min_runtime.preempt_min_runtime is not None:
            table["minruntime"][2]["defaultPreemptMinRuntime"] = \
                spec.min_runtime.preempt_min_runtime
        if spec.min_runtime.reclaim_min_runtime is not None:
            table["minruntime"][2]["defaultReclaimMinRuntime"] = \
                spec.min_runtime.reclaim_min_runtime
    table["nodeplacement"][2].update({"gpu": gpu, "cpu": cpu})
    for name, override in spec.plugins.items():
        enabled, priority, arguments = table.get(name, (True, 0, {}))
        table[name] = (enabled if override.enabled is None else override.enabled,
                       priority if override.priority is None else override.priority,
                       arguments if override.arguments is None else dict(override.arguments))
    chosen = sorted((-priority, name) for name, (on, priority, _) in table.items() if on)
    return tuple(KaiPlugin(name, table[name][2]) for _, name in chosen)
