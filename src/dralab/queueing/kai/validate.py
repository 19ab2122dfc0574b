"""KAI's validation of its objects and of the pods it schedules, with field paths.

What the API server (the CRDs' schemas), KAI's webhooks (Queue, PodGroup, the pod
validator's gpusharing plugin) and KAI's operator refuse. Each problem is
``(field path, message)``; the caller names the file and object. Messages are KAI's
where KAI has one (quoted from its Go code at 72de64fc8eca10fa8cca26a20156178f3edbe092).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence

from dralab.api.base import KubeObject
from dralab.api.core import Pod
from dralab.api.durations import parse_go_duration

from .objects import (
    KaiPodGroup,
    KaiQueueObject,
    KaiSubGroupSpec,
    KaiTopology,
    SchedulingShard,
)
from .plugins.minruntime import parse_str2duration

__all__ = [
    "ACTIONS",
    "GPU_FRACTION",
    "GPU_FRACTION_NUM_DEVICES",
    "GPU_MEMORY",
    "KAI_SCHEDULER_NAME",
    "NVIDIA_GPU",
    "go_bool",
    "gpu_request_problems",
    "object_problems",
]

Problem = tuple[str, str]

KAI_SCHEDULER_NAME = "kai-scheduler"
NVIDIA_GPU = "nvidia.com/gpu"
GPU_FRACTION = "gpu-fraction"
GPU_MEMORY = "gpu-memory"
GPU_FRACTION_NUM_DEVICES = "gpu-fraction-num-devices"
_MPS = "mps"
# The actions KAI's scheduler knows (pkg/scheduler/actions), by the SchedulingShard's
# default priorities (higher runs first).
ACTIONS: Mapping[str, int] = {"allocate": 500, "consolidation": 400, "reclaim": 300,
                              "preempt": 200, "stalegangeviction": 100}
_STRATEGIES = ("binpack", "spread")
_PREEMPTIBILITY = ("preemptible", "non-preemptible")
_HOSTNAME = "kubernetes.io/hostname"
# The Topology CRD's nodeLabel pattern (a label key).
_LABEL_KEY = re.compile(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                        r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$")
_UINT = re.compile(r"^[0-9]+$")


def _duration(path: str, text: str | None) -> Iterator[Problem]:
    if text is None:
        return
    try:
        parse_go_duration(text)
    except ValueError:
        yield path, f'time: invalid duration "{text}"'


def _plugin_duration(path: str, text: str | None) -> Iterator[Problem]:
    if text is None:
        return
    try:
        parse_str2duration(text)
    except ValueError:
        yield path, f'time: invalid duration "{text}"'


def _unsupported(path: str, value: str, allowed: Sequence[str]) -> Problem:
    shown = ", ".join(f'"{a}"' for a in allowed)
    return path, f'Unsupported value: "{value}": supported values: {shown}'


def _queue(queue: KaiQueueObject) -> Iterator[Problem]:
    if queue.spec.resources is None:
        # pkg/apis/scheduling/v2/queue_webhook.go missingResourcesError
        yield "spec.resources", "resources must be specified"
    yield from _duration("spec.preemptMinRuntime", queue.spec.preempt_min_runtime)
    yield from _duration("spec.reclaimMinRuntime", queue.spec.reclaim_min_runtime)


def _min_member(path: str, value: int | None) -> Iterator[Problem]:
    if value is not None and value < 1:
        yield path, f"Invalid value: {value}: {path} in body should be greater than or equal to 1"


def _subgroups(groups: Sequence[KaiSubGroupSpec]) -> Iterator[Problem]:
    seen: dict[str, int] = {}
    for i, group in enumerate(groups):
        path = f"spec.subGroups[{i}]"
        if not group.name:
            yield f"{path}.name", "Required value"
        yield from _min_member(f"{path}.minMember", group.min_member)
        if group.name in seen:
            # the webhook's validateSubGroups
            yield f"{path}.name", f"duplicate subgroup name {group.name}"
        seen.setdefault(group.name, i)
    for i, group in enumerate(groups):
        if group.parent is not None and group.parent not in seen:
            yield f"spec.subGroups[{i}].parent", \
                f"parent {group.parent} of {group.name} was not found"
    parents = {g.name: g.parent for g in groups}
    for i, group in enumerate(groups):
        walked, at = set(), group.parent
        while at is not None and at not in walked:
            walked.add(at)
            if at == group.name:
                yield f"spec.subGroups[{i}].parent", "cycle detected in subgroups"
                break
            at = parents.get(at)
        else:
            continue
        break


def _pod_group(group: KaiPodGroup) -> Iterator[Problem]:
    spec = group.spec
    yield from _min_member("spec.minMember", spec.min_member)
    if spec.preemptibility is not None and spec.preemptibility not in _PREEMPTIBILITY:
        yield _unsupported("spec.preemptibility", spec.preemptibility, _PREEMPTIBILITY)
    yield from _subgroups(spec.sub_groups)


def _shard(shard: SchedulingShard) -> Iterator[Problem]:
    spec = shard.spec
    placement = spec.placement_strategy
    for field in ("gpu", "cpu"):
        value = getattr(placement, field) if placement is not None else None
        # KAI's nodeplacement plugin reads anything but "spread" as binpack; a typo
        # would silently pack, so dralab asks for one of the two words.
        if value is not None and value not in _STRATEGIES:
            yield _unsupported(f"spec.placementStrategy.{field}", value, _STRATEGIES)
    for name in spec.actions:
        if name not in ACTIONS:
            yield f"spec.actions.{name}", \
                f'unknown action "{name}": KAI\'s scheduler runs {", ".join(ACTIONS)}'
    enabled = enabled_actions(shard)
    for name in spec.queue_depth_per_action:
        if name not in enabled:
            # the operator's validateJobDepthMap
            yield f"spec.queueDepthPerAction.{name}", \
                f"queueDepthPerAction names {name}, which is not among the actions " \
                f"({', '.join(enabled)})"
    if spec.min_runtime is not None:
        # the operator copies them into the minruntime plugin's arguments, which parse
        # them with str2duration (Go's syntax plus days and weeks); KAI would log an
        # unparsable one and use 0s, dralab refuses it
        for field, text in (("preemptMinRuntime", spec.min_runtime.preempt_min_runtime),
                            ("reclaimMinRuntime", spec.min_runtime.reclaim_min_runtime)):
            yield from _plugin_duration(f"spec.minRuntime.{field}", text)
    yield from _args(spec.args)
    proportion = spec.plugins.get("proportion")
    k_value = (proportion.arguments or {}).get("kValue") if proportion is not None else None
    if k_value is not None:
        try:
            float(k_value)
        except ValueError:
            yield "spec.plugins.proportion.arguments.kValue", \
                f'strconv.ParseFloat: parsing "{k_value}": invalid syntax'


_GO_BOOLS = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True,
             "0": False, "f": False, "F": False, "FALSE": False, "false": False,
             "False": False}


def go_bool(text: str) -> bool | None:
    """strconv.ParseBool (how the scheduler's bool flags read): None when invalid."""
    return _GO_BOOLS.get(text)


def _args(args: Mapping[str, str]) -> Iterator[Problem]:
    """The scheduler flags dralab reads from ``spec.args`` (the rest run no session)."""
    value = args.get("max-consolidation-preemptees")
    if value is not None and not re.fullmatch(r"[+-]?[0-9]+", value):
        yield "spec.args.max-consolidation-preemptees", \
            f'invalid argument "{value}": strconv.ParseInt: parsing "{value}": invalid syntax'
    for flag in ("allow-consolidating-reclaim", "restrict-node-scheduling"):
        value = args.get(flag)
        if value is not None and go_bool(value) is None:
            yield f"spec.args.{flag}", (f'invalid argument "{value}": strconv.ParseBool: '
                                        f'parsing "{value}": invalid syntax')
    yield from _duration("spec.args.default-staleness-grace-period",
                         args.get("default-staleness-grace-period"))


def enabled_actions(shard: SchedulingShard | None) -> tuple[str, ...]:
    """The actions a session runs, in order, as the operator writes them for a shard
    (``setDefaultActions``: the five with their priorities, consolidation only when
    neither placement is spread; the shard's overrides; higher priority first, ties by
    name as the operator's sort leaves them)."""
    gpu = cpu = "binpack"
    overrides = {}
    if shard is not None:
        placement = shard.spec.placement_strategy
        if placement is not None:
            gpu, cpu = placement.gpu or "binpack", placement.cpu or "binpack"
        overrides = shard.spec.actions
    table: dict[str, tuple[bool, int]] = {
        name: (name != "consolidation" or (gpu != "spread" and cpu != "spread"), priority)
        for name, priority in ACTIONS.items()}
    for name, override in overrides.items():
        enabled, priority = table.get(name, (True, 0))
        if override.enabled is not None:
            enabled = override.enabled
        if override.priority is not None:
            priority = override.priority
        table[name] = (enabled, priority)
    chosen = [(-priority, name) for name, (enabled, priority) in table.items() if enabled]
    return tuple(name for _, name in sorted(chosen))


def _topology(topology: KaiTopology) -> Iterator[Problem]:
    levels = topology.spec.levels
    if not levels:
        yield "spec.levels", "Required value"
    if len(levels) > 16:
        yield "spec.levels", f"Too many: {len(levels)}: must have at most 16 items"
    labels = [level.node_label for level in levels]
    for i, label in enumerate(labels):
        path = f"spec.levels[{i}].nodeLabel"
        if not label:
            yield path, "Required value"
        elif len(label) > 316 or not _LABEL_KEY.match(label):
            yield path, f'Invalid value: "{label}": {path} in body should match ' \
                        f"'{_LABEL_KEY.pattern}'"
    if len(set(labels)) != len(labels):
        yield "spec.levels", "Invalid value: \"array\": must be unique"
    if _HOSTNAME in labels and labels[-1] != _HOSTNAME:
        yield "spec.levels", "Invalid value: \"array\": the kubernetes.io/hostname label " \
                             "can only be used at the lowest level of topology"


def object_problems(obj: KubeObject) -> list[Problem]:
    """What KAI (or the API server for its CRDs) refuses in one of KAI's objects."""
    if isinstance(obj, KaiQueueObject):
        return list(_queue(obj))
    if isinstance(obj, KaiPodGroup):
        return list(_pod_group(obj))
    if isinstance(obj, SchedulingShard):
        return list(_shard(obj))
    if isinstance(obj, KaiTopology):
        return list(_topology(obj))
    return []


def _has_gpu_limit(pod: Pod) -> bool:
    # getFirstGPULimit: limits only, of containers and init containers
    return any(NVIDIA_GPU in c.resources.limits
               for c in [*pod.spec.containers, *pod.spec.init_containers])


def gpu_request_problems(pod: Pod, gpu_sharing: bool,
                         scheduler_name: str = KAI_SCHEDULER_NAME) -> list[Problem]:
    """KAI's admission of a pod's GPU request (the gpusharing plugin's Validate: sharing
    must be enabled for a fraction, then binder's ValidateGpuRequests), first problem
    only, as the webhook returns one error. Pods of other schedulers than
    ``scheduler_name`` (Config spec.global.schedulerName) are not KAI's."""
    if pod.spec.scheduler_name != scheduler_name:
        return []
    annotations = pod.metadata.annotations
    fraction = annotations.get(GPU_FRACTION)
    memory = annotations.get(GPU_MEMORY)
    count = annotations.get(GPU_FRACTION_NUM_DEVICES)
    shared = fraction is not None or memory is not None
    whole = _has_gpu_limit(pod)
    at = "metadata.annotations"
    if shared and not gpu_sharing:
        return [(f"{at}.{GPU_FRACTION if fraction is not None else GPU_MEMORY}",
                 f"attempting to create a pod {pod.metadata.namespace or 'default'}/"
                 f"{pod.metadata.name} with gpu sharing request, while GPU sharing is "
                 f"disabled (kai.scheduler/v1 Config spec.admission.gpuSharing, "
                 f"false by default)")]
    if not shared and annotations.get(_MPS) == "true":
        return [(f"{at}.{_MPS}", "MPS is only supported with GPU fraction request")]
    if fraction is not None and whole:
        return [(f"{at}.{GPU_FRACTION}",
                 "cannot have both GPU fraction request and whole GPU resource request/limit")]
    if memory is not None and (fraction is not None or whole):
        return [(f"{at}.{GPU_MEMORY}", "cannot request both GPU and GPU memory")]
    if count is not None and not shared:
        return [(f"{at}.{GPU_FRACTION_NUM_DEVICES}",
                 "cannot request multiple fractional devices without specifying fraction "
                 "portion or gpu-memory")]
    if memory is not None and (not _UINT.match(memory) or int(memory) == 0
                               or int(memory) >= 2 ** 64):
        return [(f"{at}.{GPU_MEMORY}",
                 "gpu-memory annotation value must be a positive integer greater than 0")]
    if fraction is not None and not 0 < _go_float(fraction) < 1:
        return [(f"{at}.{GPU_FRACTION}",
                 "gpu-fraction annotation value must be a positive number smaller than 1.0")]
    if count is not None and (not _UINT.match(count) or int(count) == 0
                              or int(count) >= 2 ** 64):
        return [(f"{at}.{GPU_FRACTION_NUM_DEVICES}",
                 "fraction count annotation value must be a positive integer greater than 0")]
    return []


_GO_FLOAT = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def _go_float(text: str) -> float:
    """strconv.ParseFloat's value of ``text``; NaN (failing every comparison) when Go
    would not parse it. Go also reads hex floats, Inf and NaN; Inf and NaN fail KAI's
    range check either way, hex floats are not accepted here."""
    if not _GO_FLOAT.match(text):
        return float("nan")
    return float(text)
