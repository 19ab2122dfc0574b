"""The priority expander's configuration as Cluster Autoscaler reads it: the ConfigMap
``cluster-autoscaler-priority-expander`` whose ``data.priorities`` is YAML mapping an
integer priority to regular expressions on node group names
(expander/priority/priority.go: ``PriorityConfigMapName``, ``ConfigMapKey``,
``parsePrioritiesYAMLString``).

CA reloads the ConfigMap on every use and, when it is wrong, logs a warning and
filters nothing. A file given to dralab is read once: a wrong one is a one-line
input error (exit 2) with CA's words, since nobody is there to read the warning.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from dralab.api.errors import InputError
from dralab.api.io import Document

__all__ = ["PRIORITY_CONFIGMAP_KEY", "PRIORITY_CONFIGMAP_NAME", "is_priority_configmap",
           "parse_priorities", "read_priorities"]

PRIORITY_CONFIGMAP_NAME = "cluster-autoscaler-priority-expander"
PRIORITY_CONFIGMAP_KEY = "priorities"

Priorities = Mapping[int, tuple[str, ...]]


def is_priority_configmap(doc: Document) -> bool:
    """A v1 ConfigMap named as CA's priority expander's (any namespace: CA reads its own)."""
    data = doc.data
    if not isinstance(data, dict) or data.get("kind") != "ConfigMap" or \
            data.get("apiVersion") != "v1":
        return False
    meta = data.get("metadata")
    return isinstance(meta, dict) and meta.get("name") == PRIORITY_CONFIGMAP_NAME


def parse_priorities(text: object, where: str) -> Priorities:
    """``data.priorities`` as CA parses it; InputError naming ``where`` and the field."""
    field = f"{where}: data.{PRIORITY_CONFIGMAP_KEY}"
    if not isinstance(text, str):
        raise InputError(f"{field}: expected a string of YAML, not {type(text).__name__}")
    if text == "":
        raise InputError(f"{field}: priority configuration in {PRIORITY_CONFIGMAP_NAME} "
                         "configmap is empty; please provide valid configuration")
    try:
        config: Any = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"{field}: Can't parse YAML with priorities in the configmap: "
                         f"{first}") from None
    if config is None:
        return {}
    if not isinstance(config, dict):
        raise InputError(f"{field}: Can't parse YAML with priorities in the configmap: "
                         f"expected a map of integer priority to a list of regular "
                         f"expressions, not {type(config).__name__}")
    out: dict[int, tuple[str, ...]] = {}
    for key, rules in config.items():
        # Go's yaml decodes the keys into int: "10" and 10 both read, 1.5 or "a" do not.
        try:
            priority = int(key) if not isinstance(key, bool | float) else None
        except (TypeError, ValueError):
            priority = None
        if priority is None:
            raise InputError(f"{field}: Can't parse YAML with priorities in the configmap: "
                             f"priority {key!r} is not an integer")
        if rules is None:
            rules = []
        if not isinstance(rules, list) or not all(isinstance(r, str) for r in rules):
            raise InputError(f"{field}[{priority}]: Can't parse YAML with priorities in the "
                             f"configmap: expected a list of regular expressions")
        for rule in rules:
            try:
                re.compile(rule)
            except re.error as exc:
                raise InputError(f"{field}[{priority}]: Can't compile regexp rule for "
                                 f"priority {priority} and rule {rule}: {exc}") from None
        out[priority] = (*out.get(priority, ()), *rules)
    return out


def read_priorities(docs: Sequence[Document]) -> Priorities | None:
    """The priorities of the input's priority expander ConfigMap; None without one.
    A second one, or one without ``data.priorities``, is an InputError."""
    found = [d for d in docs if is_priority_configmap(d)]
    if not found:
        return None
    if len(found) > 1:
        raise InputError(f"{found[1].describe()}: a second {PRIORITY_CONFIGMAP_NAME} "
                         f"ConfigMap (the first is {found[0].describe()})")
    doc = found[0]
    data = doc.data.get("data") if isinstance(doc.data, dict) else None
    if not isinstance(data, dict) or PRIORITY_CONFIGMAP_KEY not in data:
        raise InputError(f"{doc.describe()}: data.{PRIORITY_CONFIGMAP_KEY}: Wrong configmap "
                         f"for priority expander, doesn't contain {PRIORITY_CONFIGMAP_KEY} "
                         "key")
    return parse_priorities(data[PRIORITY_CONFIGMAP_KEY], doc.describe())
