"""Shared by the ported tables of KAI's scheduling plugins (test_plugin_*.py).

Upstream's plugin tests build a NodeInfo with its numbers set directly (allocatable,
idle, the memory of every GPU, the memory used on a shared GPU); ``usage`` builds the
same books as a :class:`NodeUsage` (what ``placement`` scores), and ``only`` the
session's plugins when exactly the plugin under test is on, as the tests open it alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from dralab.queueing.kai.model import KaiConfig, KaiNode, KaiPlugin
from dralab.queueing.kai.placement import GroupUsage, NodeUsage
from dralab.queueing.kai.plugins.config import KaiPluginSet, plugin_set

REPO = "NVIDIA/KAI-Scheduler"
COMMIT = "72de64fc8eca10fa8cca26a20156178f3edbe092"
PLUGINS = "pkg/scheduler/plugins"


@dataclass(frozen=True)
class Cite:
    """Where an upstream case is: file (under pkg/scheduler/plugins), function (the Go
    test function or the Ginkgo Describe/It path) and case (name or index), with the
    line."""

    file: str
    function: str
    case: str
    line: int

    def __str__(self) -> str:
        return f"{REPO}@{COMMIT} {PLUGINS}/{self.file}:{self.line} {self.function} / {self.case}"


def only(name: str, arguments: Mapping[str, str] | None = None) -> KaiPluginSet:
    return plugin_set(KaiConfig(plugins=(KaiPlugin(name, dict(arguments or {})),)))


def usage(name: str, *, gpus: int = 0, idle_gpus: float | None = None, cpu_milli: float = 0.0,
          idle_cpu_milli: float | None = None, labels: Mapping[str, str] | None = None,
          mig: Mapping[str, int] | None = None, gpu_memory: int | None = None,
          shared_used: Mapping[str, int] | None = None) -> NodeUsage:
    """A node with ``gpus`` / ``cpu_milli`` allocatable and the given idle amounts
    (what pods take is the difference), ``gpu_memory`` the memory of every GPU as the
    NodeInfo holds it (not floored: upstream sets the field), ``shared_used`` the memory
    used on each shared GPU."""
    node = KaiNode(name=name, gpus=gpus, cpu_milli=cpu_milli, labels=dict(labels or {}),
                   mig_instances=dict(mig or {}))
    out = NodeUsage.of(node)
    if gpu_memory is not None:
        out.gpu_memory = gpu_memory
    if idle_gpus is not None:
        out.taken["gpu"] = gpus - idle_gpus
    if idle_cpu_milli is not None:
        out.taken["cpu"] = cpu_milli - idle_cpu_milli
    for group, used in (shared_used or {}).items():
        out.groups[group] = GroupUsage(allocated=used)
    return out
