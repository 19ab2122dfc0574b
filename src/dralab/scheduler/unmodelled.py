"""Pod fields that kube-scheduler's default profile acts on and dralab does not model.

A pending pod may ask for something a default plugin dralab leaves out would
check. Since the volume plugins (VolumeBinding, VolumeRestrictions, VolumeZone,
NodeVolumeLimits) are modelled, no field of the default profile is left; the list stays
for the next one. dralab schedules such a pod without that plugin, so where the real
scheduler would refuse or prefer a node the answer may differ; the run says so, once
per field, with a count and the first pod, instead of ignoring the field silently.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from dralab.api.core import Pod
from dralab.api.keys import key_of

__all__ = ["unmodelled_field_warnings"]


def _spec(pod: Pod) -> dict[str, Any]:
    raw = pod.raw if isinstance(pod.raw, dict) else {}
    spec = raw.get("spec")
    return spec if isinstance(spec, dict) else {}


# (field path as written in the message, the plugin that acts on it, test)
_FIELDS: tuple[tuple[str, str, Callable[[Pod], bool]], ...] = ()


def unmodelled_field_warnings(pods: Iterable[Pod]) -> list[str]:
    """One line per unmodelled field that some of ``pods`` set: how many do, the
    first of them, and the plugin kube-scheduler would run on it."""
    found: dict[str, list[str]] = {}
    for pod in pods:
        for path, _, test in _FIELDS:
            if test(pod):
                found.setdefault(path, []).append(key_of(pod))
    lines = []
    for path, plugin, _ in _FIELDS:
        keys = found.get(path)
        if keys:
            lines.append(f"{len(keys)} pending pod(s) set {path} (first: {keys[0]}): "
                         f"{plugin} is not modelled by dralab; their placement ignores it")
    return lines
