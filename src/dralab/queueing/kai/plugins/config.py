"""Which of KAI's plugins a session runs, with which arguments.

KAI's scheduler reads its plugins from the configuration's tiers; the operator writes
them from the SchedulingShard (pkg/apis/kai/v1/schedulingshard_types.go
setDefaultPlugins): every built-in plugin on, in priority order, except that the GPU
placement strategy picks gpupack + gpusharingorder (binpack) or gpuspread (spread), and
nodeplacement gets the shard's GPU and CPU strategies as arguments. A configuration
that names its own tiers replaces that set whole (conf_util.ResolveConfigurationFromFile
keeps the default tiers only when none are given), so a plugin it does not list is off.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from dralab.queueing.kai.model import KaiConfig, KaiPlugin

__all__ = [
    "BINPACK",
    "OPERATOR_PLUGIN_ORDER",
    "SPREAD",
    "KaiPluginSet",
    "operator_plugins",
    "plugin_set",
]

BINPACK = "binpack"
SPREAD = "spread"

# defaultPluginPriorities, highest first (gpupack and gpuspread share 300).
OPERATOR_PLUGIN_ORDER: tuple[str, ...] = (
    "predicates", "proportion", "priority", "nodeavailability", "resourcetype",
    "podaffinity", "elastic", "kubeflow", "ray", "subgrouporder", "taskorder",
    "nominatednode", "dynamicresources", "minruntime", "topology", "snapshot",
    "gpupack", "gpuspread", "nodeplacement", "gpusharingorder",
)


def operator_plugins(config: KaiConfig) -> tuple[KaiPlugin, ...]:
    """The tiers the operator writes for the shard's placement strategies and kValue."""
    binpack_gpu = config.gpu_placement != SPREAD
    out: list[KaiPlugin] = []
    for name in OPERATOR_PLUGIN_ORDER:
        if name in ("gpupack", "gpusharingorder") and not binpack_gpu:
            continue
        if name == "gpuspread" and binpack_gpu:
            continue
        arguments: dict[str, str] = {}
        if name == "nodeplacement":
            arguments = {"gpu": config.gpu_placement, "cpu": config.cpu_placement}
        out.append(KaiPlugin(name, arguments))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class KaiPluginSet:
    """The plugins on, by name, with their arguments (a name listed twice keeps its
    first arguments; KAI would open it twice, which no ported case does)."""

    arguments: Mapping[str, Mapping[str, str]]

    def on(self, name: str) -> bool:
        return name in self.arguments

    def args(self, name: str) -> Mapping[str, str]:
        return self.arguments.get(name, MappingProxyType({}))

    def node_strategy(self, resource: str) -> str | None:
        """nodeplacement's strategy for GPU ("gpu") or CPU-only ("cpu") tasks: its
        argument, binpack when the argument is absent (New() fills it), None when the
        plugin is off (no node-placement score at all)."""
        if not self.on("nodeplacement"):
            return None
        return SPREAD if self.args("nodeplacement").get(resource) == SPREAD else BINPACK


def plugin_set(config: KaiConfig) -> KaiPluginSet:
    plugins = config.plugins if config.plugins is not None else operator_plugins(config)
    arguments: dict[str, Mapping[str, str]] = {}
    for plugin in plugins:
        arguments.setdefault(plugin.name, MappingProxyType(dict(plugin.arguments)))
    return KaiPluginSet(MappingProxyType(arguments))
