"""Who owns what in a cluster snapshot: controller references, label selectors and
the pod states controllers count.

A controller owns an object of its namespace when the object's controller
reference (the ``ownerReferences`` entry with ``controller: true``) names it, by
UID when both sides have one, else by kind and name; an owned object whose labels
no longer match the controller's selector is released. An object without a
controller reference is adopted when the selector matches (upstream's
ControllerRefManager). A ``None`` selector adopts nothing and keeps everything
the reference names; an empty selector ``{}`` matches every object.

The readers at the bottom take fields from raw documents (status, strategy, ...)
that no validator has looked at, so they never trust a type: anything unexpected
reads as "absent".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from dralab.api.base import KubeObject, OwnerReference
from dralab.api.core import Pod

__all__ = [
    "TERMINAL_PHASES",
    "controller_ref",
    "is_active",
    "is_being_deleted",
    "is_terminal",
    "owns",
    "raw_field",
    "raw_int",
    "raw_map",
    "raw_str",
    "selector_matches",
    "stateful_ordinal",
]

TERMINAL_PHASES = ("Succeeded", "Failed")
_ORDINAL = re.compile(r"^(.*)-([0-9]+)$")


def selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """A metav1.LabelSelector against labels. ``None`` matches nothing; unreadable
    parts (already reported by validation) match nothing either."""
    if selector is None or not isinstance(selector, Mapping):
        return False
    match_labels = selector.get("matchLabels")
    if match_labels is not None:
        if not isinstance(match_labels, Mapping):
            return False
        if any(labels.get(k) != v for k, v in match_labels.items()):
            return False
    expressions = selector.get("matchExpressions")
    if expressions is None:
        return True
    if not isinstance(expressions, list):
        return False
    for expr in expressions:
        if not isinstance(expr, Mapping):
            return False
        key, operator, values = expr.get("key"), expr.get("operator"), expr.get("values")
        if not isinstance(key, str):
            return False
        choices = values if isinstance(values, list) else []
        present = key in labels
        if operator == "In":
            ok = present and labels[key] in choices
        elif operator == "NotIn":
            ok = not present or labels[key] not in choices
        elif operator == "Exists":
            ok = present
        elif operator == "DoesNotExist":
            ok = not present
        else:
            return False
        if not ok:
            return False
    return True


def controller_ref(obj: KubeObject) -> OwnerReference | None:
    """The ``ownerReferences`` entry with ``controller: true``, if any."""
    return next((r for r in obj.metadata.owner_references if r.controller), None)


def _names(ref: OwnerReference, kind: str, name: str, uid: str | None) -> bool:
    if ref.kind != kind:
        return False
    if ref.uid and uid:
        return ref.uid == uid
    return ref.name == name


def owns(kind: str, name: str, uid: str | None, namespace: str,
         selector: Mapping[str, Any] | None, obj: KubeObject, *, adopt: bool = True) -> bool:
    """Whether the controller ``kind``/``name`` (``uid`` as given in the input, or
    None) in ``namespace`` owns ``obj`` (see the module docstring). Objects being
    deleted are never adopted."""
    if (obj.metadata.namespace or "default") != namespace:
        return False
    labels = obj.metadata.labels
    ref = controller_ref(obj)
    if ref is not None:
        if not _names(ref, kind, name, uid):
            return False
        return selector is None or selector_matches(selector, labels)
    return adopt and not is_being_deleted(obj) and selector_matches(selector, labels)


def is_being_deleted(obj: KubeObject) -> bool:
    return obj.metadata.deletion_timestamp is not None


def is_terminal(pod: Pod) -> bool:
    """Succeeded or Failed: the pod holds no resources and will not run again."""
    return pod.status.phase in TERMINAL_PHASES


def is_active(pod: Pod) -> bool:
    """What controllers count as a running replica (upstream's FilterActivePods)."""
    return not is_terminal(pod) and not is_being_deleted(pod)


def stateful_ordinal(set_name: str, pod_name: str) -> int | None:
    """The ordinal of pod ``<set>-<n>`` of StatefulSet ``set_name``, else None."""
    match = _ORDINAL.match(pod_name)
    if match is None or match.group(1) != set_name:
        return None
    return int(match.group(2))


# --- tolerant readers of raw documents -----------------------------------------------

def raw_field(obj: KubeObject | Mapping[str, Any] | None, *path: str) -> Any:
    """The value at ``path`` in the object's raw document (or a plain mapping), or None."""
    value: Any = obj.raw if isinstance(obj, KubeObject) else obj
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def raw_int(obj: KubeObject | Mapping[str, Any] | None, *path: str) -> int | None:
    value = raw_field(obj, *path)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def raw_str(obj: KubeObject | Mapping[str, Any] | None, *path: str) -> str | None:
    value = raw_field(obj, *path)
    return value if isinstance(value, str) else None


def raw_map(obj: KubeObject | Mapping[str, Any] | None, *path: str) -> Mapping[str, Any] | None:
    value = raw_field(obj, *path)
    return value if isinstance(value, Mapping) else None
